"""The HTTP service through a real uvicorn server and httpx."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from episeg.errors import ConfigError
from episeg.interfaces.runtime import open_backend
from episeg.interfaces.service import KeyRing, create_app
from episeg.interfaces.service_auth import BodyLimit
from episeg.memory import Memory
from episeg.testing import HashingEmbedder
from tests.interfaces.helpers import KEY_A, KEY_B, ChromaServer, LiveServer

pytestmark = pytest.mark.slow


def _turns(
    user: str | None, texts: list[str], *, session: str = "s1", start: float = 0.0
) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for i, text in enumerate(texts):
        turn: dict[str, object] = {
            "actor": "user" if i % 2 == 0 else "assistant",
            "text": text,
            "ts": start + i,
            "session": session,
            "id": f"{session}-{i}",
        }
        if user is not None:
            turn["user"] = user
        out.append(turn)
    return out


ALICE = [
    "the auth login returns 401 after key rotation",
    "Rotate the jwt public key and reload auth. <episode_boundary>",
    "now deploy the prod version 2.14 with terraform",
    "Edit version.tf and run terraform apply.",
]
BOB_SECRET = "bob private kubernetes secret rotation plan zebra"


class TestServiceHappyPath:
    def test_observe_batch_flush_list_recall(self, live_server: LiveServer) -> None:
        with live_server.client(KEY_A) as c:
            first = c.post("/v1/turns", json=_turns("alice", ALICE[:1])[0])
            assert first.status_code == 200, first.text
            assert first.json() == {"accepted": 1, "closed": [], "duplicates": []}
            batch = c.post("/v1/turns:batch", json=_turns(None, ALICE)[1:])
            assert batch.status_code == 200, batch.text
            assert batch.json()["accepted"] == 3
            closed = batch.json()["closed"]
            assert [e["turn_count"] for e in closed] == [2]  # the marker closed turns 0-1
            assert closed[0]["user"] == "alice"
            flushed = c.post("/v1/flush", json={"session": "s1"}).json()["closed"]
            assert [e["turn_count"] for e in flushed] == [2]
            assert flushed[0]["boundary_reasons"][0].startswith("marker")
            listed = c.get("/v1/episodes", params={"limit": 50}).json()["episodes"]
            assert sum(e["turn_count"] for e in listed if e["session"] == "s1") == 4
            hits = c.post("/v1/recall", json={"query": "deploy prod terraform", "k": 1}).json()
            hit = hits["results"][0]
            assert "deploy" in " ".join(t["text"] for t in hit["episode"]["turns"]).lower()
            assert hit["summary"] == hit["episode"]["summary"] != ""
            assert hit["score"] == pytest.approx(
                hit["recency"] + hit["importance"] + hit["similarity"]
            )
            assert hit["episode"]["salience"]["scorer"]
            assert hit["episode_id"] == hit["episode"]["id"] and hit["start"].endswith("Z")
            assert hit["turn_ids"] == [t["id"] for t in hit["turns"]] and hit["turns"]
            budget = {"query": "deploy prod terraform", "k": 5, "max_words": 5}
            small = c.post("/v1/recall", json=budget).json()["results"]
            assert sum(h["words"] for h in small) <= 5
            assert c.post("/v1/recall", json={**budget, "max_words": 0}).status_code == 422

    def test_healthz_needs_no_key(self, live_server: LiveServer) -> None:
        with live_server.client() as c:
            assert c.get("/v1/healthz").json() == {"status": "ok"}

    def test_openapi_lists_every_endpoint(self, live_server: LiveServer) -> None:
        with live_server.client() as c:
            paths = c.get("/openapi.json").json()["paths"]
        assert set(paths) == {
            "/v1/turns",
            "/v1/turns:batch",
            "/v1/flush",
            "/v1/episodes",
            "/v1/episode",
            "/v1/sessions",
            "/v1/tenant",
            "/v1/messages",
            "/v1/recall",
            "/v1/used",
            "/v1/maintain",
            "/v1/episode/unarchive",
            "/v1/admin/tenants",
            "/v1/export",
            "/v1/import",
            "/v1/healthz",
        }
        for path in paths.values():  # no tenant parameter anywhere
            for op in path.values():
                assert not [p for p in op.get("parameters", []) if "user" in p["name"]]


class TestServiceAuth:
    @pytest.mark.parametrize(
        ("method", "path"),
        [
            ("POST", "/v1/turns"),
            ("POST", "/v1/turns:batch"),
            ("POST", "/v1/flush"),
            ("GET", "/v1/episodes"),
            ("POST", "/v1/recall"),
            ("GET", "/v1/episodes/e1"),
            ("PATCH", "/v1/episodes/e1"),
            ("POST", "/v1/episodes/e1/unarchive"),
            ("GET", "/v1/episode?id=e1"),
            ("PATCH", "/v1/episode?id=e1"),
            ("POST", "/v1/episode/unarchive?id=e1"),
            ("DELETE", "/v1/episode?id=e1"),
            ("GET", "/v1/admin/tenants"),
            ("GET", "/v1/export"),
            ("POST", "/v1/import"),
        ],
    )
    def test_401_without_or_with_a_wrong_key(
        self, live_server: LiveServer, method: str, path: str
    ) -> None:
        for key in (None, "not-a-real-key-0123456789", KEY_A + "x"):
            with live_server.client(key) as c:
                r = c.request(method, path, json={"query": "x"} if "recall" in path else None)
            assert r.status_code == 401, (key, r.text)
            assert r.headers["www-authenticate"] == "Bearer"

    def test_non_bearer_scheme_is_refused(self, live_server: LiveServer) -> None:
        with live_server.client() as c:
            r = c.get("/v1/episodes", headers={"Authorization": f"Basic {KEY_A}"})
        assert r.status_code == 401


class TestServiceTenantIsolation:
    @pytest.fixture(scope="class", autouse=True)
    @classmethod
    def bob_has_a_secret(cls, live_server: LiveServer) -> None:
        with live_server.client(KEY_B) as c:
            assert (
                c.post(
                    "/v1/turns:batch", json=_turns("bob", [BOB_SECRET, "noted"], session="b")
                ).status_code
                == 200
            )
            assert c.post("/v1/flush").status_code == 200

    def test_alice_cannot_write_as_bob(self, live_server: LiveServer) -> None:
        with live_server.client(KEY_A) as c:
            one = c.post("/v1/turns", json=_turns("bob", ["hi"])[0])
            many = c.post("/v1/turns:batch", json=_turns(None, ["a"]) + _turns("bob", ["b"]))
        assert one.status_code == 403 and many.status_code == 403
        with live_server.client(KEY_B) as c:  # nothing of the refused batch got in
            texts = [
                t["text"] for e in c.get("/v1/episodes").json()["episodes"] for t in e["turns"]
            ]
        assert texts == [BOB_SECRET, "noted"]

    def test_alice_never_sees_bob(self, live_server: LiveServer) -> None:
        with live_server.client(KEY_A) as c:
            listed = c.get("/v1/episodes", params={"include_archived": True, "limit": 1000})
            recalled = c.post("/v1/recall", json={"query": BOB_SECRET, "k": 50})
            flushed = c.post("/v1/flush", json={"session": "b"})
            # query-string "user" parameters are not part of the API and change nothing
            sneaky = c.get("/v1/episodes", params={"user": "bob"})
        for response in (listed, recalled, flushed, sneaky):
            assert response.status_code == 200
            assert BOB_SECRET not in response.text and '"bob"' not in response.text
        with live_server.client(KEY_B) as c:
            hit = c.post("/v1/recall", json={"query": BOB_SECRET, "k": 1}).json()["results"][0]
        assert hit["episode"]["user"] == "bob"  # the control: the secret is there for bob


class TestServiceLimits:
    def test_413_on_a_large_body(self, live_server: LiveServer) -> None:
        big = {"actor": "user", "text": "x" * (70 * 1024), "ts": 1.0}
        with live_server.client(KEY_A) as c:
            assert c.post("/v1/turns", json=big).status_code == 413
            streamed = (b" " * 10_000 for _ in range(8))  # chunked: no Content-Length
            r = c.post(
                "/v1/turns:batch", content=streamed, headers={"content-type": "application/json"}
            )
            assert r.status_code == 413
            assert c.post("/v1/turns", json={**big, "text": "small"}).status_code == 200

    @pytest.mark.parametrize(
        "body",
        [
            {"actor": "robot", "text": "x", "ts": 1},
            {"text": "no actor"},
            {"actor": "user", "text": "x", "ts": "soon"},
            {"actor": "user", "text": "x", "extra": 1},
            {"actor": "user", "text": "x", "session": "  "},
        ],
    )
    def test_422_names_the_problem(self, live_server: LiveServer, body: dict[str, object]) -> None:
        with live_server.client(KEY_A) as c:
            r = c.post("/v1/turns", json=body)
        assert r.status_code == 422, r.text
        assert r.json()["detail"]

    def test_422_on_bad_recall_and_paging(self, live_server: LiveServer) -> None:
        with live_server.client(KEY_A) as c:
            assert c.post("/v1/recall", json={"query": "x", "k": 0}).status_code == 422
            assert c.post("/v1/recall", json={"query": ""}).status_code == 422
            assert c.get("/v1/episodes", params={"limit": 0}).status_code == 422
            assert (
                c.post(
                    "/v1/turns", content=b"{not json", headers={"content-type": "application/json"}
                ).status_code
                == 422
            )


class TestServiceStoreDown:
    def test_503_when_the_chroma_server_goes_away(self, tmp_path: Path) -> None:
        chroma = ChromaServer(tmp_path / "chroma")
        memory = Memory(
            path=tmp_path,
            embedder=HashingEmbedder(),
            judge=None,
            scorer=None,
            backend=open_backend(tmp_path, chroma.url),
        )
        server = LiveServer(create_app(memory, {KEY_A: "alice"}))
        try:
            with server.client(KEY_A) as c:
                assert c.get("/v1/episodes").status_code == 200
                chroma.stop()
                assert c.get("/v1/healthz").status_code == 503
                down = c.post("/v1/recall", json={"query": "anything"})
                assert down.status_code == 503, down.text
                assert "unreachable" in down.json()["detail"]
                used = c.post("/v1/used", json={"episode_ids": ["e1"]})  # not "no such episode"
                assert used.status_code == 503, used.text
        finally:
            server.stop()
            chroma.stop()


class TestKeyRing:
    def test_only_digests_are_kept(self, tmp_path: Path) -> None:
        keys = tmp_path / "keys.json"
        keys.write_text(json.dumps({KEY_A: "alice"}))
        ring = KeyRing.from_file(keys)
        assert ring.tenant_for(KEY_A) == "alice" and ring.tenant_for(KEY_B) is None
        assert KEY_A not in repr(vars(ring)) and KEY_A.encode() not in repr(vars(ring)).encode()

    @pytest.mark.parametrize(
        "content", ["[]", "{}", '{"short": "alice"}', "not json", json.dumps({KEY_A: ""})]
    )
    def test_bad_keys_files_are_config_errors(self, tmp_path: Path, content: str) -> None:
        keys = tmp_path / "keys.json"
        keys.write_text(content)
        with pytest.raises(ConfigError):
            KeyRing.from_file(keys)

    def test_body_limit_must_be_positive(self) -> None:
        with pytest.raises(ConfigError):
            BodyLimit(create_app, max_bytes=0)  # type: ignore[arg-type]


def test_reads_by_a_tenant_that_never_wrote_make_no_collection(tmp_path: Path) -> None:
    """Every read route for an empty tenant answers empty and leaves the store as it was."""
    memory = Memory(path=tmp_path, embedder=HashingEmbedder(dim=64))
    server = LiveServer(create_app(memory, {KEY_B: "bob"}))
    try:
        with server.client(KEY_B) as c:
            assert c.get("/v1/episodes").json()["episodes"] == []
            recalled = c.post("/v1/recall", json={"query": "deploy prod", "k": 3})
            assert recalled.status_code == 200 and recalled.json()["results"] == []
            assert c.get("/v1/episodes/nope").status_code == 404
            assert c.get("/v1/export").status_code == 200
        assert memory.backend._client.list_collections() == []  # type: ignore[attr-defined]
    finally:
        server.stop()
        memory.close()
