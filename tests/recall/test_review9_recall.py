"""Review 9 of recall's open and outbox segments (F186-F189), through real Chroma.

- F186: a recall during a flush could miss an accepted turn (stored part read first, then
  the outbox, then the open turns: the episode was in none of them when each was read).
- F187: the open-segment cache could be kept under a journal version older than its
  content, and serve an episode after maintenance archived it.
- F188: with ``recall.count_summaries`` open hits were charged no summary or dates, and
  ``context`` could cost the matched turn.
- F189: an archived episode waiting in the outbox was recalled, and a metadata filter
  never found an outbox episode that carries the metadata.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import episeg.durability.memory_open as memory_open
from episeg.config import EpisegConfig
from episeg.durability.memory_open import OpenRecall
from episeg.errors import StoreUnavailableError
from episeg.memory import Memory
from episeg.recall.hits import RecallHit
from episeg.store import collection
from episeg.testing import HashingEmbedder
from episeg.types import Turn
from tests.memory_helpers import hashing_memory, returned_words
from tests.recall.helpers import embedded_episode


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    opened = hashing_memory(tmp_path, retry_interval=0)
    yield opened
    opened.close()


def _ids(hits: list[RecallHit]) -> list[tuple[str, bool]]:
    return [(h.episode.id, h.open) for h in hits]


def test_a_flush_during_a_recall_never_hides_the_episode(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.observe(Turn(actor="user", text="zebra quartz invoice 4411", ts=1.0, user="alice"))
    ((episode_id, _),) = _ids(memory.recall("alice", "zebra quartz"))
    original = OpenRecall._with_open

    def flush_first(self: Memory, *args: Any, **kwargs: Any) -> list[RecallHit]:
        # the stored part is done: the episode moves to the store right now
        thread = threading.Thread(target=lambda: memory.flush("alice"))
        thread.start()
        thread.join()
        return original(self, *args, **kwargs)

    monkeypatch.setattr(OpenRecall, "_with_open", flush_first)
    assert [i for i, _ in _ids(memory.recall("alice", "zebra quartz"))] == [episode_id]
    monkeypatch.setattr(OpenRecall, "_with_open", original)
    assert _ids(memory.recall("alice", "zebra quartz")) == [(episode_id, False)]


def test_a_turn_read_after_the_version_does_not_poison_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [10_000.0]
    memory = hashing_memory(tmp_path, clock=lambda: now[0])
    memory.observe(Turn(actor="user", text="unrelated warmup", ts=1.0, user="alice", session="w"))
    memory.flush("alice")
    original = memory_open.pending_segments

    def racing(*args: Any) -> Any:  # a turn arrives after the version was read
        monkeypatch.setattr(memory_open, "pending_segments", original)
        turn = Turn(actor="user", text="zebra quartz invoice", ts=2.0, user="alice", session="s")
        thread = threading.Thread(target=lambda: memory.observe(turn))
        thread.start()
        thread.join()
        return original(*args)

    monkeypatch.setattr(memory_open, "pending_segments", racing)
    memory.recall("alice", "zebra quartz")
    memory.flush("alice")
    now[0] += 30 * 86400  # a month later maintenance archives the faded episodes
    assert memory.maintain("alice", archive=True).archived == 2
    assert memory.recall("alice", "zebra quartz") == []  # archived: never returned
    memory.close()


def test_count_summaries_charges_open_hits_and_keeps_the_match_with_context(
    tmp_path: Path,
) -> None:
    config = EpisegConfig().with_overrides(**{"recall.count_summaries": True})
    memory = Memory(
        path=tmp_path, embedder=HashingEmbedder(dim=64), judge=None, scorer=None, config=config
    )
    memory.observe(
        Turn(actor="user", text="zebra quartz invoice 4411", ts=1.0, user="alice", session="a")
    )
    memory.flush("alice")
    memory.observe(
        Turn(actor="user", text="zebra quartz ledger page 7", ts=5.0, user="alice", session="b")
    )
    for budget in (12, 20, 25, 40):
        hits = memory.recall("alice", "zebra quartz", k=5, max_words=budget)
        assert returned_words(hits) <= budget, (budget, _ids(hits))
    for context in (0, 1, 2):  # the match (4 words) + summary (4) + dates (2) = 10
        hits = memory.recall("alice", "invoice 4411", k=1, max_words=10, context=context)
        assert [t.text for h in hits for t in h.turns] == ["zebra quartz invoice 4411"]
    memory.close()


def test_outbox_episodes_obey_archived_metadata_and_their_own_times(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    archived = replace(
        embedded_episode("arch", ["zebra quartz invoice 4411"], 1000.0, memory.embedder),
        archived=True,
    )
    tagged = replace(
        embedded_episode("tagged", ["walrus ledger 7788"], 2000.0, memory.embedder),
        metadata={"team": "b"},
        opened_at=1500.0,  # store_episodes may give an episode wider times than its turns
    )

    def refuse(self: Any, episodes: Any) -> None:
        raise StoreUnavailableError("simulated: Chroma refuses writes")

    monkeypatch.setattr(collection.ChromaEpisodeStore, "add_merged", refuse)
    assert memory.store_episodes([archived, tagged]) == []
    assert {e.id for e in memory.pending_writes()} == {"arch", "tagged"}
    assert memory.recall("alice", "zebra quartz") == []
    found = memory.recall("alice", "walrus ledger", metadata={"team": "b"})
    assert _ids(found) == [("tagged", True)]
    assert memory.recall("alice", "walrus ledger", metadata={"team": "a"}) == []
    assert _ids(memory.recall("alice", "walrus ledger", until=1600.0)) == [("tagged", True)]
