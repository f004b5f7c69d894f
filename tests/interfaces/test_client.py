"""episeg.client against the real service on loopback, with the OpenAPI as the contract."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from episeg.client import (
    ENDPOINTS,
    APIError,
    AsyncClient,
    Client,
    Closed,
    EpisodeView,
    Imported,
    Maintained,
    RecallHit,
    Salience,
    VerdictView,
)
from episeg.interfaces.runtime import open_memory
from episeg.interfaces.service import create_app
from episeg.interfaces.service_auth import KeyRing
from episeg.memory import Memory
from episeg.testing import HashingEmbedder
from episeg.types import Episode, Turn
from tests.interfaces.helpers import KEY_A, KEY_B, KEYS, LiveServer

HTTP_METHODS = {"get", "post", "put", "patch", "delete"}
KEY_ADMIN = "key-admin-0123456789abcdef"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    memory = open_memory(tmp_path_factory.mktemp("client"), embedder=HashingEmbedder(dim=64))
    live = LiveServer(create_app(memory, KeyRing({**KEYS, KEY_ADMIN: {"admin": True}})))
    yield live
    live.stop()


@pytest.fixture(scope="module")
def openapi(server: LiveServer) -> dict[str, object]:
    document: dict[str, object] = httpx.get(server.url + "/openapi.json").json()
    return document


def _operations(document: dict[str, object]) -> set[tuple[str, str]]:
    paths = document["paths"]
    assert isinstance(paths, dict)
    return {(m.upper(), p) for p, ops in paths.items() for m in ops if m in HTTP_METHODS}


class TestContract:
    def test_every_openapi_operation_has_a_client_method_and_back(
        self, openapi: dict[str, object]
    ) -> None:
        assert set(ENDPOINTS.values()) == _operations(openapi)

    @pytest.mark.parametrize("cls", [Client, AsyncClient])
    def test_both_clients_have_every_method(self, cls: type) -> None:
        missing = [name for name in ENDPOINTS if not callable(getattr(cls, name, None))]
        assert missing == []
        if cls is AsyncClient:
            assert all(asyncio.iscoroutinefunction(getattr(cls, n)) for n in ENDPOINTS)

    def test_the_requests_the_client_sends_are_the_ones_it_declares(
        self, server: LiveServer, openapi: dict[str, object]
    ) -> None:
        sent: set[tuple[str, str]] = set()
        templates = {(m, p.split("{")[0]): p for m, p in _operations(openapi)}

        def record(request: httpx.Request) -> None:
            path = request.url.path
            key = next(
                (
                    t
                    for (m, prefix), t in templates.items()
                    if m == request.method
                    and (path == prefix or ("{" in t and path.startswith(prefix)))
                ),
                None,
            )
            assert key is not None, f"{request.method} {path} is not in the OpenAPI"
            sent.add((request.method, key))

        with Client(server.url, KEY_A) as c:
            c._http.event_hooks["request"] = [record]
            c.observe({"actor": "user", "text": "contract turn", "session": "contract"})
            c.observe_batch(
                [Turn(actor="assistant", text="noted", ts=time.time(), session="contract")]
            )
            c.observe_messages([{"role": "user", "content": "and one more"}], "contract")
            c.flush("contract")
            episode = c.episodes(limit=5)[0]
            c.episode(episode["id"])
            c.update_episode(episode["id"], pinned=True, metadata={"k": 1})
            c.unarchive(episode["id"])
            c.recall("contract", k=1, metadata={"k": 1}, min_score=0.0)
            c.used([episode["id"]])
            c.maintain()
            c.import_episodes(c.export())
            c.forget(episode["id"])
            c.forget_session("contract")
            c.forget_all()
            c.healthz()
        with Client(server.url, KEY_ADMIN) as admin:
            admin._http.event_hooks["request"] = [record]
            admin.tenants()
        assert sent == set(ENDPOINTS.values())

    def test_no_docs_pages_load_third_party_scripts_beside_the_browser(
        self, server: LiveServer
    ) -> None:
        """FastAPI's /docs and /redoc loaded CDN scripts (floating versions, no integrity
        check, no CSP) on the origin where /ui keeps the key in sessionStorage: a bad CDN
        release could read it (review 12)."""
        for page in ("/docs", "/redoc", "/docs/oauth2-redirect"):
            assert httpx.get(server.url + page).status_code == 404, page
        assert httpx.get(server.url + "/openapi.json").status_code == 200

    def test_openapi_is_tidy(self, openapi: dict[str, object]) -> None:
        from importlib.metadata import version

        info = openapi["info"]
        assert isinstance(info, dict) and info["version"] == version("episeg")
        text = json.dumps(openapi)
        for markup in (":class:", ":func:", ":meth:", "``"):
            assert markup not in text
        paths = openapi["paths"]
        assert isinstance(paths, dict)
        for path, ops in paths.items():
            for method, op in ops.items():
                codes = set(op["responses"])
                if path != "/v1/healthz":
                    assert {"401", "422", "503"} <= codes, (method, path, codes)
                assert "503" in codes
                if path.startswith("/v1/turns"):
                    assert "403" in codes

    @pytest.mark.parametrize(
        ("view", "schema"),
        [
            (Closed, "ClosedOut"),
            (EpisodeView, "EpisodeOut"),
            (RecallHit, "RecallHitOut"),
            (Salience, "SalienceOut"),
            (VerdictView, "VerdictOut"),
            (Imported, "ImportOut"),
            (Maintained, "MaintainOut"),
        ],
    )
    def test_the_typed_views_have_the_fields_the_service_sends(
        self, openapi: dict[str, Any], view: type, schema: str
    ) -> None:
        properties = openapi["components"]["schemas"][schema]["properties"]
        assert set(view.__annotations__) == set(properties)


class TestSyncClient:
    def test_round_trip_and_errors(self, server: LiveServer) -> None:
        with Client(server.url, KEY_B) as c:
            closed = c.observe_batch(
                [
                    {"actor": "user", "text": "rotate the jwt key", "session": "s1"},
                    {"actor": "assistant", "text": "done <episode_boundary>", "session": "s1"},
                    {"actor": "user", "text": "deploy prod 2.14", "session": "s1"},
                ]
            )
            assert closed["accepted"] == 3 and len(closed["closed"]) == 1
            c.flush()
            episodes = c.episodes()
            assert {e["user"] for e in episodes} == {"bob"}
            hits = c.recall("deploy prod", k=1, session=None)  # None options are not sent
            assert "deploy" in hits[0]["episode"]["summary"]
            assert c.used([hits[0]["episode"]["id"]]) == {"confirmed": [hits[0]["episode"]["id"]]}
            again = {e["id"]: e for e in c.episodes()}[hits[0]["episode"]["id"]]
            assert again["recall_count"] == 1
            with pytest.raises(APIError) as unknown:
                c.used(["no-such-episode"])
            assert unknown.value.status == 404
            with pytest.raises(APIError) as refused:
                c.observe(Turn(actor="user", text="x", ts=1.0, user="alice"))
            assert refused.value.status == 403
            with pytest.raises(APIError) as missing:
                c.forget("no-such-episode")
            assert missing.value.status == 404
            gone = c.forget(episodes[0]["id"])
            assert gone["forgotten"] == [episodes[0]["id"]]
            assert episodes[0]["id"] not in {e["id"] for e in c.episodes()}
        with Client(server.url, "wrong-key-0123456789") as c, pytest.raises(APIError) as bad:
            c.episodes()
        assert bad.value.status == 401

    def test_one_tenant_cannot_forget_anothers_episode(self, server: LiveServer) -> None:
        with Client(server.url, KEY_A) as alice:
            alice.observe({"actor": "user", "text": "alice private note", "session": "p"})
            alice.flush("p")
            target = alice.episodes()[0]["id"]
        with Client(server.url, KEY_B) as bob, pytest.raises(APIError) as refused:
            bob.forget(target)
        assert refused.value.status == 404
        with Client(server.url, KEY_A) as alice:
            assert target in {e["id"] for e in alice.episodes()}

    def test_maintain_archives_a_tenants_old_episodes_and_no_one_elses(
        self, server: LiveServer
    ) -> None:
        """A service could not be maintained: `episeg maintain` cannot open the folder the
        service holds (its journal), and no route ran the pass (review 11)."""
        old = 1.7e9  # 2023: every default horizon has passed
        with Client(server.url, KEY_B) as bob:
            bob.observe({"actor": "user", "text": "bob's old deploy", "session": "m", "ts": old})
            bob.flush("m")
        with Client(server.url, KEY_A) as alice:
            alice.observe({"actor": "user", "text": "alice old outage", "session": "m", "ts": old})
            alice.flush("m")
            assert alice.recall("old outage", k=1)
            report = alice.maintain(archive=True)
            assert report["archived"] >= 1 and report["below_floor"] >= 1
            assert alice.recall("old outage", k=1) == []
            again = alice.maintain(archive=True)  # a second pass archives nothing more
            assert again["archived"] == 0 and again["already_archived"] >= 1
        with Client(server.url, KEY_B) as bob:
            assert [h["episode"]["summary"] for h in bob.recall("old deploy", k=1)]
            assert all(not e["archived"] for e in bob.episodes(include_archived=True))


class TestAsyncClient:
    def test_same_calls_concurrently(self, server: LiveServer) -> None:
        async def run() -> list[str]:
            async with AsyncClient(server.url, KEY_A) as c:
                await asyncio.gather(
                    *(
                        c.observe({"actor": "user", "text": f"async {i}", "session": f"a{i}"})
                        for i in range(4)
                    )
                )
                await c.flush()
                assert (await c.healthz()) == {"status": "ok"}
                return [e["session"] for e in await c.episodes(limit=100)]

        sessions = asyncio.run(run())
        assert {"a0", "a1", "a2", "a3"} <= set(sessions)


ODD_IDS = [
    "lg:memories/prefs:editor",
    "a/b",
    "..",
    ".",
    "a?b#c",
    "%2F",
    "x y",
    "日本",
    "lg:" + "k" * 400,
]


def _store_odd_ids(tmp_path: Path) -> tuple[Memory, LiveServer]:
    memory = open_memory(tmp_path, embedder=HashingEmbedder(dim=64))
    episodes = []
    for i, eid in enumerate(ODD_IDS):
        turn = Turn(  # of the episode's user and session, as store_episodes requires
            actor="user", text=f"note {i} on deploys", ts=float(i), user="alice", session="s",
            id=f"t{i}",
        )  # fmt: skip
        vector = memory.embedder.embed([turn.text])
        episodes.append(
            Episode(
                id=eid, user="alice", session="s", turns=(turn,), summary=f"note {i}",
                opened_at=float(i), closed_at=float(i), embedding=vector[0], turn_embeddings=vector,
            )
        )  # fmt: skip
    memory.store_episodes(episodes)
    return memory, LiveServer(create_app(memory, KeyRing(KEYS)))


class TestEveryIdAnEpisodeMayHave:
    """Ids a caller chose (LangGraph namespaces hold "/"; "." and ".." are valid) reach the API."""

    def test_sync_client_reads_edits_unarchives_and_forgets_them(self, tmp_path: Path) -> None:
        memory, live = _store_odd_ids(tmp_path)
        try:
            with Client(live.url, KEY_A) as c:
                assert sorted(e["id"] for e in c.episodes(limit=100)) == sorted(ODD_IDS)
                for eid in ODD_IDS:
                    assert c.episode(eid)["id"] == eid
                    assert c.update_episode(eid, pinned=True)["pinned"] is True
                    assert c.unarchive(eid)["id"] == eid
                    assert c.forget(eid)["forgotten"] == [eid]
                assert c.episodes(limit=100) == []
        finally:
            live.stop()
            memory.close()

    def test_async_client_and_the_other_tenant(self, tmp_path: Path) -> None:
        memory, live = _store_odd_ids(tmp_path)

        async def run() -> None:
            async with AsyncClient(live.url, KEY_B) as bob:
                for eid in ODD_IDS:  # alice's ids are "not found" for bob, even "." and ".."
                    with pytest.raises(APIError) as missing:
                        await bob.episode(eid)
                    assert missing.value.status == 404
            async with AsyncClient(live.url, KEY_A) as alice:
                for eid in ODD_IDS:
                    assert (await alice.episode(eid))["id"] == eid
                    assert (await alice.forget(eid))["forgotten"] == [eid]

        try:
            asyncio.run(run())
        finally:
            live.stop()
            memory.close()


class TestAnswersThatAreNotTheServices:
    """A proxy's page, a redirect, a 200 that is not JSON: an APIError, with what was sent."""

    def _client(self, answer: httpx.Response) -> Client:
        return Client("http://service", transport=httpx.MockTransport(lambda request: answer))

    @pytest.mark.parametrize(
        ("answer", "status", "detail"),
        [
            (httpx.Response(502, json="bad gateway"), 502, '"bad gateway"'),
            (httpx.Response(502, text="<html>Bad Gateway</html>"), 502, "<html>Bad Gateway</html>"),
            (httpx.Response(200, text="<html>login</html>"), 200, "not a JSON answer"),
            (httpx.Response(307, headers={"location": "https://x/"}), 307, "redirected to"),
        ],
    )
    def test_an_unexpected_answer_is_an_api_error(
        self, answer: httpx.Response, status: int, detail: str
    ) -> None:
        with self._client(answer) as c, pytest.raises(APIError) as err:
            c.episodes()
        assert err.value.status == status and detail in str(err.value.detail)

    def test_the_body_and_retry_after_are_kept(self) -> None:
        body = {"detail": "turn id reused", "turn_id": "t1", "ids": ["t1"]}
        conflict = httpx.Response(409, json=body, headers={"retry-after": "2.5"})
        with self._client(conflict) as c, pytest.raises(APIError) as err:
            c.observe({"actor": "user", "text": "x"})
        assert (err.value.detail, err.value.body, err.value.retry_after) == (
            "turn id reused",
            body,
            2.5,
        )
