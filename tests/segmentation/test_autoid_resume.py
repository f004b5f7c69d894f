"""Auto ids after a resume equal the uninterrupted run's, with client ids shaped like auto ids.

An auto id skips numbers a client already used as ids (``"<session>:<n>"``, F8).
Replaying the open episode gives every turn its journaled id, so the counter
after each turn must follow from the counter, the seen ids and the turn's id
alone; before, a skip inside the open episode was lost, later auto ids differed
from the live run's and a later valid client turn was refused as a conflict.
"""

from __future__ import annotations

import random

import numpy as np

from episeg.segmentation import Segmenter
from episeg.segmentation.checkpoint import SessionCheckpoint
from episeg.segmentation.intake import SessionIntake, turn_fingerprint
from episeg.testing import HashingEmbedder
from episeg.types import Turn
from tests.segmentation.helpers import AUTOID_REVIEW, AUTOID_WORDS, autoid_turns


def _random_turns(rng: random.Random, n: int) -> list[Turn]:
    out = []
    for i in range(n):
        r = rng.random()
        tid = None if r < 0.6 else f"s:{rng.randrange(n + 3)}" if r < 0.9 else f"c{i}"
        actor = rng.choice(["user", "assistant", "tool"])
        text = " ".join(rng.sample(AUTOID_WORDS, 3))
        if actor == "assistant" and rng.random() < 0.2:
            text += " <episode_boundary>"
        out.append(Turn(actor=actor, text=text, ts=float(i), id=tid, session="s"))
    return out


def _run(turns: list[Turn], cut: int | None) -> list[str]:
    """Ids given (or the refusal's name) per turn; at ``cut`` the session is resumed.

    The resume gets what the journal keeps: the checkpoint taken when the open
    episode opened, its turns as given with their ids and embeddings, every id seen.
    """
    seg = Segmenter(embedder=HashingEmbedder())
    checkpoint: SessionCheckpoint | None = None
    journaled: list[tuple[Turn, np.ndarray]] = []  # the open episode's turns
    seen: dict[str, int | None] = {}
    out: list[str] = []
    for i, turn in enumerate(turns):
        if i == cut and checkpoint is not None:
            seg = Segmenter(embedder=HashingEmbedder())
            seg.resume(checkpoint, journaled, seen_ids=seen, last_ts=journaled[-1][0].ts)
        try:
            step = seg.observe(turn)
        except Exception as exc:
            out.append(type(exc).__name__)
            continue
        if step.turn is None or step.embedding is None:
            out.append("duplicate")
            continue
        given = Turn(**{**turn.to_dict(), "id": step.turn.id})  # as the journal keeps it
        out.append(str(step.turn.id))
        seen[str(step.turn.id)] = turn_fingerprint(given)
        if step.opened:
            checkpoint, journaled = seg.checkpoint("default", "s"), []
        journaled.append((given, step.embedding))
    return out


def test_the_reviewers_case_resumed_at_every_turn() -> None:
    turns = autoid_turns(AUTOID_REVIEW)
    live = _run(turns, None)
    assert live == ["s:0", "s:2", "s:3", "x", "s:5", "s:4"]
    for cut in range(1, len(turns)):
        assert _run(turns, cut) == live, cut


def test_random_mixes_resumed_at_every_turn() -> None:
    for seed in range(60):
        rng = random.Random(seed)
        turns = _random_turns(rng, rng.randrange(3, 14))
        live = _run(turns, None)
        for cut in range(1, len(turns)):
            assert _run(turns, cut) == live, (seed, cut)


def test_a_client_id_equal_to_the_next_auto_id_takes_its_number() -> None:
    intake = SessionIntake(session_key=("u", "s"))

    def accept(tid: str | None) -> str | None:
        turn = Turn(actor="user", text="t", ts=0.0, id=tid, session="s", user="u")
        prepared = intake.accept(turn, max_turn_chars=100)
        return None if prepared is None else prepared.turn.id

    # s:1 is a client's; a client s:2 is what the next auto id would be: it takes number 2
    assert [accept(t) for t in ("s:1", "s:2", "x", None)] == ["s:1", "s:2", "x", "s:4"]
    assert intake.seq == 5
    assert [accept(t) for t in ("s:3", None)] == ["s:3", "s:6"]  # s:3 was never given
