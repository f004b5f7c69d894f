"""What the review-3 durability tests share: a clock, a Memory, turns, a store outage."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from episeg.config import EpisegConfig, IntakeConfig
from episeg.errors import StoreUnavailableError
from episeg.memory import Memory
from episeg.testing import HashingEmbedder
from episeg.types import Turn

TIMEOUT = 600.0


class Clock:
    """A settable clock for ``Memory(clock=...)`` (the idle-timeout tests share it)."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def memory_for(path: Path, *, timeout: float = TIMEOUT, **kw: Any) -> Memory:
    return Memory(
        path=path,
        embedder=HashingEmbedder(),  # the width of helpers.one_turn_episode
        judge=None,
        scorer=None,
        config=EpisegConfig(intake=IntakeConfig(idle_timeout=timeout)),
        **kw,
    )


def turn(text: str, session: str, tid: str, user: str = "alice", ts: float = 1.0) -> Turn:
    return Turn(actor="user", text=text, ts=ts, user=user, session=session, id=tid)


def down(*_: object, **__: object) -> None:
    raise StoreUnavailableError("store down")


def wait_for(condition: Callable[[], bool], seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def stored_of(memory: Memory, user: str) -> list[tuple[str, tuple[str, ...]]]:
    return sorted((e.session, tuple(e.turn_ids)) for e in memory.episodes(user))
