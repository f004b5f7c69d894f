"""Memory.store_episodes checks the whole batch first: a bad episode stores nothing (real Chroma).

Before, an episode Chroma refuses (another width) waited in the outbox for
ever, one without a turn broke every recall of its tenant, a missing
embedding came back as a JournalError (a disk problem, "retry"), and two
episodes under one id in one batch were both reported stored while only the
last was.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from episeg.errors import EpisodeValidationError, TenantError
from episeg.memory import Memory
from episeg.testing import HashingEmbedder
from episeg.types import Episode
from episeg.types.episode import MAX_EPISODE_ID

from .helpers import one_turn_episode


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    mem = Memory(path=tmp_path, embedder=HashingEmbedder(), judge=None, scorer=None)
    yield mem
    mem.close()


def _bad(good: Episode, **change: Any) -> Episode:
    return dataclasses.replace(good, id="bad", **change)


BAD = [
    ({"turns": ()}, "holds no turn"),
    ({"embedding": None}, "has no embedding"),
    ({"embedding": np.full(HashingEmbedder().dim, np.nan, np.float32)}, "non-finite"),
    ({"embedding": np.ones(3, np.float32)}, "3 values"),
    ({"turn_embeddings": np.ones((2, HashingEmbedder().dim), np.float32)}, "turn_embeddings"),
    ({"opened_at": 20.0}, "is after closed_at"),
    ({"closed_at": float("inf")}, "must be finite"),
    ({"strength": float("nan")}, "strength must be finite"),
    ({"recall_count": -1}, "recall_count >= 0"),
    ({"last_accessed": float("nan")}, "last_accessed must be finite"),
    ({"recall_count": 2**64}, "is not in 0 .. 2"),
    # user metadata the rules refuse: it was stored, then every read of the tenant (and the
    # journal's outbox, for every tenant, while the store was down) failed on it
    ({"metadata": {"owner": None}}, "value of 'owner' must be a str"),
    ({"metadata": {"tags": ["a", "b"]}}, "got list"),
    ({"metadata": {"note": "x" * 5000}}, "at most 1024"),
    ({"metadata": {"bad key": 1}}, "key 'bad key'"),
]


@pytest.mark.parametrize(("change", "message"), BAD)
def test_a_malformed_episode_stores_nothing_of_its_batch(
    memory: Memory, change: dict[str, Any], message: str
) -> None:
    good = one_turn_episode("alice", "good", "renew the TLS cert")
    with pytest.raises(EpisodeValidationError, match=rf"episode 1 \('bad'\): .*{message}"):
        memory.store_episodes([good, _bad(good, **change)])
    assert memory.episodes("alice") == [] and memory.pending_writes() == []
    assert [e.id for e in memory.store_episodes([good])] == ["good"]  # the memory still writes
    assert memory.recall("alice", "TLS cert", k=1)[0].episode.id == "good"


def test_an_id_the_api_could_not_name_is_refused(memory: Memory) -> None:
    """Ids up to MAX_EPISODE_ID characters are stored and named by ?id= (F94); longer: refused."""
    good = one_turn_episode("alice", "good", "renew the TLS cert")
    longest = dataclasses.replace(good, id="k" * MAX_EPISODE_ID)
    assert [e.id for e in memory.store_episodes([longest])] == [longest.id]
    too_long = dataclasses.replace(good, id="k" * (MAX_EPISODE_ID + 1))
    with pytest.raises(EpisodeValidationError, match=f"1 to {MAX_EPISODE_ID} characters"):
        memory.store_episodes([too_long])


def test_one_id_twice_in_a_batch_is_refused_and_across_calls_replaces(memory: Memory) -> None:
    monday = one_turn_episode("bob", "shared", "the prod deploy failed on migration 42")
    tuesday = one_turn_episode("bob", "shared", "what wine goes with risotto?")
    with pytest.raises(EpisodeValidationError, match="also episode 0's for 'bob'"):
        memory.store_episodes([monday, tuesday])
    assert memory.episodes("bob") == []
    # two tenants may use one id in one batch: each has its own collections
    both = memory.store_episodes([monday, one_turn_episode("carol", "shared", "carol's")])
    assert [(e.user, e.id) for e in both] == [("bob", "shared"), ("carol", "shared")]
    memory.store_episodes([tuesday])  # a later call under the same id is an update (LangGraph)
    assert [e.summary for e in memory.episodes("bob")] == ["what wine goes with risotto?"]


def test_an_invalid_tenant_is_a_tenant_error(memory: Memory) -> None:
    with pytest.raises(TenantError):
        memory.store_episodes([one_turn_episode(" alice", "e1", "x")])  # padded
