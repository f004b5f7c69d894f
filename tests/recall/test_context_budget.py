"""Context never costs the match, and feedback checks its ids (F157, F158).

With ``context=n`` the matched turn and its neighbours were taken together or not
at all: neighbours too long for ``max_words`` dropped the match too, so asking
for context turned an answer into ``[]``, for stored episodes and open segments
alike. ``feedback`` sorted a list mixing ``str`` and ``int`` into a ``TypeError``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from episeg.errors import RecallArgumentError
from episeg.memory import Memory
from episeg.testing import HashingEmbedder
from episeg.types import Turn
from tests.recall.helpers import embedded_episode

LONG = " ".join(["lorem ipsum dolor sit amet"] * 6)  # 30 words


def _memory(tmp_path: Path) -> Memory:
    return Memory(path=tmp_path, embedder=HashingEmbedder(dim=64), judge=None, scorer=None)


def _stored(memory: Memory, texts: list[str]) -> None:
    memory.store_episodes([embedded_episode("e1", texts, 1000.0, memory.embedder)])


@pytest.mark.parametrize("context", [0, 1, 3])
def test_a_stored_match_is_kept_when_its_context_does_not_fit(tmp_path: Path, context: int) -> None:
    memory = _memory(tmp_path)
    _stored(memory, [LONG, "zebra quartz invoice 4411", LONG])
    hits = memory.recall("alice", "zebra quartz invoice", k=3, max_words=10, context=context)
    assert [[t.text for t in h.turns] for h in hits] == [["zebra quartz invoice 4411"]]
    wide = memory.recall("alice", "zebra quartz invoice", k=3, max_words=100, context=1)
    assert [len(t.text.split()) for h in wide for t in h.turns] == [30, 4, 30]  # all fit


def test_an_open_match_is_kept_when_its_context_does_not_fit(tmp_path: Path) -> None:
    memory = _memory(tmp_path)
    for n, (actor, text) in enumerate(
        [("user", LONG), ("assistant", "walrus ledger 7788"), ("user", LONG)]
    ):
        memory.observe(Turn(actor=actor, text=text, ts=9000.0 + n, user="bob", session="o"))
    (hit,) = memory.recall("bob", "walrus ledger", k=3, max_words=10, context=1)
    assert hit.open and [t.text for t in hit.turns] == ["walrus ledger 7788"]


def test_feedback_refuses_ids_that_are_not_strings(tmp_path: Path) -> None:
    memory = _memory(tmp_path)
    _stored(memory, ["zebra quartz invoice 4411"])
    hits = memory.recall("alice", "zebra quartz invoice")
    with pytest.raises(RecallArgumentError, match="used_ids"):
        memory.feedback("alice", hits, ["e1", 5])  # type: ignore[list-item]
