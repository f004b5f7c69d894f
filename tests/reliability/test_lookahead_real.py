"""The lookahead through the real parts: bundled MiniLM, the offline judge and scorer,
embedded Chroma; a restart in the middle of a stream whose roles are unknown."""

from __future__ import annotations

from pathlib import Path

import pytest

from episeg.config import CombinerConfig, EpisegConfig, PolicyConfig
from episeg.defaults import default_judge
from episeg.memory import Memory
from episeg.segmentation.segmenter import Segmenter
from episeg.types import Turn

pytestmark = pytest.mark.slow

# Three task dialogues spliced as DialSeg711 splices them (speakers not labelled for real).
TASKS = [
    "I need a taxi to come after 19:30.",
    "Where would you like to be picked up from?",
    "I am in wandlebury country park.",
    "Where will you be going to?",
    "I'll be going to meze bar restaurant.",
    "You are booked on a red lexus, contact number 07236149315.",
    "Where is the nearest hospital?",
    "Stanford Childrens Health is 6 miles away, at 899 Ames Ct.",
    "Oh no I have to get there, what's the address?",
    "The address is 899 Ames Ct, I sent the best route on your screen.",
    "I am looking for a train to Cambridge on Friday.",
    "When will you be travelling, and from where?",
    "Leaving Bishops Stortford after 20:45, two people.",
    "TR4664 is booked, your reference number is 0JI02QOT.",
]
CONFIG = EpisegConfig(
    combiner=CombinerConfig(kind="learned", roles_known=False),
    policy=PolicyConfig(hint_actors=("user", "assistant", "tool", "system")),
)


def turns() -> list[Turn]:
    return [
        Turn(
            actor="user" if i % 2 == 0 else "assistant", text=t, ts=float(i), user="ann", id=f"t{i}"
        )
        for i, t in enumerate(TASKS)
    ]


def test_a_restart_mid_stream_keeps_every_turn_once_and_the_same_episodes(
    tmp_path: Path, minilm
) -> None:
    batch = Segmenter(config=CONFIG, embedder=minilm, judge=default_judge(minilm)).segment(turns())
    assert Segmenter(config=CONFIG, embedder=minilm).lookahead == 1
    want = [e.turn_ids for e in batch]
    assert 1 < len(want) < len(TASKS)  # it cuts at a splice, not at every turn

    first = Memory(path=tmp_path, embedder=minilm, config=CONFIG)
    closed = [e for t in turns()[:9] for e in first.observe(t)]
    first.close()  # a crash: no flush, the waiting turn is only in the journal
    again = Memory(path=tmp_path, embedder=minilm, config=CONFIG)
    assert again.recovery.turns_replayed > 0
    closed += [e for t in turns()[9:] for e in again.observe(t)]
    closed += again.flush("ann")
    assert [e.turn_ids for e in closed] == want
    stored = sorted(tid for e in again.episodes("ann") for tid in e.turn_ids)
    assert stored == sorted(f"t{i}" for i in range(len(TASKS)))
    hits = again.recall("ann", "what is the hospital's address?", k=1)
    assert hits and any("899 Ames Ct" in t.text for t in hits[0].turns)
    again.close()
