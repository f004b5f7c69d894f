"""Review 4 (core): typed errors for malformed episodes, arguments and turns (R4-C10 to R4-C12).

Before, these gave a bare ``TypeError``/``AttributeError``, a ``StoreError`` blaming the
store, a silent ``[]``, or were coerced (``archived="no"`` stored an archived episode).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from episeg.config import EpisegConfig, IntakeConfig
from episeg.errors import (
    ArgumentError,
    EpisodeValidationError,
    TenantError,
    TurnValidationError,
)
from episeg.memory import Memory
from episeg.testing import HashingEmbedder
from episeg.types import Salience, Turn, Verdict
from episeg.types.enums import Decision

from .helpers import one_turn_episode


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    config = EpisegConfig(intake=IntakeConfig(idle_timeout=600))
    mem = Memory(path=tmp_path, embedder=HashingEmbedder(), judge=None, scorer=None, config=config)
    yield mem
    mem.close()


GOOD = one_turn_episode("bob", "good", "the deploy failed with a 502")
_OTHER_TURN = dataclasses.replace(GOOD.turns[0], user="mallory", session="zzz")
_LATE_TURN = dataclasses.replace(GOOD.turns[0], ts=99.0)
_KIND_TURN = Turn(actor="user", text="thanks", ts=10.0, user="bob", session="s", type="tool-error")

BAD_FIELDS = [
    ({"id": 123}, "id must be a string"),
    ({"opened_at": "1"}, "opened_at must be an int or float, got str"),
    ({"closed_at": None}, "closed_at must be an int or float, got NoneType"),
    ({"strength": "high"}, "strength must be an int or float"),
    ({"strength": np.float32(0.5)}, "strength must be an int or float, got float32"),
    ({"last_accessed": True}, "last_accessed must be an int or float, got bool"),
    ({"recall_count": 1.5}, "recall_count must be an int, got float"),
    ({"recall_count": np.int64(2)}, "recall_count must be an int, got int64"),
    ({"archived": "no"}, "archived must be True or False"),
    ({"pinned": 1}, "pinned must be True or False"),
    ({"summary": 5}, "summary must be a string"),
    ({"parent_id": 5}, "parent_id must be a string"),
    ({"salience": 7}, "salience must be a Salience"),
    ({"turns": ({"actor": "user", "text": "x", "ts": 1.0},)}, "turns must be a tuple of Turns"),
    ({"boundary_verdicts": ("x",)}, "boundary_verdicts must be a tuple of Verdicts"),
    ({"session": ""}, "session must be a non-empty string"),
    ({"session": "a\x00b"}, "control, format and surrogate"),
    ({"turns": (_OTHER_TURN,)}, "turn 0 is of user 'mallory', session 'zzz'"),
    ({"turns": (_LATE_TURN,)}, "turn 0 has ts 99.0, outside opened_at .. closed_at"),
    ({"turns": (_KIND_TURN,)}, "turn 0: a user turn cannot have type 'tool-error'"),
]


class TestStoreEpisodesFields:
    """R4-C10: every field of a hand-made episode is checked; nothing is coerced."""

    @pytest.mark.parametrize(("change", "message"), BAD_FIELDS)
    def test_a_mistyped_field_stores_nothing(
        self, memory: Memory, change: dict[str, Any], message: str
    ) -> None:
        bad = dataclasses.replace(GOOD, **change)
        with pytest.raises(EpisodeValidationError, match=message):
            memory.store_episodes([GOOD, bad])
        assert memory.episodes("bob", include_archived=True) == []
        assert memory.pending_writes() == []

    def test_well_typed_fields_are_stored_as_given(self, memory: Memory) -> None:
        verdict = Verdict("marker", Decision.BOUNDARY, 1.0)
        fine = dataclasses.replace(
            GOOD,
            salience=Salience.scored(7, scorer="me"),
            boundary_verdicts=(verdict,),
            recall_count=2,
            strength=np.float64(0.5),  # a float (subclass): the journal encodes it
            pinned=True,
        )
        [stored] = memory.store_episodes([fine])
        [listed] = memory.episodes("bob")
        assert (listed.recall_count, listed.pinned, listed.boundary_verdicts) == (
            2,
            True,
            (verdict,),
        )
        assert stored.id == "good"


class TestMemoryArguments:
    """R4-C11: observe, flush and close_idle answer a malformed argument with a typed error."""

    @pytest.mark.parametrize("bad", [{"actor": "user", "text": "hi", "ts": 1.0}, None, "hi"])
    def test_observe_takes_only_a_turn(self, memory: Memory, bad: object) -> None:
        with pytest.raises(TurnValidationError, match=r"must be an episeg\.types\.Turn"):
            memory.observe(bad)  # type: ignore[arg-type]

    def test_flush_refuses_a_session_that_is_not_a_string(self, memory: Memory) -> None:
        memory.observe(Turn(actor="user", text="deploy", ts=1.0, user="bob", session="123"))
        with pytest.raises(ArgumentError, match="session must be a string or None, got int"):
            memory.flush("bob", session=123)  # type: ignore[arg-type]
        assert [e.session for e in memory.flush("bob", session="123")] == ["123"]

    @pytest.mark.parametrize("now", ["soon", float("nan"), float("inf"), True])
    def test_close_idle_refuses_a_now_that_is_no_finite_time(
        self, memory: Memory, now: object
    ) -> None:
        memory.observe(Turn(actor="user", text="book the flight", ts=1.0, user="bob"))
        with pytest.raises(ArgumentError, match="now must be a finite number or None"):
            memory.close_idle(now)  # type: ignore[arg-type]
        assert memory.journal.counts()["open_turns"] == 1

    @pytest.mark.parametrize("user", [" bob", 123, ""])
    def test_close_idle_refuses_an_invalid_tenant(self, memory: Memory, user: object) -> None:
        with pytest.raises(TenantError):
            memory.close_idle(user=user)  # type: ignore[arg-type]

    def test_close_idle_still_takes_numpy_times(self, memory: Memory) -> None:
        memory.observe(Turn(actor="user", text="book the flight", ts=1.0, user="bob"))
        assert [len(e.turns) for e in memory.close_idle(np.float64(1e10), user="bob")] == [1]


class TestTurnFields:
    """R4-C12: numeric ts kinds, and a type the actor cannot produce."""

    @pytest.mark.parametrize("ts", [np.float32(1.5), np.int64(2), np.float64(1.5)])
    def test_a_numpy_ts_is_a_number(self, ts: Any) -> None:
        turn = Turn(actor="user", text="x", ts=ts)
        assert turn.ts == float(ts) and type(turn.ts) is float

    @pytest.mark.parametrize("ts", [Decimal("1.5"), "1.5", True, np.bool_(True)])
    def test_a_ts_that_is_not_a_real_number_says_so(self, ts: Any) -> None:
        with pytest.raises(TurnValidationError, match="a real one: int, float or a numpy number"):
            Turn(actor="user", text="x", ts=ts)

    @pytest.mark.parametrize(
        ("actor", "kind"),
        [("user", "tool-error"), ("system", "user-correction"), ("tool", "system-event"),
         ("assistant", "tool-success"), ("user", "assistant-answer")],
    )  # fmt: skip
    def test_memory_refuses_a_type_its_actor_cannot_produce(
        self, memory: Memory, actor: str, kind: str
    ) -> None:
        turn = Turn(actor=actor, text="thanks, all good!", ts=1.0, type=kind, user="bob")
        with pytest.raises(TurnValidationError, match=f"a {actor} turn cannot have type '{kind}'"):
            memory.observe(turn)
        with pytest.raises(TurnValidationError, match="turn 0 of the batch"):
            memory.ingest([turn])
        assert memory.journal.counts()["open_turns"] == 0

    @pytest.mark.parametrize(
        ("actor", "kind"),
        [("assistant", "tool-call"), ("tool", "tool-call"), ("tool", "tool-error"),
         ("user", "user-correction"), ("system", "system-event"), ("assistant", None)],
    )  # fmt: skip
    def test_the_pairs_harnesses_send_are_taken(
        self, memory: Memory, actor: str, kind: str | None
    ) -> None:
        memory.observe(Turn(actor=actor, text="ok", ts=1.0, type=kind, user="bob"))
        assert memory.journal.counts()["open_turns"] == 1
