"""A boundary model that reads later turns: a turn is decided once they are in."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from episeg.config import CombinerConfig, EpisegConfig
from episeg.errors import ConfigError
from episeg.segmentation.features import EpisodeContext, TurnView, boundary_features
from episeg.segmentation.learned import DEFAULT_WEIGHTS, MAX_LOOKAHEAD, BoundaryModel
from episeg.segmentation.lookahead import Lookahead
from episeg.segmentation.segmenter import Segmenter
from episeg.testing import HashingEmbedder, MiniLMShaped, ScriptedJudge
from episeg.types import Actor, Turn
from tests.property_budget import examples

WORDS = ["auth", "jwt", "deploy", "terraform", "train", "cambridge", "taxi", "hotel", "pizza"]


def unknown_roles(**kw: object) -> Segmenter:
    config = EpisegConfig(combiner=CombinerConfig(kind="learned", roles_known=False))
    return Segmenter(config=config, embedder=MiniLMShaped(), **kw)  # type: ignore[arg-type]


def stream(n: int, seed: int = 0) -> list[Turn]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        topic = (i // 5 + int(rng.integers(0, 2))) % len(WORDS)
        text = " ".join(WORDS[(topic + int(k)) % len(WORDS)] for k in rng.integers(0, 3, size=3))
        out.append(Turn(actor="user" if i % 2 == 0 else "assistant", text=text, ts=float(i)))
    return out


def cuts(episodes: list) -> list[int]:  # type: ignore[type-arg]
    out, total = [], 0
    for ep in episodes[:-1]:
        total += len(ep.turns)
        out.append(total)
    return out


class TestShippedPresets:
    def test_roles_unknown_streams_wait_one_turn_and_known_roles_none(self) -> None:
        assert unknown_roles().lookahead == 1
        known = Segmenter(
            config=EpisegConfig(combiner=CombinerConfig(kind="learned")), embedder=MiniLMShaped()
        )
        assert known.lookahead == 0
        assert Segmenter(embedder=HashingEmbedder()).lookahead == 0  # the layered policy

    def test_weights_that_wait_too_long_are_refused(self, tmp_path) -> None:
        m = BoundaryModel.load(DEFAULT_WEIGHTS)
        assert m.roles_unknown is not None
        far = dataclasses.replace(m.roles_unknown, lookahead=MAX_LOOKAHEAD + 1)
        dataclasses.replace(m, roles_unknown=far).save(tmp_path / "far.npz")
        config = EpisegConfig(
            combiner=CombinerConfig(kind="learned", weights=str(tmp_path / "far.npz"))
        )
        with pytest.raises(ConfigError, match=f"at most {MAX_LOOKAHEAD}"):
            Segmenter(config=config, embedder=MiniLMShaped())


class TestStreaming:
    def test_a_turn_is_decided_when_the_next_one_comes(self) -> None:
        seg = unknown_roles()
        turns = stream(12)
        first = seg.observe(turns[0])
        assert first.decided is not None and first.decided.text == turns[0].text and first.opened
        waiting = seg.observe(turns[1])
        assert waiting.decided is None and not waiting.closed and waiting.verdict is None
        for k in range(2, 12):
            step = seg.observe(turns[k])
            assert step.turn is not None and step.turn.text == turns[k].text
            assert step.decided is not None and step.decided.text == turns[k - 1].text
        # the waiting turn is open: recall and checkpoints see it
        assert seg.open_turns("default", "default")[-1].text == turns[11].text

    def test_the_decision_reads_the_later_turn(self) -> None:
        seg = unknown_roles()
        model = BoundaryModel.load(DEFAULT_WEIGHTS).for_roles(False)
        emb = MiniLMShaped()
        turns = stream(4)
        vecs = emb.embed([t.text for t in turns]).astype(np.float64)
        steps = [seg.observe(t) for t in turns]
        ctx = EpisodeContext()  # turn 1 joins turn 0: the model cuts no episode under 2 turns
        for k in (0, 1):
            ctx.commit(TurnView.make(vecs[k], "user", None, turns[k].text))
        pending = [TurnView.make(vecs[k], "user", None, turns[k].text) for k in (2, 3)]
        want = model.logit(*boundary_features(ctx, pending, lookahead=1, roles_known=False))
        verdict = steps[3].verdict
        assert verdict is not None and steps[3].decided is not None
        assert steps[3].decided.text == turns[2].text
        found = re.search(r"learned logit ([-+][0-9.]+)", verdict.reason)
        assert found is not None
        logit = float(found.group(1))
        assert logit == pytest.approx(want, abs=0.006)  # the reason prints two decimals
        # without the later turn the features, and so the logit, would differ
        short = boundary_features(ctx, pending[:1], lookahead=1, roles_known=False)
        assert model.logit(*short) != pytest.approx(want, abs=0.01)

    def test_flush_decides_the_waiting_turn_and_keeps_every_turn(self) -> None:
        seg = unknown_roles()
        turns = stream(30, seed=3)
        live = [e for t in turns for e in seg.observe(t)]
        live += seg.flush()
        assert [t.text for e in live for t in e.turns] == [t.text for t in turns]
        assert seg.open_turns("default", "default") == ()

    @settings(
        max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow]
    )
    @given(n=st.integers(1, 40), seed=st.integers(0, 10_000))
    def test_streaming_equals_batch(self, n: int, seed: int) -> None:
        turns = stream(n, seed)
        live = unknown_roles()
        streamed = [e for t in turns for e in live.observe(t)] + live.flush()
        batch = unknown_roles().segment(turns)
        assert cuts(streamed) == cuts(batch)
        assert [[t.id for t in e.turns] for e in streamed] == [
            [t.id for t in e.turns] for e in batch
        ]

    def test_resume_from_a_checkpoint_with_a_waiting_turn(self) -> None:
        turns = stream(40, seed=5)
        whole = unknown_roles()
        want = [e for t in turns for e in whole.observe(t)] + whole.flush()
        live, seen, checkpoint = unknown_roles(), [], None
        emb = MiniLMShaped()
        got: list = []  # type: ignore[type-arg]
        for k, t in enumerate(turns):
            step = live.observe(t)
            got.extend(step)
            assert step.turn is not None
            seen.append(step.turn)
            if step.opened:
                checkpoint = live.checkpoint("default", "default")
            if k == 24:  # "crash": rebuild from the checkpoint and the open turns only
                break
        assert checkpoint is not None
        open_turns = live.open_turns("default", "default")
        again = unknown_roles()
        replayed = again.resume(
            checkpoint,
            [(o, emb.embed([o.text])[0]) for o in open_turns],
            seen_ids=[s.id or "" for s in seen],
        )
        assert replayed == []  # the replay closes nothing the live run had not
        assert again.open_turns("default", "default") == open_turns
        for t in turns[25:]:
            got.extend(again.observe(t))
        got += again.flush()
        assert [[x.id for x in e.turns] for e in got] == [[x.id for x in e.turns] for e in want]


class TestJudge:
    def test_the_answer_is_recorded_for_the_decided_turn(self) -> None:
        seg = unknown_roles(judge=ScriptedJudge(["continue"] * 100))
        assert seg.learned is not None
        seg.learned.band = 100.0  # every turn is uncertain: the judge is asked on each
        turns = [dataclasses.replace(t, actor=Actor.USER) for t in stream(6)]  # hints cut users'
        steps = [seg.observe(t) for t in turns]
        assert steps[1].judge_record is None  # waiting: nothing decided
        assert steps[2].judge_record is None  # turn 1: no cut under 2 turns, nothing to ask
        for step in steps[3:]:
            assert step.decided is not None and step.judge_record is not None
            assert step.decided.id != (step.turn.id if step.turn else None)


class TestLookaheadUnit:
    def test_negative_lookahead_is_refused(self) -> None:
        seg = unknown_roles()
        with pytest.raises(ValueError, match="later must be >= 0"):
            Lookahead(seg._decider, -1)
