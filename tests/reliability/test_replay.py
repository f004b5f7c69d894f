"""In-process crash/replay equivalence: a Memory abandoned mid-stream and reopened on the
same path ends with exactly the episodes of an uninterrupted run (hypothesis)."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from episeg.config import EpisegConfig, JudgeConfig
from episeg.errors import TurnValidationError
from episeg.memory import Memory
from episeg.testing import HashingEmbedder, ScriptedJudge
from episeg.types import Actor, Episode, Turn, TurnType
from tests.property_budget import examples

from .helpers import by_turns
from .memstore import MemBackend

_WORDS = [
    "auth",
    "jwt",
    "deploy",
    "terraform",
    "postgres",
    "replica",
    "pytest",
    "fixture",
    "invoice",
    "currency",
    "pod",
    "crash",
]
# /dev/shm is tmpfs: fsync is free there, so hypothesis can afford many examples.
_TMP = "/dev/shm" if Path("/dev/shm").is_dir() else None

turn_specs = st.lists(
    st.tuples(
        st.integers(0, 2),
        st.integers(0, 2),
        st.integers(0, 11),
        st.integers(0, 11),
        st.sampled_from(["", " <episode_boundary>", " <new_subtask>"]),
        st.sampled_from([None, "tool-error", "system-event", "user-question", "user-correction"]),
    ),
    min_size=1,
    max_size=40,
)


def build(specs: list[tuple[int, int, int, int, str, str | None]]) -> list[Turn]:
    turns, seq = [], {0: 0, 1: 0, 2: 0}
    for n, (stream, actor, w1, w2, marker, kind) in enumerate(specs):
        role = ("user", "assistant", "tool")[actor]
        text = f"{_WORDS[w1]} {_WORDS[w2]} {_WORDS[(w1 + w2) % 12]}" + (
            marker if role == "assistant" else ""
        )
        turns.append(
            Turn(
                actor=Actor(role),
                text=text,
                ts=float(n),
                user=f"u{stream % 2}",
                session=f"s{stream}",
                id=f"s{stream}-{seq[stream]}",
                # only a type its actor can produce (Memory refuses the others, R4-C12)
                type=TurnType(kind) if kind and kind.startswith(f"{role}-") else None,
            )
        )
        seq[stream] += 1
    return turns


def memory(path: str, backend: MemBackend, **kw: Any) -> Memory:
    return Memory(
        path=path,
        embedder=HashingEmbedder(),
        judge=kw.pop("judge", None),
        scorer=None,
        backend=backend,
        **kw,
    )


def uninterrupted(turns: list[Turn], **kw: Any) -> dict[str, Episode]:
    backend = MemBackend()
    with tempfile.TemporaryDirectory(dir=_TMP) as path:
        mem = memory(path, backend, **kw)
        mem.ingest(turns)
        mem.flush()
        mem.close()
    return backend.rows


def crashed(
    turns: list[Turn],
    cuts: list[int],
    resend: int,
    make: Callable[..., Memory] | None = None,
    **kw: Any,
) -> MemBackend:
    """Ingest, 'crash' (drop the Memory without flush) at each cut, reopen, re-send.

    ``make`` builds each Memory as :func:`memory` does (default: :func:`memory`).
    """
    make = make or memory
    backend = MemBackend()
    judge = kw.pop("judge_factory", None)
    with tempfile.TemporaryDirectory(dir=_TMP) as path:
        start = 0
        for cut in [*sorted(cuts), len(turns)]:
            mem = make(path, backend, judge=judge() if judge else None, **kw)
            mem.ingest(turns[max(0, start - resend) : cut])
            start = max(start, cut)
            if cut == len(turns):
                mem.flush()
            mem.close()  # closing without flush is what a crash leaves on disk
    return backend


def crashed_with_judge(
    turns: list[Turn],
    cuts: list[int],
    script: list[str],
    config: EpisegConfig,
    make: Callable[..., Memory],
) -> tuple[MemBackend, int]:
    """Ingest with a scripted judge, 'crash' at each cut, reopen; the judge calls made.

    Each reopened Memory gets a judge that continues the script where the last
    one stopped, and must not call it while it replays the journal.
    """
    backend, made = MemBackend(), 0
    with tempfile.TemporaryDirectory(dir=_TMP) as path:
        start = 0
        for cut in [*sorted(min(c, len(turns)) for c in cuts), len(turns)]:
            judge = ScriptedJudge(script[made:])  # the live judge continues its script
            mem = make(path, backend, judge=judge, config=config)
            assert judge.calls == 0, "replaying the journal called the judge"
            mem.ingest(turns[start:cut])
            start = max(start, cut)
            if cut == len(turns):
                mem.flush()
            made += judge.calls
            mem.close()
    return backend, made


def assert_tiles(rows: dict[str, Episode], turns: list[Turn]) -> None:
    ids = [tid for e in rows.values() for tid in e.turn_ids]
    assert sorted(ids) == sorted(t.id or "" for t in turns)


class TestReplayEquivalence:
    @pytest.mark.slow  # 150 crash/restart scenarios: 19-35 s on this machine
    @settings(
        max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow]
    )
    @given(
        specs=turn_specs, cuts=st.lists(st.integers(0, 40), max_size=4), resend=st.integers(0, 5)
    )
    def test_restart_yields_uninterrupted_episodes(
        self, specs: Any, cuts: list[int], resend: int
    ) -> None:
        turns = build(specs)
        want = uninterrupted(turns)
        backend = crashed(turns, [min(c, len(turns)) for c in cuts], resend)
        assert by_turns(backend.rows) == by_turns(want)
        assert_tiles(backend.rows, turns)

    @pytest.mark.parametrize("gate", ["ambiguous", "both"])
    @settings(
        max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow]
    )
    @given(specs=turn_specs, cuts=st.lists(st.integers(0, 40), min_size=1, max_size=3))
    def test_replay_with_judge_asks_it_nothing_new(
        self, gate: str, specs: Any, cuts: list[int]
    ) -> None:
        # "both" adds the periodic cadence, whose counter runs across episodes
        config = EpisegConfig(judge=JudgeConfig(gate=gate, every=3))
        turns = build(specs)
        script = ["continue", "new", "sub-episode", "error"] * 40
        reference = ScriptedJudge(script)
        want = uninterrupted(turns, judge=reference, config=config)
        backend, made = crashed_with_judge(turns, cuts, script, config, memory)
        assert by_turns(backend.rows) == by_turns(want)
        assert made == reference.calls


PERIODIC_CASE = [
    ("assistant", "cache log api"),
    ("user", "retry prod jwt"),
    ("assistant", "api deploy ci"),
    ("user", "ci deploy api"),
    ("user", "db lock deploy"),
    ("user", "deploy db log"),
    ("user", "cache prod jwt"),
    ("assistant", "prod key retry"),
    ("user", "jwt prod cache"),
    ("user", "db jwt deploy"),
    ("user", "auth ci api"),
    ("user", "key auth db"),
    ("assistant", "lock ci db"),
    ("user", "key retry jwt"),
]


class TestPeriodicCadenceSurvivesRestart:
    def test_crash_mid_episode_keeps_the_judge_cadence(self) -> None:
        # Found by a seeded search: without the cadence counter in the checkpoint,
        # a restart after turn 7 asks the judge at different turns than the live run.
        config = EpisegConfig(judge=JudgeConfig(gate="both", every=3))
        turns = [
            Turn(actor=Actor(a), text=t, ts=float(i), id=f"t{i}")
            for i, (a, t) in enumerate(PERIODIC_CASE)
        ]
        script = ["continue", "new", "sub-episode", "error"] * 10
        want = uninterrupted(turns, judge=ScriptedJudge(script), config=config)
        backend, made = MemBackend(), 0
        with tempfile.TemporaryDirectory(dir=_TMP) as path:
            for part in (turns[:7], turns[7:]):
                judge = ScriptedJudge(script[made:])
                mem = memory(path, backend, judge=judge, config=config)
                mem.ingest(part)
                made += judge.calls
                if part[-1] is turns[-1]:
                    mem.flush()
                mem.close()
        assert by_turns(backend.rows) == by_turns(want)

    @pytest.mark.parametrize("reload", ["restart", "refused turn"])
    def test_a_flushed_session_reloaded_keeps_the_judge_cadence(self, reload: str) -> None:
        # Found by review: a session with no open turn (just flushed) was reloaded without
        # its checkpoint, so the periodic judge counted from 0 again and cut elsewhere.
        config = EpisegConfig(judge=JudgeConfig(gate="periodic", every=3))
        words = ["deploy prod api", "terraform apply", "check the jwt key", "rotate the token"]
        words += ["replica lag", "invoice currency", "pytest fixture leak", "pod crash loop"]
        turns = [
            Turn(actor=Actor.USER, text=t, ts=float(i), id=f"t{i}") for i, t in enumerate(words)
        ]
        script = ["new"] * 20

        def run(interrupted: bool) -> dict[str, Episode]:
            backend = MemBackend()
            with tempfile.TemporaryDirectory(dir=_TMP) as path:
                judge = ScriptedJudge(script)
                mem = memory(path, backend, judge=judge, config=config)
                mem.ingest(turns[:2])
                mem.flush("default", "default")
                if interrupted and reload == "restart":
                    mem.close()
                    mem = memory(
                        path, backend, judge=ScriptedJudge(script[judge.calls :]), config=config
                    )
                elif interrupted:  # a refused turn reloads the session from the journal
                    with pytest.raises(TurnValidationError):
                        mem.observe(Turn(actor=Actor.USER, text="late", ts=0.5, id="late"))
                mem.ingest(turns[2:])
                mem.flush()
                mem.close()
            return backend.rows

        assert by_turns(run(interrupted=True)) == by_turns(run(interrupted=False))


class TestJournalUnits:
    def test_duplicate_after_restart_of_stored_turn_is_refused(self, tmp_path: Path) -> None:
        backend = MemBackend()
        turns = build(
            [
                (0, 0, 1, 2, "", None),
                (0, 1, 1, 2, " <episode_boundary>", None),
                (0, 0, 5, 6, "", None),
            ]
        )
        mem = memory(str(tmp_path), backend)
        mem.ingest(turns)
        stored_before = dict(backend.rows)
        assert len(stored_before) == 1
        mem.close()
        again = memory(str(tmp_path), backend)
        assert again.ingest(turns) == []  # every id was seen: nothing new
        again.flush()
        assert len(backend.rows) == 2
        assert_tiles(backend.rows, turns)
        assert backend.writes.count(next(iter(stored_before))) == 1

    def test_sub_episode_parent_survives_restart(self, tmp_path: Path) -> None:
        specs = [
            (0, 0, 1, 2, "", None),
            (0, 2, 1, 2, "", "tool-error"),
            (0, 0, 9, 10, "", "user-question"),
            (0, 2, 9, 10, "", None),
        ]
        turns = build(specs)
        want = uninterrupted(turns)
        assert any(e.parent_id for e in want.values())
        assert by_turns(crashed(turns, [3], 0).rows) == by_turns(want)

    def test_refused_turn_leaves_no_trace(self, tmp_path: Path) -> None:
        backend = MemBackend()
        mem = memory(str(tmp_path), backend)
        mem.observe(Turn(actor=Actor.USER, text="deploy", ts=5.0, id="a"))
        with pytest.raises(TurnValidationError):
            mem.observe(Turn(actor=Actor.USER, text="earlier", ts=1.0, id="b"))
        assert mem.journal.counts()["open_turns"] == 1
        mem.close()
        assert memory(str(tmp_path), backend).recovery.turns_replayed == 1
