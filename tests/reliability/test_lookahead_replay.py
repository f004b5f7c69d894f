"""Crash/replay with a boundary model that reads a later turn (streams whose roles are
unknown): a Memory abandoned mid-stream and reopened ends with exactly the episodes of
an uninterrupted run, and a replay asks the judge nothing the live run did not."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from episeg.config import CombinerConfig, EpisegConfig, JudgeConfig
from episeg.durability.journal import Journal
from episeg.errors import JournalError
from episeg.memory import Memory
from episeg.testing import MiniLMShaped, ScriptedJudge
from episeg.types import Episode, Turn
from tests.property_budget import examples

from .helpers import by_turns
from .memstore import MemBackend
from .test_replay import assert_tiles, build, crashed, crashed_with_judge, turn_specs

_TMP = "/dev/shm" if Path("/dev/shm").is_dir() else None


def config(**judge: Any) -> EpisegConfig:
    return EpisegConfig(
        combiner=CombinerConfig(kind="learned", roles_known=False),
        judge=JudgeConfig(**judge) if judge else JudgeConfig(),
    )


def memory(path: str, backend: MemBackend, **kw: Any) -> Memory:
    return Memory(
        path=path,
        embedder=MiniLMShaped(),
        judge=kw.pop("judge", None),
        scorer=None,
        backend=backend,
        config=kw.pop("config", config()),
        **kw,
    )


def uninterrupted(turns: list[Turn], **kw: Any) -> dict[str, Episode]:
    backend = MemBackend()
    with tempfile.TemporaryDirectory(dir=_TMP) as path:
        mem = memory(path, backend, **kw)
        assert mem.sessions.for_tenant("u0").lookahead == 1  # what this file is about
        mem.ingest(turns)
        mem.flush()
        mem.close()
    return backend.rows


class TestLookaheadReplay:
    @settings(
        max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow]
    )
    @given(
        specs=turn_specs, cuts=st.lists(st.integers(0, 40), max_size=4), resend=st.integers(0, 5)
    )
    def test_restart_yields_uninterrupted_episodes(
        self, specs: Any, cuts: list[int], resend: int
    ) -> None:
        turns = build(specs)
        want = uninterrupted(turns)
        backend = crashed(turns, [min(c, len(turns)) for c in cuts], resend, memory)
        assert by_turns(backend.rows) == by_turns(want)
        assert_tiles(backend.rows, turns)

    @settings(
        max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow]
    )
    @given(specs=turn_specs, cuts=st.lists(st.integers(0, 40), min_size=1, max_size=3))
    def test_replay_with_judge_asks_it_nothing_new(self, specs: Any, cuts: list[int]) -> None:
        # the periodic cadence asks the judge every 3rd turn whatever the model's logit
        cfg = config(gate="both", every=3)
        turns = build(specs)
        script = ["continue", "new", "sub-episode", "error"] * 40
        reference = ScriptedJudge(script)
        want = uninterrupted(turns, judge=reference, config=cfg)
        backend, made = crashed_with_judge(turns, cuts, script, cfg, memory)
        assert by_turns(backend.rows) == by_turns(want)
        assert made == reference.calls

    @pytest.mark.parametrize("cut", [1, 2, 3, 7, 12])
    def test_ids_given_by_the_intake_continue_after_a_restart(
        self, tmp_path: Path, cut: int
    ) -> None:
        # Without ids the intake numbers turns; a checkpoint taken while a turn waits
        # must start the count where its episode's first turn took it, or the
        # turns after a restart are numbered (and so stored) otherwise.
        words = ["deploy prod", "train to cambridge", "pizza for two", "jwt key rotated"]
        turns = [
            Turn(actor="user", text=f"{words[i // 4 % 4]} {i}", ts=float(i), user="u")
            for i in range(16)
        ]
        want = uninterrupted(turns)
        backend = MemBackend()
        for part in (turns[:cut], turns[cut:]):
            mem = memory(str(tmp_path), backend)
            mem.ingest(part)
            if part[-1] is turns[-1]:
                mem.flush()
            mem.close()
        assert by_turns(backend.rows) == by_turns(want)
        assert sorted(i for e in backend.rows.values() for i in e.turn_ids) == sorted(
            f"default:{i}" for i in range(16)
        )


class TestJournalKeepsTheDecidedTurnsAnswer:
    def test_the_answer_lands_on_the_decided_turns_row(self, tmp_path: Path) -> None:
        backend = MemBackend()
        judge = ScriptedJudge(["continue"] * 50)
        cfg = config(gate="both", every=1)  # asked on every turn that may open
        mem = memory(str(tmp_path), backend, judge=judge, config=cfg)
        for i in range(6):
            mem.observe(Turn(actor="user", text=f"deploy prod step {i}", ts=float(i), user="u"))
        mem.close()
        journal = Journal(tmp_path / "journal.sqlite3")
        [session] = journal.sessions(open_only=True)
        answered = [t.id for t, _, judged in session.turns if judged is not None]
        journal.close()
        assert judge.calls > 0 and answered
        # the newest turn waits for the next one: nothing has been asked about it
        assert session.turns[-1][2] is None and len(answered) == judge.calls

    def test_a_restart_replays_each_answer_on_its_own_turn(self, tmp_path: Path) -> None:
        # The model alone would cut before every turn it may (threshold -10); the judge,
        # asked on every turn, decides instead. A replay that took an answer for another
        # turn's (or lost one) would cut elsewhere.
        cfg = EpisegConfig(
            combiner=CombinerConfig(kind="learned", roles_known=False, threshold=-10.0),
            judge=JudgeConfig(gate="both", every=1),
        )
        turns = [
            Turn(actor="user", text=f"deploy prod step {i}", ts=float(i), user="u", id=f"t{i}")
            for i in range(16)
        ]
        script = ["continue", "continue", "new", "continue", "new", "new"] * 10
        reference = ScriptedJudge(script)
        want = uninterrupted(turns, judge=reference, config=cfg)
        assert 1 < len(want) < len(turns)  # the judge, not the model, cut them
        backend, made = MemBackend(), 0
        for part in (turns[:9], turns[9:15], turns[15:]):  # each cut inside an episode
            judge = ScriptedJudge(script[made:])
            mem = memory(str(tmp_path), backend, judge=judge, config=cfg)
            assert judge.calls == 0
            mem.ingest(part)
            if part[-1] is turns[-1]:
                mem.flush()
            made += judge.calls
            mem.close()
        assert made == reference.calls
        assert by_turns(backend.rows) == by_turns(want)

    def test_an_answer_about_a_turn_that_is_not_open_is_refused(self, tmp_path: Path) -> None:
        journal = Journal(tmp_path / "j.sqlite3")
        turn = Turn(actor="user", text="deploy", ts=0.0, id="s:0", user="u", session="s")
        with pytest.raises(JournalError, match="not an open turn"):
            journal.record(
                turn,
                np.ones(2, np.float32),
                judge='{"decision": "continue"}',
                closed=(),
                checkpoint=None,
                judged="s:9",
            )
        journal.close()
