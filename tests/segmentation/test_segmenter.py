"""Segmenter: tiling, streaming == batch, layering, sub-episodes, bad input."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from episeg.config import DriftConfig, EpisegConfig, JudgeConfig, SemanticConfig, WindowConfig
from episeg.errors import ConfigError, TurnValidationError
from episeg.segmentation.segmenter import Segmenter
from episeg.testing import HashingEmbedder, ScriptedJudge
from episeg.types import Decision, Episode, Turn
from tests.property_budget import examples

WORDS = ["auth", "jwt", "login", "deploy", "prod", "terraform", "retry", "log", "cache", "db"]

turn_strategy = st.builds(
    lambda actor, words, kind, marker: (actor, " ".join(words) + marker, kind),
    st.sampled_from(["user", "assistant", "tool", "system"]),
    st.lists(st.sampled_from(WORDS), min_size=0, max_size=6),
    st.one_of(
        st.none(),
        st.sampled_from(
            ["user-question", "tool-error", "user-correction", "assistant-answer", "system-event"]
        ),
    ),
    st.sampled_from(["", "", "", " <episode_boundary>", "<new_subtask> "]),
)


def make_turns(specs, *, sessions=1):
    turns = []
    for i, (actor, text, kind) in enumerate(specs):
        if kind == "system-event" and actor != "system":
            kind = None
        turns.append(
            Turn(
                actor=actor,
                text=text,
                ts=float(i * 10),
                type=kind,
                session=f"s{i % sessions}",
                user="u",
            )
        )
    return turns


def small_config():
    return EpisegConfig(
        window=WindowConfig(max_turns=5),
        semantic=SemanticConfig(threshold=0.6),
        drift=DriftConfig(threshold=0.4),
        judge=JudgeConfig(every=2),
    )


class TestTiling:
    @settings(max_examples=examples(60), deadline=None)
    @given(st.lists(turn_strategy, min_size=1, max_size=40), st.integers(1, 3))
    def test_episodes_tile_the_stream(self, specs, sessions):
        turns = make_turns(specs, sessions=sessions)
        seg = Segmenter(
            config=small_config(),
            embedder=HashingEmbedder(),
            judge=ScriptedJudge(["continue", "new", "error", "sub-episode"] * 20),
        )
        episodes: list[Episode] = []
        for t in turns:
            episodes += seg.observe(t)
        episodes += seg.flush()
        assert all(e.turns for e in episodes)
        got = sorted(t.id or "" for e in episodes for t in e.turns)
        assert got == sorted(
            f"{t.session}:{i}"
            for t in turns
            for i in [sum(1 for u in turns[: turns.index(t)] if u.session == t.session)]
        )
        for e in episodes:  # contiguous within its session, in order
            positions = [int((t.id or "").split(":")[1]) for t in e.turns]
            assert positions == list(range(positions[0], positions[0] + len(positions)))

    @settings(max_examples=examples(60), deadline=None)
    @given(st.lists(turn_strategy, min_size=1, max_size=40), st.integers(1, 3))
    def test_streaming_equals_batch(self, specs, sessions):
        turns = make_turns(specs, sessions=sessions)
        script = ["continue", "new", "error", "sub-episode"] * 20

        def run_stream():
            seg = Segmenter(
                config=small_config(), embedder=HashingEmbedder(), judge=ScriptedJudge(script)
            )
            eps = [e for t in turns for e in seg.observe(t)]
            return eps + seg.flush()

        batch = Segmenter(
            config=small_config(), embedder=HashingEmbedder(), judge=ScriptedJudge(script)
        ).segment(turns)
        key = lambda eps: sorted((e.id, e.turn_ids, e.parent_id) for e in eps)  # noqa: E731
        assert key(run_stream()) == key(batch)


class TestLayering:
    def test_marker_is_authoritative_and_stripped(self):
        turns = [
            Turn(actor="user", text="auth 401", ts=0),
            Turn(actor="assistant", text="fixed the jwt. <episode_boundary>", ts=1),
            Turn(actor="user", text="auth again", ts=2),
        ]
        eps = Segmenter(embedder=HashingEmbedder()).segment(turns)
        assert [len(e.turns) for e in eps] == [2, 1]
        assert eps[0].turns[1].text == "fixed the jwt."
        assert eps[1].boundary_verdicts[0].signal == "marker"

    def test_tool_error_then_question_opens_a_sub_episode_with_parent(self):
        turns = [
            Turn(actor="user", text="deploy prod", ts=0, type="user-question"),
            Turn(actor="tool", text="Error: state lock", ts=1, type="tool-error"),
            Turn(actor="user", text="who holds the lock", ts=2, type="user-question"),
        ]
        eps = Segmenter(
            embedder=HashingEmbedder(), config=EpisegConfig(semantic=SemanticConfig(threshold=2.0))
        ).segment(turns)
        assert [len(e.turns) for e in eps] == [2, 1]
        assert eps[1].parent_id == eps[0].id

    def test_hints_do_not_cut_before_tool_turns(self):
        turns = [
            Turn(actor="user", text="auth jwt login", ts=0),
            Turn(actor="assistant", text="auth jwt login", ts=1),
            Turn(actor="tool", text="terraform cache db", ts=2),
        ]
        seg = Segmenter(
            embedder=HashingEmbedder(),
            keep_trace=True,
            config=EpisegConfig(
                semantic=SemanticConfig(threshold=0.1, min_turns=1),
                drift=DriftConfig(min_turns=1),
            ),
        )
        assert len(seg.segment(turns)) == 1
        assert seg.trace is not None and (seg.trace[-1].semantic_distance or 0.0) > 0.1

    def test_judge_is_gated_to_ambiguous_turns(self):
        judge = ScriptedJudge()
        seg = Segmenter(
            embedder=HashingEmbedder(),
            judge=judge,
            config=EpisegConfig(judge=JudgeConfig(gate="ambiguous")),
        )
        same = [Turn(actor="user", text="auth jwt login", ts=float(i)) for i in range(10)]
        seg.segment(same)
        assert judge.calls == 0  # identical turns: never ambiguous

    def test_periodic_gate_counts_calls(self):
        judge = ScriptedJudge()
        seg = Segmenter(
            embedder=HashingEmbedder(),
            judge=judge,
            config=EpisegConfig(judge=JudgeConfig(gate="periodic", every=4)),
        )
        seg.segment([Turn(actor="user", text="auth jwt", ts=float(i)) for i in range(13)])
        assert judge.calls == seg.stats["judge_calls"] == 3

    def test_judge_failure_falls_back_to_cheap_signals(self):
        seg = Segmenter(
            embedder=HashingEmbedder(),
            judge=ScriptedJudge(["error"] * 50),
            config=EpisegConfig(judge=JudgeConfig(gate="periodic", every=1)),
        )
        eps = seg.segment([Turn(actor="user", text="auth jwt", ts=float(i)) for i in range(5)])
        assert len(eps) == 1 and seg.stats["judge_failures"] == 4

    def test_window_floor_bounds_episode_length(self):
        seg = Segmenter(
            embedder=HashingEmbedder(), config=EpisegConfig(window=WindowConfig(max_turns=4))
        )
        eps = seg.segment([Turn(actor="user", text="same words", ts=float(i)) for i in range(10)])
        assert [len(e.turns) for e in eps] == [4, 4, 2]
        assert eps[1].boundary_verdicts[-1].decision is Decision.BOUNDARY


class TestBadInput:
    def test_huge_text_is_refused(self):
        seg = Segmenter(embedder=HashingEmbedder())
        with pytest.raises(TurnValidationError, match="limit is 100000"):
            seg.observe(Turn(actor="user", text="x" * 1_000_000, ts=0))

    def test_time_going_backwards_is_refused(self):
        seg = Segmenter(embedder=HashingEmbedder())
        seg.observe(Turn(actor="user", text="a", ts=10))
        with pytest.raises(TurnValidationError, match="earlier"):
            seg.observe(Turn(actor="user", text="b", ts=5))
        # the refused turn did not consume a sequence number or get lost silently
        assert [t.id for t in seg.open_turns("default", "default")] == ["default:0"]

    def test_duplicate_ids_are_ingested_once(self):
        seg = Segmenter(embedder=HashingEmbedder())
        t = Turn(actor="user", text="a", ts=1, id="t1")
        seg.observe(t)
        seg.observe(t)
        assert len(seg.flush()[0].turns) == 1 and seg.stats["duplicates"] == 1

    def test_unknown_signal_and_missing_judge(self):
        with pytest.raises(ConfigError, match="valid"):
            Segmenter(embedder=HashingEmbedder(), signals={"vibes"})
        with pytest.raises(ConfigError, match="needs a judge"):
            Segmenter(embedder=HashingEmbedder(), signals={"prediction"})


class FlakyEmbedder(HashingEmbedder):
    """A hashing embedder that raises once for each text that contains a word of ``fail``."""

    def __init__(self, fail: set[str]) -> None:
        super().__init__()
        self.fail = set(fail)

    def embed(self, texts):
        for word in sorted(self.fail):
            if any(word in t.split() for t in texts):
                self.fail.discard(word)
                raise RuntimeError(f"embedding backend unavailable ({word})")
        return super().embed(texts)


class TestEmbedderFailure:
    """A turn whose embedding fails is not recorded, so sending it again observes it."""

    @pytest.mark.parametrize("with_ids", [True, False])
    def test_resent_turns_give_the_episodes_of_a_run_without_failures(self, with_ids):
        specs = [
            ("user", "auth login returns 401", None),
            ("assistant", "Rotate the jwt key. <episode_boundary>", None),
            ("user", "how do I deploy prod with terraform?", None),
            ("assistant", "Edit version.tf, then apply.", None),
            ("user", "retry log cache db", None),
        ]
        turns = make_turns(specs)
        if with_ids:
            turns = [dataclasses.replace(t, id=f"t{i}") for i, t in enumerate(turns)]
        clean = Segmenter(embedder=HashingEmbedder(), config=small_config())
        expected = [e for t in turns for e in clean.observe(t)] + clean.flush()
        flaky_embedder = FlakyEmbedder({"auth", "deploy", "retry"})
        flaky = Segmenter(embedder=flaky_embedder, config=small_config())
        got, failures = [], 0
        for turn in turns:
            while True:
                try:
                    step = flaky.observe(turn)
                    break
                except RuntimeError:
                    failures += 1
            assert step.accepted
            got += list(step)
        got += flaky.flush()
        assert failures == 3 and not flaky_embedder.fail
        assert [[t.id for t in e.turns] for e in got] == [[t.id for t in e.turns] for e in expected]
        assert got == expected
        assert flaky.stats["duplicates"] == 0

    def test_a_failed_turn_leaves_no_id_or_timestamp_behind(self):
        seg = Segmenter(embedder=FlakyEmbedder({"b"}))
        seg.observe(Turn(actor="user", text="a", ts=1.0))
        with pytest.raises(RuntimeError, match="unavailable"):
            seg.observe(Turn(actor="user", text="b", ts=9.0))
        # ts 5 is after the last *recorded* turn (ts 1), and the failed turn's number is free
        step = seg.observe(Turn(actor="user", text="c", ts=5.0))
        assert step.accepted and step.turn is not None and step.turn.id == "default:1"
        assert [t.text for t in seg.open_turns("default", "default")] == ["a", "c"]
