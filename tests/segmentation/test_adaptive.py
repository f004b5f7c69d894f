"""The learned combiner's adaptive threshold, and the per-session signal factory."""

from __future__ import annotations

import math

import numpy as np
import pytest

from episeg.config import CombinerConfig, EpisegConfig, SemanticConfig
from episeg.segmentation.features import EpisodeContext, TurnView, feature_names
from episeg.segmentation.learned import AdaptiveThreshold, BoundaryModel, LearnedPolicy, load_model
from episeg.segmentation.segmenter import Segmenter
from episeg.segmentation.signals.factory import ALL_SIGNALS, SignalFactory
from episeg.segmentation.signals.semantic import turn_words
from episeg.testing import MiniLMShaped
from episeg.types import Decision, Episode, Turn

WORDS = ["auth", "jwt", "login", "deploy", "prod", "terraform", "retry", "log", "cache", "db"]


def distance_model(bias: float) -> BoundaryModel:
    """Logit = bias + 4 * (cosine distance to the previous turn)."""
    names = feature_names(0)
    weights = np.zeros(len(names))
    weights[names.index("d_prev1")] = 4.0
    return BoundaryModel(
        names=names,
        weights=weights,
        bias=bias,
        vectors={},
        lookahead=0,
        threshold=0.0,
        band=0.1,
        means=np.zeros(len(names)),
        vector_means={},
        meta={"min_turns": 1},
    )


def near(base: np.ndarray, rng: np.random.Generator, noise: float) -> np.ndarray:
    v = base + noise * rng.normal(size=base.shape)
    return v / np.linalg.norm(v)


class TestAdaptiveThreshold:
    def test_needs_enough_scores_and_respects_the_floor(self):
        rule = AdaptiveThreshold(g=1.0, window=3, min_scores=2, floor=-2.0)
        assert rule.cut_at([-5.0]) is None
        assert rule.cut_at([-5.0, -5.0]) == -2.0  # mean + g*std = -5 is below the floor
        assert rule.cut_at([9.0, -1.0, -1.0, -1.0]) == pytest.approx(-1.0)  # last 3 only
        assert not rule.fires(-2.5, [-5.0, -5.0]) and rule.fires(-2.0, [-5.0, -5.0])

    def test_from_meta(self):
        assert AdaptiveThreshold.from_meta(None) is None and AdaptiveThreshold.from_meta({}) is None
        rule = AdaptiveThreshold.from_meta({"g": 2, "window": 10})
        assert rule == AdaptiveThreshold(g=2.0, window=10, min_scores=3, floor=-math.inf)

    def test_opens_where_a_logit_stands_out_in_its_episode(self):
        rng = np.random.default_rng(3)
        base, other = rng.normal(size=16), rng.normal(size=16)
        same = [near(base, rng, 0.05) for _ in range(6)]
        shift = near(other, rng, 0.05)
        rule = AdaptiveThreshold(g=2.0, window=20, min_scores=3, floor=-4.0)
        fixed, relative = (LearnedPolicy(distance_model(-6.0), adaptive=a) for a in (None, rule))
        out = {}
        for name, policy in (("fixed", fixed), ("relative", relative)):
            ctx = EpisodeContext()
            ctx.commit(TurnView.make(same[0], "user", None, "deploy prod"))
            for vec in same[1:]:
                turn = TurnView.make(vec, "user", None, "deploy prod")
                assert policy.weigh([], ctx, [turn]).decision is Decision.CONTINUE
                ctx.commit(turn)
            out[name] = policy.weigh([], ctx, [TurnView.make(shift, "user", None, "bake bread")])
            assert len(ctx.scores) == len(same)  # every scored turn joins the history
        assert out["fixed"].decision is Decision.CONTINUE and out["fixed"].evidence < 0.0
        assert out["relative"].decision is Decision.BOUNDARY
        assert "stands out in its episode" in out["relative"].reason


def adaptive_segmenter() -> Segmenter:
    seg = Segmenter(
        config=EpisegConfig(combiner=CombinerConfig(kind="learned")), embedder=MiniLMShaped()
    )
    rule = AdaptiveThreshold(g=1.0, window=20, min_scores=3, floor=-6.0)
    seg.learned = LearnedPolicy(load_model(None), adaptive=rule, min_turns=2)
    return seg


def stream_of(n: int) -> list[Turn]:
    rng = np.random.default_rng(11)
    return [
        Turn(
            actor="user" if i % 2 == 0 else "assistant",
            text=" ".join(rng.choice(WORDS, size=4)),
            ts=float(i),
            id=f"t{i}",
        )
        for i in range(n)
    ]


class TestThroughTheSegmenter:
    def test_streaming_equals_batch_and_the_rule_fires(self):
        turns = stream_of(40)
        batch = adaptive_segmenter().segment(turns)
        live = adaptive_segmenter()
        streamed: list[Episode] = []
        for t in turns:
            streamed.extend(live.observe(t).closed)
        streamed.extend(live.flush())
        assert [[t.id for t in e.turns] for e in streamed] == [
            [t.id for t in e.turns] for e in batch
        ]
        reasons = [v.reason for e in batch for v in e.boundary_verdicts]
        assert any("stands out in its episode" in r for r in reasons)

    def test_resume_rebuilds_the_same_history(self):
        turns = stream_of(30)
        expected = [[t.id for t in e.turns] for e in adaptive_segmenter().segment(turns)]
        live = adaptive_segmenter()
        closed: list[Episode] = []
        checkpoint, opened_at = None, 0
        for i, t in enumerate(turns):
            step = live.observe(t)
            closed.extend(step.closed)
            if step.opened:
                checkpoint, opened_at = live.checkpoint("default", "default"), i
        assert checkpoint is not None and opened_at > 0
        tail = [(t, live.embedder.embed([t.text])[0]) for t in turns[opened_at:]]
        again = adaptive_segmenter()
        again.resume(checkpoint, tail, seen_ids=[str(t.id) for t in turns])
        assert [[t.id for t in e.turns] for e in closed + again.flush()] == expected


def test_signal_factory_reads_the_config_once_and_builds_fresh_signals(monkeypatch):
    config = EpisegConfig()
    calls = []
    original = type(config.semantic).kwargs

    def counting(self: SemanticConfig) -> dict[str, object]:
        calls.append(1)
        return original(self)

    monkeypatch.setattr(type(config.semantic), "kwargs", counting)
    factory = SignalFactory(config, ALL_SIGNALS)
    first, second = factory.build(), factory.build()
    assert list(first) == ["marker", "structural", "window", "semantic", "drift"]
    assert all(first[name] is not second[name] for name in first)
    assert len(calls) == 1


def test_turn_words_are_the_content_words_as_a_tuple():
    from episeg.text import content_words

    text = "Please deploy the API to prod, then check the login logs"
    assert turn_words(text) == tuple(content_words(text))
