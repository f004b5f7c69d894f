"""The learned combiner: features, the boundary model, the shipped weights, the segmenter."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from episeg.config import CombinerConfig, EpisegConfig, WindowConfig
from episeg.errors import ConfigError
from episeg.segmentation.features import (
    INTERACTION_FEATURES,
    ROLE_FEATURES,
    EpisodeContext,
    TurnView,
    boundary_features,
    feature_names,
)
from episeg.segmentation.learned import (
    CHAT_WEIGHTS,
    DEFAULT_WEIGHTS,
    AdaptiveThreshold,
    BoundaryModel,
    LearnedPolicy,
    learned_policy,
    load_model,
)
from episeg.segmentation.segmenter import Segmenter
from episeg.segmentation.signals import PIVOT_REASON
from episeg.segmentation.signals.drift import GradualDrift
from episeg.testing import HashingEmbedder, MiniLMShaped, ScriptedJudge
from episeg.types import Decision, Episode, ObservedTurn, Turn, TurnType, Verdict
from tests.property_budget import examples

# The shipped agent model's logit at turn 6 of the synthetic stream below (a regression pin).
KNOWN_TURN6_LOGIT = -0.32808575874331014  # the fit on folds by content group, shipped 2026-12-07
WORDS = ["auth", "jwt", "login", "deploy", "prod", "terraform", "retry", "log", "cache", "db"]


def unit(rng: np.random.Generator, dim: int = 384) -> np.ndarray:
    v = rng.normal(size=dim)
    return v / np.linalg.norm(v)


def view(vec: np.ndarray, actor: str = "user", text: str = "deploy the api") -> TurnView:
    return TurnView.make(vec, actor, None, text)


class TestFeatures:
    def test_vector_matches_names_for_every_lookahead(self):
        rng = np.random.default_rng(0)
        ctx = EpisodeContext()
        for _ in range(5):
            ctx.commit(view(unit(rng)))
        for lookahead in (0, 1, 2):
            pending = [view(unit(rng)) for _ in range(lookahead + 1)]
            x, e, a, b = boundary_features(ctx, pending, lookahead=lookahead, roles_known=True)
            assert x.shape == (len(feature_names(lookahead)),)
            assert e.shape == a.shape == b.shape == (384,)

    def test_roles_unknown_zeroes_every_role_feature(self):
        rng = np.random.default_rng(1)
        ctx = EpisodeContext()
        ctx.commit(view(unit(rng), actor="assistant"))
        x, *_ = boundary_features(ctx, [view(unit(rng))], lookahead=0, roles_known=False)
        names = feature_names(0)
        role_like = [n for n in names if n in ROLE_FEATURES or n.startswith("is_user*")]
        assert role_like and all(x[names.index(n)] == 0.0 for n in role_like)
        assert set(INTERACTION_FEATURES) <= set(names)

    def test_no_feature_reads_who_spoke_before(self):
        # A user turn after a tool error must score as after an assistant turn.
        rng = np.random.default_rng(2)
        vecs = [unit(rng) for _ in range(4)]
        scores = []
        for actor, kind in (("tool", "tool-error"), ("assistant", "assistant-answer")):
            ctx = EpisodeContext()
            ctx.commit(view(vecs[0]))
            ctx.commit(TurnView.make(vecs[1], actor, kind, "Error: lock held"))
            scores.append(boundary_features(ctx, [view(vecs[2])], lookahead=0, roles_known=True))
        assert np.array_equal(scores[0][0], scores[1][0])

    def test_page_hinkley_matches_the_drift_signal(self):
        rng = np.random.default_rng(3)
        drift = GradualDrift(delta=0.05, threshold=1.0, min_turns=2)
        ctx = EpisodeContext()
        for i in range(12):
            vec = unit(rng, 8) + 0.3 * i * np.eye(8)[0]
            turn = Turn(actor="user", text="x", ts=float(i))
            obs = ObservedTurn(turn, "x", vec, i, TurnType.USER_QUESTION)
            if i == 0:
                drift.reset(obs)
                ctx.commit(view(vec))
                continue
            cosine = float(vec @ ctx.mean) / float(np.linalg.norm(ctx.mean) * np.linalg.norm(vec))
            expected = ctx.page_hinkley_with(1.0 - cosine)
            verdict = drift.update(obs)
            if verdict.decision is not Decision.ABSTAIN:
                assert expected == pytest.approx(verdict.score * drift.threshold, abs=1e-9)
            ctx.commit(view(vec))

    @pytest.mark.parametrize(
        ("text", "cue"),
        [
            ("By the way, how do I rotate keys?", True),
            ("I have another question", True),
            ("the way we deploy", False),
            ("thanks!", False),
        ],
    )
    def test_shift_cue(self, text, cue):
        assert TurnView.make(np.ones(2), "user", None, text).cue is cue

    def test_empty_context_is_refused(self):
        with pytest.raises(ValueError, match="non-empty"):
            boundary_features(EpisodeContext(), [view(np.ones(2))], lookahead=0, roles_known=True)


def tiny_model(**kw) -> BoundaryModel:
    names = ("a", "b")
    spec = dict(
        names=names,
        weights=np.array([2.0, -1.0]),
        bias=-0.5,
        vectors={"turn": np.array([1.0, 0.0])},
        lookahead=0,
        threshold=0.0,
        band=0.5,
        means=np.array([0.5, 0.5]),
        vector_means={"turn": np.zeros(2)},
        meta={"embedder": "x", "min_turns": 1},
    )
    spec.update(kw)
    return BoundaryModel(**spec)  # type: ignore[arg-type]


class TestBoundaryModel:
    def test_save_load_round_trip(self, tmp_path):
        m = tiny_model()
        m.save(tmp_path / "m.npz")
        back = BoundaryModel.load(tmp_path / "m.npz")
        x, e = np.array([1.0, 0.25]), np.array([0.5, 0.5])
        assert back.names == m.names and back.meta == m.meta
        assert back.logit(x, e, e, e) == pytest.approx(m.logit(x, e, e, e))

    def test_without_holds_a_feature_at_its_mean(self):
        m = tiny_model()
        e = np.array([0.5, 0.5])
        for x in (np.array([1.0, 0.0]), np.array([0.0, 3.0])):
            ablated = m.without(["a", "turn-embedding"])
            expected = m.bias + 2.0 * 0.5 - 1.0 * x[1]
            assert ablated.logit(x, e, e, e) == pytest.approx(expected)

    def test_contributions_are_sorted_by_size(self):
        m = tiny_model()
        parts = m.contributions(np.array([3.0, 0.0]), *(np.array([0.1, 0.0]),) * 3, top=3)
        assert [n for n, _ in parts] == ["a", "b", "turn-embedding"]

    def test_bad_weights_are_refused(self, tmp_path):
        with pytest.raises(ConfigError):
            tiny_model(weights=np.zeros(3))
        (tmp_path / "bad.npz").write_bytes(b"not a zip")
        with pytest.raises(ConfigError, match="cannot read"):
            BoundaryModel.load(tmp_path / "bad.npz")


class TestShippedWeights:
    @pytest.mark.parametrize("path", [DEFAULT_WEIGHTS, CHAT_WEIGHTS])
    def test_load_and_provenance(self, path):
        m = BoundaryModel.load(path)
        assert path.stat().st_size < 64_000
        assert m.names == feature_names(m.lookahead) and m.lookahead == 0
        assert {len(v) for v in m.vectors.values()} == {384}
        assert "dialseg711/dialseg711.jsonl" in m.meta["never_read"]
        assert all(f["part"] == "tune" for f in m.meta["trained_on"])
        assert m.meta["embedder"] == "all-MiniLM-L6-v2"

    def test_weights_of_another_feature_set_are_refused(self, tmp_path):
        m = BoundaryModel.load(DEFAULT_WEIGHTS)
        old = dataclasses.replace(
            m, names=m.names[:-1], weights=m.weights[:-1], means=m.means[:-1], roles_unknown=None
        )
        old.save(tmp_path / "old.npz")
        config = EpisegConfig(
            combiner=CombinerConfig(kind="learned", weights=str(tmp_path / "old.npz"))
        )
        with pytest.raises(ConfigError, match=r"other features.*retrain"):
            learned_policy(config, MiniLMShaped())
        assert learned_policy(EpisegConfig(combiner=CombinerConfig(kind="learned")), MiniLMShaped())

    def test_agent_model_reproduces_its_scores_on_a_synthetic_stream(self):
        # A fixed synthetic stream (seeded unit vectors): topic A for 6 turns, then topic B.
        rng = np.random.default_rng(11)
        a, b = unit(rng), unit(rng)
        vecs = [(a if i < 6 else b) + 0.35 * unit(rng) for i in range(9)]
        m = load_model(DEFAULT_WEIGHTS)
        ctx = EpisodeContext()
        ctx.commit(view(vecs[0], text="book a flight to seattle"))
        logits = []
        for i in range(1, 9):
            actor = "user" if i % 2 == 0 else "assistant"
            v = view(vecs[i], actor=actor, text=f"turn {i} about flights")
            logits.append(m.logit(*boundary_features(ctx, [v], lookahead=0, roles_known=True)))
            ctx.commit(v)
        users = logits[1::2]  # turns 2, 4, 6, 8
        assert int(np.argmax(users)) == 2  # turn 6, the user turn opening topic B
        assert users[2] > m.threshold > max(users[0], users[1])
        assert users[2] == pytest.approx(KNOWN_TURN6_LOGIT, abs=1e-6)


def learned_segmenter(**kw) -> Segmenter:
    config = EpisegConfig(combiner=CombinerConfig(kind="learned", **kw.pop("combiner", {})))
    return Segmenter(config=config, embedder=MiniLMShaped(), **kw)


turn_strategy = st.tuples(
    st.sampled_from(["user", "assistant", "tool"]),
    st.lists(st.sampled_from(WORDS), min_size=0, max_size=6),
    st.sampled_from(["", "", "", " <episode_boundary>"]),
)


class TestLearnedSegmenter:
    def test_auto_falls_back_to_layered_for_other_embedders(self):
        assert Segmenter(embedder=HashingEmbedder()).learned is None
        assert Segmenter(embedder=MiniLMShaped()).learned is not None
        with pytest.raises(ConfigError, match="trained on all-MiniLM-L6-v2"):
            Segmenter(
                config=EpisegConfig(combiner=CombinerConfig(kind="learned")),
                embedder=HashingEmbedder(),
            )

    def test_chat_preset_loads_its_own_weights(self):
        seg = learned_segmenter(combiner={"weights": "chat", "roles_known": False})
        assert seg.learned is not None and seg.learned.model.meta["preset"] == "chat"

    @settings(max_examples=examples(40), deadline=None)
    @given(st.lists(turn_strategy, min_size=1, max_size=30))
    def test_streaming_equals_batch_and_tiles(self, specs):
        turns = [
            Turn(actor=a, text=" ".join(w) + m, ts=float(i)) for i, (a, w, m) in enumerate(specs)
        ]
        batch = learned_segmenter().segment(turns)
        seg = learned_segmenter()
        streamed = [e for t in turns for e in seg.observe(t)] + seg.flush()
        assert [[t.id for t in e.turns] for e in batch] == [
            [t.id for t in e.turns] for e in streamed
        ]
        assert sum(len(e.turns) for e in batch) == len(turns)

    def test_model_never_cuts_before_tool_or_assistant_turns(self):
        seg = learned_segmenter(combiner={"threshold": -50.0})  # would cut anywhere it may
        turns = [
            Turn(actor=a, text=f"{w} {i}", ts=float(i))
            for i, (a, w) in enumerate(
                [
                    ("user", "deploy"),
                    ("assistant", "ok"),
                    ("tool", "Error: lock"),
                    ("assistant", "x"),
                    ("user", "retry"),
                    ("assistant", "done"),
                ]
            )
        ]
        starts = [e.turns[0].actor.value for e in seg.segment(turns)]
        assert set(starts) == {"user"}

    def test_marker_stays_authoritative_and_reason_names_features(self):
        seg = learned_segmenter(keep_trace=True, combiner={"threshold": 50.0, "min_turns": 1})
        turns = [
            Turn(actor="user", text="deploy prod", ts=0.0),
            Turn(actor="assistant", text="Done. <episode_boundary>", ts=1.0),
            Turn(actor="user", text="deploy prod again", ts=2.0),
            Turn(actor="user", text="and the cache", ts=3.0),
        ]
        episodes = seg.segment(turns)
        assert [len(e.turns) for e in episodes] == [2, 2]
        assert episodes[1].boundary_verdicts[-1].reason.startswith("marker:")
        assert seg.trace is not None
        reason = seg.trace[-1].verdicts[-1].reason
        assert reason.startswith("learned logit") and "threshold +50.00" in reason

    def test_window_floor_still_bounds(self):
        config = EpisegConfig(
            combiner=CombinerConfig(kind="learned", threshold=50.0),
            window=WindowConfig(max_turns=4),
        )
        seg = Segmenter(config=config, embedder=MiniLMShaped())
        turns = [Turn(actor="user", text=f"deploy {i}", ts=float(i)) for i in range(10)]
        assert max(len(e.turns) for e in seg.segment(turns)) <= 4

    def test_min_turns_prior(self):
        seg = learned_segmenter(combiner={"threshold": -50.0, "min_turns": 3})
        turns = [Turn(actor="user", text=f"w{i}", ts=float(i)) for i in range(7)]
        assert [len(e.turns) for e in seg.segment(turns)] == [3, 3, 1]

    def test_judge_is_asked_only_in_the_uncertain_band(self):
        turns = [Turn(actor="user", text=f"{WORDS[i % 10]} {i}", ts=float(i)) for i in range(12)]
        for band, expect_calls in ((0.0, False), (1e6, True)):
            judge = ScriptedJudge(["continue"] * 20)
            seg = learned_segmenter(judge=judge, combiner={"band": band, "min_turns": 1})
            seg.segment(turns)
            assert (seg.stats["judge_calls"] > 0) is expect_calls
            if expect_calls:
                assert seg.stats["judge_calls"] == len(turns) - 1

    def test_resume_rebuilds_the_same_features(self):
        turns = [
            Turn(
                actor="user" if i % 2 == 0 else "assistant",
                text=" ".join(WORDS[i % 7 :]),
                ts=float(i),
                id=f"t{i}",
            )
            for i in range(16)
        ]
        whole = learned_segmenter()
        expected = [[t.id for t in e.turns] for e in whole.segment(turns)]
        live = learned_segmenter()
        closed: list[Episode] = []
        checkpoint, opened_at = None, 0
        for i, t in enumerate(turns):
            step = live.observe(t)
            closed.extend(step.closed)
            if step.opened:
                checkpoint, opened_at = live.checkpoint("default", "default"), i
        assert checkpoint is not None
        tail = [(t, live.embedder.embed([t.text])[0]) for t in turns[opened_at:]]
        again = learned_segmenter()
        again.resume(checkpoint, tail, seen_ids=[str(t.id) for t in turns])
        rebuilt = [[t.id for t in e.turns] for e in closed + again.flush()]
        assert rebuilt == expected


def test_learned_policy_rulings_come_first():
    policy = LearnedPolicy(
        tiny_model(
            vectors={},
            vector_means={},
            names=tuple(feature_names(0)),
            weights=np.zeros(len(feature_names(0))),
            means=np.zeros(len(feature_names(0))),
        )
    )
    ctx = EpisodeContext()
    ctx.commit(view(np.ones(3)))
    ruling = Verdict("window", Decision.BOUNDARY, 1.0, "24 turns", authoritative=True)
    out = policy.weigh([ruling], ctx, [view(np.ones(3))])
    assert out.authoritative and out.decision is Decision.BOUNDARY


def test_learned_policy_opens_at_an_announced_pivot_whatever_the_logit():
    n = len(feature_names(0))
    model = tiny_model(
        vectors={},
        vector_means={},
        names=tuple(feature_names(0)),
        weights=np.zeros(n),
        means=np.zeros(n),
        bias=-50.0,
    )
    policy = LearnedPolicy(model, min_turns=2)
    pivot = Verdict("structural", Decision.BOUNDARY, 0.9, f"{PIVOT_REASON}: 'unrelated'")
    ctx = EpisodeContext()
    ctx.commit(view(np.ones(3)))
    assert policy.weigh([pivot], ctx, [view(np.ones(3))]).decision is Decision.CONTINUE  # 1 < 2
    ctx.commit(view(np.ones(3)))
    out = policy.weigh([pivot], ctx, [view(np.ones(3))])
    assert out.decision is Decision.BOUNDARY and not out.authoritative
    assert out.reason.startswith("structural: user announces a new topic") and "logit" in out.reason
    closed = policy.weigh([pivot], ctx, [view(np.ones(3))], hints_may_open=False)
    assert closed.decision is Decision.CONTINUE
    other = Verdict("structural", Decision.BOUNDARY, 0.7, "system-event (inferred)")
    assert policy.weigh([other], ctx, [view(np.ones(3))]).decision is Decision.CONTINUE


class TestTheAdaptiveFloorFollowsTheThreshold:
    """F129: the relative rule's floor stays threshold - 1 when the threshold is configured."""

    def test_a_configured_threshold_moves_the_floor(self):
        shipped = LearnedPolicy()
        assert shipped.adaptive is not None
        assert shipped.adaptive.floor == pytest.approx(shipped.threshold - 1.0)
        raised = LearnedPolicy(threshold=4.0)
        assert raised.adaptive is not None and raised.adaptive.floor == pytest.approx(3.0)
        unknown = LearnedPolicy(threshold=4.0, roles_known=False)  # its own model and rule
        assert unknown.adaptive is not None
        assert unknown.adaptive.floor - 4.0 == pytest.approx(
            unknown.model.meta["adaptive"]["floor"] - unknown.model.threshold
        )

    def test_a_rule_given_explicitly_is_used_as_given(self):
        rule = AdaptiveThreshold(g=2.0, floor=-9.0)
        assert LearnedPolicy(threshold=4.0, adaptive=rule).adaptive == rule
