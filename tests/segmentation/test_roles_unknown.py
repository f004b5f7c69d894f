"""The boundary model's second model for streams whose speaker roles are unknown."""

from __future__ import annotations

import numpy as np
import pytest

from episeg.config import CombinerConfig, EpisegConfig
from episeg.errors import ConfigError
from episeg.segmentation.features import (
    EpisodeContext,
    TurnView,
    boundary_features,
    feature_names,
)
from episeg.segmentation.learned import DEFAULT_WEIGHTS, BoundaryModel, LearnedPolicy
from episeg.segmentation.segmenter import Segmenter
from episeg.testing import MiniLMShaped
from episeg.types import Turn

NAMES = feature_names(0)
TOPICS = ["book a table for two", "a taxi to the station", "train to cambridge", "hotel parking"]


def unknown_roles_segmenter(threshold: float | None = None, **kw) -> Segmenter:
    combiner = CombinerConfig(kind="learned", roles_known=False, threshold=threshold)
    return Segmenter(config=EpisegConfig(combiner=combiner), embedder=MiniLMShaped(), **kw)


def model(bias: float, threshold: float, sub: BoundaryModel | None = None, **meta) -> BoundaryModel:
    rng = np.random.default_rng(int(abs(bias) * 10))
    return BoundaryModel(
        names=NAMES,
        weights=rng.normal(size=len(NAMES)),
        bias=bias,
        vectors={"turn": rng.normal(size=8), "agree": rng.normal(size=8)},
        lookahead=0,
        threshold=threshold,
        band=0.5,
        means=rng.normal(size=len(NAMES)),
        vector_means={"turn": np.zeros(8), "agree": np.zeros(8)},
        meta=meta,
        roles_unknown=sub,
    )


def both() -> BoundaryModel:
    sub = model(-1.0, -0.625, min_turns=1, adaptive={"g": 2.0, "floor": -1.625})
    return model(2.0, -0.25, sub, min_turns=2, adaptive={"g": 2.5, "floor": -1.25})


class TestModel:
    def test_save_load_round_trips_both_models(self, tmp_path):
        m = both()
        m.save(tmp_path / "w.npz")
        loaded = BoundaryModel.load(tmp_path / "w.npz")
        assert loaded.roles_unknown is not None and m.roles_unknown is not None
        for a, b in ((m, loaded), (m.roles_unknown, loaded.roles_unknown)):
            assert np.allclose(a.weights, b.weights) and a.bias == b.bias
            assert a.threshold == b.threshold and dict(a.meta) == dict(b.meta)
            assert all(np.allclose(a.vectors[k], b.vectors[k], atol=1e-6) for k in a.vectors)
        assert loaded.roles_unknown.roles_unknown is None

    def test_one_model_files_load_without_a_second(self, tmp_path):
        model(1.0, 0.0).save(tmp_path / "one.npz")
        one = BoundaryModel.load(tmp_path / "one.npz")
        assert one.roles_unknown is None and one.for_roles(False) is one

    def test_for_roles_and_ablation_reach_the_second_model(self):
        m = both()
        assert m.for_roles(True) is m and m.for_roles(False) is m.roles_unknown
        ablated = m.without(["turn-embedding", "d_prev1"])
        assert ablated.roles_unknown is not None
        assert set(ablated.roles_unknown.vectors) == {"agree"}
        assert ablated.roles_unknown.weights[NAMES.index("d_prev1")] == 0.0

    def test_a_second_model_cannot_nest_a_third(self, tmp_path):
        nested = model(0.0, 0.0, both())
        with pytest.raises(ConfigError, match="cannot nest"):
            nested.save(tmp_path / "bad.npz")


class TestPolicy:
    def test_roles_unknown_streams_use_the_second_models_settings(self):
        m = both()
        known, unknown = LearnedPolicy(m), LearnedPolicy(m, roles_known=False)
        assert (known.threshold, known.min_turns) == (-0.25, 2)
        assert (unknown.threshold, unknown.min_turns) == (-0.625, 1)
        assert known.adaptive is not None and unknown.adaptive is not None
        assert (known.adaptive.g, unknown.adaptive.g) == (2.5, 2.0)

    def test_the_logit_comes_from_the_second_model(self):
        m = both()
        rng = np.random.default_rng(3)
        ctx = EpisodeContext()
        ctx.commit(TurnView.make(rng.normal(size=8), "user", None, "book a table"))
        turn = TurnView.make(rng.normal(size=8), "user", None, "a taxi to the station")
        out_known = LearnedPolicy(m, min_turns=1).weigh([], ctx, [turn])
        out_unknown = LearnedPolicy(m, roles_known=False, min_turns=1).weigh([], ctx, [turn])
        assert f"threshold {-0.625:+.2f}" in out_unknown.reason
        sub = m.roles_unknown
        assert sub is not None
        x = boundary_features(ctx, [turn], lookahead=0, roles_known=False)
        assert out_unknown.evidence == pytest.approx(sub.logit(*x))
        assert out_known.evidence != pytest.approx(out_unknown.evidence)


class TestShippedWeights:
    def test_agent_weights_carry_a_roles_unknown_model(self):
        m = BoundaryModel.load(DEFAULT_WEIGHTS)
        sub = m.roles_unknown
        assert sub is not None and m.lookahead == 0 and sub.lookahead == 1  # the preset's
        assert sub.names == feature_names(1) and m.names == feature_names(0)
        assert sub.meta["roles_known"] is False and m.meta["roles_known"] is True
        assert sub.meta["roles_dropped"] == ["superdialseg", "agent_tau"]
        assert [f["corpus"] for f in sub.meta["trained_on"]] == [
            "tiage",
            "superdialseg",
            "agent_tau",
        ]
        assert all(f["part"] == "tune" for f in sub.meta["trained_on"])
        assert "dialseg711/dialseg711.jsonl" in sub.meta["never_read"]
        assert sub.meta["adaptive"]["floor"] == pytest.approx(sub.threshold - 1.0)
        assert {len(v) for v in sub.vectors.values()} == {384}

    def test_segmenter_with_roles_unknown_reads_the_second_model(self):
        sub = BoundaryModel.load(DEFAULT_WEIGHTS).roles_unknown
        assert sub is not None
        seg = unknown_roles_segmenter(keep_trace=True)
        turns = [Turn(actor="user", text=f"book a table {i}", ts=float(i)) for i in range(6)]
        seg.segment(turns)
        assert seg.trace is not None
        reasons = [v.reason for step in seg.trace for v in step.verdicts]
        learned = [r for r in reasons if r.startswith("learned logit")]
        assert learned and all(f"threshold {sub.threshold:+.2f}" in r for r in learned)

    def test_streaming_equals_batch_with_the_second_model(self):
        actors = ["user", "assistant"]
        turns = [
            Turn(actor=actors[i % 2], text=f"{TOPICS[(i // 5) % 4]} {i}", ts=float(i))
            for i in range(40)
        ]
        # hashing vectors score low under MiniLM weights: a low threshold makes it cut
        batch = unknown_roles_segmenter(threshold=-2.0).segment(turns)
        assert len(batch) > 1
        seg = unknown_roles_segmenter(threshold=-2.0)
        streamed = [e for t in turns for e in seg.observe(t)] + seg.flush()
        assert [[t.id for t in e.turns] for e in batch] == [
            [t.id for t in e.turns] for e in streamed
        ]
        assert sum(len(e.turns) for e in batch) == len(turns)
