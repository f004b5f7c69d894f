"""F123: listing, use confirmation, maintenance and episode reads refuse malformed arguments.

Before, ``since=10**400`` raised ``OverflowError``; ``episodes(limit="5")`` a
``TypeError``; ``confirm_used(["x", 5])`` and ``episode(user, 5)`` a
``StoreError`` blaming Chroma; ``maintain(archive="no")`` archived (review 4).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from episeg.errors import ArgumentError, RecallArgumentError
from episeg.memory import Memory
from episeg.testing import HashingEmbedder
from episeg.types import Turn


@pytest.fixture
def memory(tmp_path: Path):
    m = Memory(path=tmp_path, embedder=HashingEmbedder(dim=64), judge=None, scorer=None)
    m.observe(Turn(actor="user", text="deploy v2 to prod", ts=1.0, user="alice"))
    m.flush("alice")
    yield m
    m.close()


@pytest.mark.parametrize("name", ["since", "until", "min_score"])
def test_a_number_too_large_for_a_float(memory, name) -> None:
    with pytest.raises(RecallArgumentError, match=f"{name} must be a finite number"):
        memory.recall("alice", "deploy", **{name: 10**400})


@pytest.mark.parametrize(
    ("limit", "offset"), [(None, 0), (1.5, 0), ("5", 0), (True, 0), (0, 0), (5, -1), (5, "0")]
)
def test_a_listing_page_must_be_integers(memory, limit, offset) -> None:
    with pytest.raises(RecallArgumentError, match="must be an integer"):
        memory.episodes("alice", limit=limit, offset=offset)
    assert len(memory.episodes("alice", limit=5, offset=0)) == 1


@pytest.mark.parametrize("ids", ["ab", ["x", 5], [["a"]], [""], 7, {"e1": 1}])
def test_confirm_used_takes_a_collection_of_id_strings(memory, ids) -> None:
    [stored] = memory.episodes("alice")
    with pytest.raises(RecallArgumentError, match="episode_ids must"):
        memory.confirm_used("alice", ids)
    assert memory.episode("alice", stored.id).recall_count == 0  # nothing was written
    assert [e.id for e in memory.confirm_used("alice", (stored.id,))] == [stored.id]


@pytest.mark.parametrize("archive", ["no", 1, None])
def test_maintain_takes_a_bool(memory, archive) -> None:
    with pytest.raises(RecallArgumentError, match="archive must be True or False"):
        memory.maintain("alice", archive=archive)


@pytest.mark.parametrize("episode_id", [5, ["a"], "", None])
def test_an_episode_id_is_a_non_empty_string(memory, episode_id) -> None:
    for call in (memory.episode, memory.unarchive):
        with pytest.raises(ArgumentError, match="episode_id must be a non-empty string"):
            call("alice", episode_id)
    with pytest.raises(ArgumentError, match="episode_id must be a non-empty string"):
        memory.update_episode("alice", episode_id, pinned=True)
