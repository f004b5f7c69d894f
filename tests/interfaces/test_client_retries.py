"""The clients' ids and retries: a turn sent again after a lost answer is recorded once.

Through the real service on loopback where the behaviour is the service's
(dedupe by id, the 413 of a large body); with ``httpx.MockTransport`` where
only the client's policy is under test (which call is retried after what).
"""

from __future__ import annotations

import asyncio
import io
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from episeg.client import APIError, AsyncClient, Client, NoAnswerError, RetryPolicy
from episeg.errors import ConfigError, RecallArgumentError, TurnValidationError
from episeg.interfaces.runtime import open_memory
from episeg.interfaces.service import create_app
from episeg.memory import Memory
from episeg.testing import HashingEmbedder
from tests.interfaces.helpers import KEY_A, KEYS, LiveServer, free_port

QUICK = RetryPolicy(retries=2, backoff=0.01, max_wait=1.0)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[LiveServer, Memory]]:
    memory = open_memory(tmp_path, embedder=HashingEmbedder(dim=64))
    live = LiveServer(create_app(memory, KEYS))  # the default body limit, 1 MiB
    yield live, memory
    live.stop()
    memory.close()


def _slow_first_ingest(memory: Memory, seconds: float) -> None:
    """The first ingest is applied, then its answer is late (a client timeout in between)."""
    real = memory.ingest
    calls = {"n": 0}

    def ingest(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        calls["n"] += 1
        if calls["n"] == 1:
            time.sleep(seconds)
        return out

    memory.ingest = ingest  # type: ignore[method-assign]


def _stored_texts(client: Client, session: str) -> list[str]:
    client.flush(session)
    episodes = [e for e in client.episodes(limit=1000) if e["session"] == session]
    return [t["text"] for e in episodes for t in client.episode(e["id"])["turns"]]


class TestOnceThroughTheRealService:
    def test_a_turn_retried_after_a_timeout_is_recorded_once(self, served) -> None:
        live, memory = served
        _slow_first_ingest(memory, 1.2)
        turn = {"actor": "user", "text": "deploy v2 to prod", "session": "s"}
        with Client(live.url, KEY_A, timeout=0.8, retry=QUICK) as c:
            answer = c.observe(turn)  # attempt 1 applied but timed out; attempt 2 skipped
            assert answer["accepted"] == 0 and len(answer["duplicates"]) == 1
            assert answer["duplicates"][0].startswith("c-")
            assert _stored_texts(c, "s") == ["deploy v2 to prod"]

    def test_without_retries_the_error_names_the_ids_to_send_again(self, served) -> None:
        live, memory = served
        _slow_first_ingest(memory, 1.2)
        batch = [{"actor": "user", "text": f"step {i}", "session": "b"} for i in range(3)]
        with Client(live.url, KEY_A, timeout=0.5, retry=RetryPolicy(retries=0)) as c:
            with pytest.raises(NoAnswerError) as err:
                c.observe_batch(batch)
            assert err.value.status == 0 and err.value.applied
            ids = err.value.sent_ids
            assert len(ids) == 3 and len(set(ids)) == 3
            time.sleep(1.0)  # the first send is still being applied
            again = c.observe_batch([{**t, "id": i} for t, i in zip(batch, ids, strict=True)])
            assert again["accepted"] == 0 and sorted(again["duplicates"]) == sorted(ids)
            assert _stored_texts(c, "b") == ["step 0", "step 1", "step 2"]

    def test_two_equal_turns_sent_on_purpose_are_both_recorded(self, served) -> None:
        live, _ = served
        turn = {"actor": "user", "text": "ok", "session": "twice"}
        with Client(live.url, KEY_A) as c:
            assert c.observe(turn)["accepted"] == c.observe(turn)["accepted"] == 1
            assert _stored_texts(c, "twice") == ["ok", "ok"]

    def test_messages_get_ids_too(self, served) -> None:
        live, _ = served
        messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
        with Client(live.url, KEY_A) as c:
            c.observe_messages(messages, session="m")
            turns = [t for e in c.flush("m")["closed"] for t in c.episode(e["id"])["turns"]]
        assert [t["id"][:2] for t in turns] == ["c-", "c-"]

    def test_no_server_is_no_answer_and_nothing_applied(self) -> None:
        url = f"http://127.0.0.1:{free_port()}"
        with Client(url, KEY_A, retry=QUICK) as c, pytest.raises(NoAnswerError) as err:
            c.used(["e1"])  # even a call that is never repeated: nothing reached it
        assert err.value.applied is False and "nothing reached" in str(err.value)

    def test_the_async_client_gets_the_413_of_a_body_a_few_mb_over(self, served) -> None:
        live, _ = served
        body = b'{"x": "' + b"a" * (8 * 1024 * 1024) + b'"}\n'

        async def send() -> APIError:
            async with AsyncClient(live.url, KEY_A, retry=QUICK) as c:
                with pytest.raises(APIError) as err:
                    await c.import_episodes(body)
            return err.value

        refused = asyncio.run(send())
        assert refused.status == 413 and "request body over" in str(refused.detail)


class _Counting:
    """A mock transport answering from ``answers`` in turn (the last one repeats)."""

    def __init__(self, *answers: httpx.Response | Exception) -> None:
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.answers[min(len(self.requests), len(self.answers)) - 1]
        if isinstance(answer, Exception):
            raise answer
        return answer

    def client(self) -> Client:
        return Client("http://service", "k", transport=httpx.MockTransport(self), retry=QUICK)


class TestWhatIsRetried:
    @pytest.mark.parametrize(
        ("call", "tries"),
        [
            (lambda c: c.recall("deploy"), 3),
            (lambda c: c.observe({"actor": "user", "text": "x"}), 3),
            (lambda c: c.healthz(), 3),
            (lambda c: c.used(["e1"]), 1),  # a repeat would reinforce twice
            (lambda c: c.forget("e1"), 1),  # a repeat would answer 404
        ],
    )
    def test_after_a_lost_answer_only_what_is_safe_to_repeat(self, call, tries) -> None:
        mock = _Counting(httpx.ReadTimeout("slow"))
        with mock.client() as c, pytest.raises(NoAnswerError) as err:
            call(c)
        assert len(mock.requests) == tries and err.value.applied

    def test_a_503_that_asks_for_a_short_wait_is_retried_for_every_call(self) -> None:
        busy = httpx.Response(503, json={"detail": "busy"}, headers={"retry-after": "0.01"})
        mock = _Counting(busy, httpx.Response(200, json={"confirmed": ["e1"]}))
        with mock.client() as c:
            assert c.used(["e1"]) == {"confirmed": ["e1"]}
        assert len(mock.requests) == 2

    def test_a_wait_longer_than_max_wait_goes_to_the_caller_at_once(self) -> None:
        busy = httpx.Response(503, json={"detail": "busy"}, headers={"retry-after": "60"})
        mock = _Counting(busy)
        with mock.client() as c, pytest.raises(APIError) as err:
            c.recall("deploy")
        assert err.value.status == 503 and err.value.retry_after == 60 and len(mock.requests) == 1

    def test_a_retry_sends_the_same_ids(self) -> None:
        mock = _Counting(httpx.ReadTimeout("slow"), httpx.Response(200, json={"accepted": 1}))
        with mock.client() as c:
            c.observe_batch([{"actor": "user", "text": "a"}, {"actor": "user", "text": "b"}])
        first, second = (r.read() for r in mock.requests)
        assert first == second and b'"id": "c-' in first.replace(b'":"', b'": "')

    def test_an_error_answer_is_not_retried(self) -> None:
        mock = _Counting(httpx.Response(422, json={"detail": "bad"}))
        with mock.client() as c, pytest.raises(APIError):
            c.observe({"actor": "user", "text": "x"})
        assert len(mock.requests) == 1

    @pytest.mark.parametrize("bad", [{"retries": -1}, {"retries": 1.5}, {"max_wait": float("inf")}])
    def test_a_bad_policy_is_refused(self, bad) -> None:
        with pytest.raises(ConfigError):
            RetryPolicy(**bad)


class _Cut(httpx.SyncByteStream, httpx.AsyncByteStream):
    def __iter__(self) -> Iterator[bytes]:
        yield b'{"episeg-export": 1}\n'
        raise httpx.ReadError("peer closed connection")

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield b'{"episeg-export": 1}\n'
        raise httpx.ReadError("peer closed connection")


NDJSON = {"content-type": "application/x-ndjson"}


class TestExportIsTheServicesOrAnError:
    @pytest.mark.parametrize(
        ("answer", "detail"),
        [
            (
                lambda: httpx.Response(301, headers={"location": "https://x/v1/export"}),
                "redirected",
            ),
            (lambda: httpx.Response(200, text="<html>log in</html>"), "not the service's export"),
        ],
    )
    def test_sync_and_async(self, answer, detail) -> None:
        def transport(request: httpx.Request) -> httpx.Response:
            response: httpx.Response = answer()
            return response

        with Client("http://s", "k", transport=httpx.MockTransport(transport), retry=QUICK) as c:
            for call in (c.export, lambda: c.export_to(io.BytesIO())):
                with pytest.raises(APIError, match=detail):
                    call()

        async def both() -> None:
            mock = httpx.MockTransport(transport)
            async with AsyncClient("http://s", "k", transport=mock, retry=QUICK) as c:
                for call in (c.export, lambda: c.export_to(io.BytesIO())):
                    with pytest.raises(APIError, match=detail):
                        await call()

        asyncio.run(both())

    def test_a_cut_stream(self) -> None:
        sent: list[httpx.Request] = []

        def transport(request: httpx.Request) -> httpx.Response:
            sent.append(request)
            return httpx.Response(200, headers=NDJSON, stream=_Cut())

        with Client("http://s", "k", transport=httpx.MockTransport(transport), retry=QUICK) as c:
            with pytest.raises(NoAnswerError):  # export() read nothing out yet: retried
                c.export()
            assert len(sent) == 3
            file = io.BytesIO()
            with pytest.raises(APIError, match=r"broke after 21 bytes.*incomplete export"):
                c.export_to(file)  # bytes written: not retried, and said
            assert len(sent) == 4 and file.getvalue() == b'{"episeg-export": 1}\n'

        async def cut() -> None:
            mock = httpx.MockTransport(transport)
            async with AsyncClient("http://s", "k", transport=mock, retry=QUICK) as c:
                with pytest.raises(APIError, match="incomplete export"):
                    await c.export_to(io.BytesIO())

        asyncio.run(cut())


class TestArgumentsRefusedBeforeSending:
    def test_one_id_string_one_turn_one_message(self) -> None:
        mock = _Counting(httpx.Response(200, json={}))
        with mock.client() as c:
            with pytest.raises(RecallArgumentError, match="the string 'ab'"):
                c.used("ab")
            with pytest.raises(TurnValidationError, match="observe_batch takes a list"):
                c.observe_batch({"actor": "user", "text": "x"})  # type: ignore[dict-item]
            with pytest.raises(TurnValidationError, match="observe_messages takes a list"):
                c.observe_messages({"role": "user", "content": "x"})  # type: ignore[dict-item]
            with pytest.raises(TurnValidationError, match="a turn is"):
                c.observe(["user", "x"])  # type: ignore[arg-type]
        assert mock.requests == []
