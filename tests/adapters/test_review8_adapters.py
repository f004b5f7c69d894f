"""Review 8 of the adapters, the client and forget (F169-F176), through real Chroma.

- F169: a LangGraph delete of an item whose put waits in the outbox came back on the retry.
- F170: a conversation episode of session ``"default"`` (namespace ``(tenant,)``) could not be
  read, deleted or protected through LangGraph.
- F171: LangGraph search returned still-open segments that get and delete could not reach.
- F172: a LangGraph batch with a lone surrogate in a value was half applied.
- F173: a LangGraph value nested past Python's recursion limit raised a bare RecursionError.
- F174: the OpenAI Agents session failed the run on an item text with a lone surrogate.
- F175: the HTTP client let ``httpx.DecodingError`` escape instead of a typed error.
- F176: a forget whose journal part failed could not be finished by a retry.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from episeg.adapters.langgraph_store import EpisegStore
from episeg.client import APIError, AsyncClient, Client, NoAnswerError
from episeg.errors import ArgumentError, JournalError, StoreUnavailableError
from episeg.memory import Memory
from episeg.store import collection
from episeg.types import Turn
from tests.memory_helpers import hashing_memory

NS = ("alice", "prefs")


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    opened = hashing_memory(tmp_path, retry_interval=0)
    yield opened
    opened.close()


def test_a_deleted_item_whose_put_waited_in_the_outbox_stays_deleted(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = EpisegStore(memory)
    real = collection.ChromaEpisodeStore.add_merged

    def refuse(self: Any, episodes: Any) -> None:
        raise StoreUnavailableError("simulated: Chroma refuses writes")

    monkeypatch.setattr(collection.ChromaEpisodeStore, "add_merged", refuse)
    store.put(NS, "secret", {"text": "my card pin is 4411"})  # accepted: waits in the outbox
    monkeypatch.setattr(collection.ChromaEpisodeStore, "add_merged", real)
    assert len(memory.pending_writes()) == 1
    store.delete(NS, "secret")
    assert memory.pending_writes() == []
    memory.retry_pending()
    assert store.get(NS, "secret") is None


def _conversation(memory: Memory, session: str) -> None:
    for n, text in enumerate(["The deploy of billing failed", "Release the migration lock"]):
        actor = "user" if n == 0 else "assistant"
        memory.observe(Turn(actor=actor, text=text, ts=1.0 + n, user="alice", session=session))


def test_a_conversation_episode_of_the_default_session_is_read_protected_and_deleted(
    memory: Memory,
) -> None:
    store = EpisegStore(memory)
    _conversation(memory, "default")
    memory.flush("alice")
    (hit,) = store.search(("alice",), query="billing deploy migration lock")
    namespace, key = tuple(hit.namespace), hit.key
    assert namespace == ("alice",)
    item = store.get(namespace, key)
    assert item is not None and item.value["summary"]
    with pytest.raises(ArgumentError, match="read and deleted, not replaced"):
        store.put(namespace, key, {"text": "replaced"})
    store.delete(namespace, key)
    assert memory.episodes("alice") == []


def test_search_returns_only_items_get_and_delete_can_reach(memory: Memory) -> None:
    store = EpisegStore(memory)
    memory.observe(
        Turn(actor="user", text="my card pin is 4411, remember", ts=1.0, user="alice", session="c")
    )
    assert store.search(("alice",), query="card pin") == []  # open: recall's, not an item
    memory.flush("alice")
    (hit,) = store.search(("alice",), query="card pin")
    assert store.get(tuple(hit.namespace), hit.key) is not None
    store.delete(tuple(hit.namespace), hit.key)
    assert store.search(("alice",), query="card pin") == []


def test_a_batch_with_a_lone_surrogate_writes_nothing(memory: Memory) -> None:
    from langgraph.store.base import PutOp

    store = EpisegStore(memory)
    ops = [PutOp(NS, "good", {"text": "fine"}), PutOp(NS, "bad", {"text": "a \udcff b"})]
    with pytest.raises(ArgumentError, match="'bad'"):
        store.batch(ops)
    assert store.get(NS, "good") is None
    with pytest.raises(ArgumentError, match="'bad'"):
        store.put(NS, "bad", {"text": "a \udcff b"})


def test_a_value_nested_too_deeply_is_a_typed_error(memory: Memory) -> None:
    store = EpisegStore(memory)
    value: dict[str, Any] = {"leaf": 1}
    for _ in range(5000):
        value = {"v": value}
    with pytest.raises(ArgumentError, match="nested too deeply"):
        store.put(NS, "deep", value)
    assert store.get(NS, "deep") is None


def test_the_openai_session_keeps_an_item_with_a_lone_surrogate(memory: Memory) -> None:
    from episeg.adapters.openai_agents import EpisegSession

    session = EpisegSession("chat", memory=memory, user="alice")
    items: list[Any] = [
        {"role": "user", "content": "list my files"},
        {"type": "function_call", "call_id": "c1", "name": "ls", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "report\udcff.txt"},
        {"role": "assistant", "content": "you have one report"},
    ]
    asyncio.run(session.add_items(items))
    assert len(asyncio.run(session.get_items())) == 4  # the history keeps every item
    texts = [t.text for e in memory.flush("alice") for t in e.turns]
    assert "report\ufffd.txt" in texts


def _undecodable(request: httpx.Request) -> httpx.Response:
    headers = {"content-encoding": "gzip", "content-type": "text/html"}
    return httpx.Response(502, headers=headers, content=b"<html>Bad Gateway</html>")


def test_the_client_turns_an_undecodable_answer_into_a_typed_error() -> None:
    client = Client("http://svc", "k" * 20, transport=httpx.MockTransport(_undecodable))
    with pytest.raises(NoAnswerError) as caught:
        client.recall("x")
    assert isinstance(caught.value, APIError) and caught.value.applied

    async def recall() -> None:
        transport = httpx.MockTransport(_undecodable)
        async with AsyncClient("http://svc", "k" * 20, transport=transport) as aclient:
            await aclient.recall("x")

    with pytest.raises(NoAnswerError):
        asyncio.run(recall())


def test_a_forget_whose_journal_part_failed_is_finished_by_a_retry(memory: Memory) -> None:
    turn = Turn(
        actor="user", text="my card pin is 4411", ts=1.0, id="t1", user="alice", session="s"
    )
    memory.observe(turn)
    (episode,) = memory.flush("alice")
    real = memory.journal._transaction
    left = {"failures": 1}

    @contextmanager
    def flaky(what: str) -> Iterator[None]:
        if what.startswith("erasing data") and left["failures"]:
            left["failures"] -= 1
            raise JournalError(f"journal: {what} failed: database or disk is full (injected)")
        with real(what):
            yield

    memory.journal._transaction = flaky  # type: ignore[method-assign]
    with pytest.raises(JournalError):
        memory.forget("alice", episode=episode.id)
    again = memory.forget("alice", episode=episode.id)
    assert again.episodes == (episode.id,) and again.missing == ()
    assert memory.episodes("alice") == []
    fresh = Turn(actor="user", text="a brand new note", ts=5.0, id="t1", user="alice", session="s")
    memory.observe(fresh)  # "a forgotten turn id is accepted again"
    assert [t.text for e in memory.flush("alice") for t in e.turns] == ["a brand new note"]
