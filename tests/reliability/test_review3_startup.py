"""Review 3 of the durability layer, start-up and input (R3-D4..D7): each failed before its fix.

Real embedded Chroma and the hashing embedder; the clock is injected.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from episeg.errors import ConfigError, JournalError
from episeg.memory import Memory
from episeg.types import Turn

from .helpers import one_turn_episode
from .review3_helpers import TIMEOUT, Clock, memory_for, stored_of, turn


def test_r3d4_recovery_keeps_at_most_max_sessions_resident(tmp_path: Path) -> None:
    memory = memory_for(tmp_path, max_sessions=2)
    for i in range(10):
        memory.observe(turn(f"topic {i} deploy the thing", f"s{i}", f"t{i}"))
    memory.close()
    again = memory_for(tmp_path, max_sessions=2)
    assert again.recovery.sessions == 10 and again.recovery.turns_replayed == 10
    assert again.sessions.resident == 2  # it was 10
    again.flush()
    assert stored_of(again, "alice") == sorted((f"s{i}", (f"t{i}",)) for i in range(10))
    again.close()


class TestR3D7BadArgumentsLockNothing:
    @pytest.mark.parametrize(
        "kw",
        [
            {"max_sessions": 0},
            {"max_sessions": 1.5},
            {"retry_interval": -1.0},
            {"retry_interval": float("nan")},
        ],
    )
    def test_a_config_error_before_the_journal_is_opened(
        self, tmp_path: Path, kw: dict[str, Any]
    ) -> None:
        try:
            memory_for(tmp_path, **kw)
        except ConfigError:
            memory_for(tmp_path).close()  # the path is not locked, even inside the handler
        else:
            pytest.fail(f"{kw} accepted")

    def test_a_failure_after_the_journal_opened_releases_it(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        def failing(self: Memory) -> None:
            raise JournalError("cannot read the journal")

        monkeypatch.setattr(Memory, "_recover", failing)
        try:
            memory_for(tmp_path)
        except JournalError:
            monkeypatch.undo()
            memory_for(tmp_path).close()  # was: "in use by another Memory"
        else:
            pytest.fail("no error")


ALICE = {"user": "alice", "session": "s"}


def test_r3d6_store_episodes_keeps_the_callers_summary(tmp_path: Path) -> None:
    memory = memory_for(tmp_path)
    turns = (  # alice's turns in session "s", as store_episodes requires (R4-C10)
        Turn(actor="user", text="the deploy failed with a 502 from the gateway", ts=1.0, **ALICE),
        Turn(actor="assistant", text="restart the ingress controller", ts=2.0, **ALICE),
    )
    vectors = memory.embedder.embed([t.text for t in turns])
    mine = dataclasses.replace(
        one_turn_episode("alice", "e1", "x"),
        turns=turns,
        opened_at=1.0,
        closed_at=2.0,
        summary="Gateway 502 on deploy: fixed by restarting ingress",
        embedding=vectors[0],
        turn_embeddings=vectors,
    )
    empty = dataclasses.replace(mine, id="e2", summary="")
    stored = {e.id: e.summary for e in memory.store_episodes([mine, empty])}
    assert stored["e1"] == "Gateway 502 on deploy: fixed by restarting ingress"
    assert stored["e2"] in {t.text for t in turns}  # an empty one is filled in (extractive)
    assert {e.id: e.summary for e in memory.episodes("alice")} == stored
    memory.close()


@pytest.mark.parametrize("restart", [False, True])
def test_r3d5_a_turn_after_the_timeout_opens_a_new_episode_whenever_last_checked(
    tmp_path: Path, restart: bool
) -> None:
    clock = Clock()
    start = clock.now
    memory = memory_for(tmp_path, clock=clock)
    memory.observe(turn("deploy the web app to prod", "s1", "a1"))
    clock.now = start + TIMEOUT - 1
    memory.observe(turn("unrelated other session note", "s2", "b1"))  # the tenant is checked
    if restart:  # a restart forgets when the tenant was last checked: same answer either way
        memory.close()
        memory = memory_for(tmp_path, clock=clock)
    clock.now = start + TIMEOUT + 30  # s1 idle 630 s; 31 s after the check, under its interval
    memory.observe(turn("deploy the web app to prod again", "s1", "a2", ts=3.0))
    memory.flush("alice")
    assert [ids for s, ids in stored_of(memory, "alice") if s == "s1"] == [("a1",), ("a2",)]
    memory.close()
