"""Auto ids survive every reload of a session from the journal: restart, eviction, refusal.

Client ids shaped like auto ids (``"s:2"``) make an auto id skip numbers; a
session replayed from the journal must go on giving the ids the uninterrupted
run gives, and must not refuse a later valid client turn as a conflict.
"""

from __future__ import annotations

import random
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from episeg.memory import Memory
from episeg.testing import HashingEmbedder
from episeg.types import Turn
from tests.segmentation.helpers import AUTOID_REVIEW, AUTOID_WORDS, autoid_turns

from .memstore import MemBackend

_TMP = "/dev/shm" if Path("/dev/shm").is_dir() else None


def _random(seed: int) -> list[Turn]:
    rng = random.Random(seed)
    n = rng.randrange(4, 12)
    spec = []
    for i in range(n):
        r = rng.random()
        tid = None if r < 0.6 else f"s:{rng.randrange(n + 3)}" if r < 0.9 else f"c{i}"
        spec.append((tid, rng.choice(["user", "assistant"]), " ".join(rng.sample(AUTOID_WORDS, 3))))
    return autoid_turns(spec, user="u")


def _run(turns: list[Turn], cut: int | None, how: str) -> tuple[list[str], list[list[str]]]:
    """Outcome per turn and the stored episodes' turn ids; at ``cut`` the session reloads."""
    backend, path = MemBackend(), tempfile.mkdtemp(dir=_TMP)

    def make() -> Memory:
        return Memory(
            path=path,
            embedder=HashingEmbedder(),
            judge=None,
            scorer=None,
            backend=backend,
            max_sessions=1,
        )

    mem, out = make(), []
    for i, turn in enumerate(turns):
        if i == cut:
            mem = _reload[how](mem, make, turn)
        try:
            mem.observe(turn)
            out.append(mem.journal.open_turns("u")[-1][1].id or "?")
        except Exception as exc:
            out.append(type(exc).__name__)
    mem.flush()
    stored = sorted(
        sorted(t.id or "" for t in e.turns) for e in backend.rows.values() if e.session == "s"
    )
    mem.close()
    return out, stored


def _restart(mem: Memory, make: Callable[[], Memory], turn: Turn) -> Memory:
    mem.close()  # the journal alone, as kill -9 leaves it
    return make()


def _evict(mem: Memory, make: Callable[[], Memory], turn: Turn) -> Memory:
    mem.observe(Turn(actor="user", text="elsewhere", ts=0.0, user="u", session="other"))
    assert mem.sessions.evicted >= 1  # max_sessions=1: session s was dropped
    return mem


def _refuse(mem: Memory, make: Callable[[], Memory], turn: Turn) -> Memory:
    with pytest.raises(ValueError):  # a turn from the past is refused: the session reloads
        mem.observe(Turn(actor="user", text="late", ts=-1.0, user="u", session="s"))
    return mem


_reload = {"restart": _restart, "evict": _evict, "refuse": _refuse}


@pytest.mark.parametrize("how", sorted(_reload))
def test_the_reviewers_case(how: str) -> None:
    turns = autoid_turns(AUTOID_REVIEW, user="u")
    live = _run(turns, None, how)
    assert live[0] == ["s:0", "s:2", "s:3", "x", "s:5", "s:4"]
    for cut in range(1, len(turns)):
        assert _run(turns, cut, how) == live, cut


@pytest.mark.parametrize("how", sorted(_reload))
def test_random_mixes(how: str) -> None:
    for seed in range(12):
        turns = _random(seed)
        live = _run(turns, None, how)
        for cut in (len(turns) // 3, 2 * len(turns) // 3):
            assert _run(turns, cut, how) == live, (seed, cut)
