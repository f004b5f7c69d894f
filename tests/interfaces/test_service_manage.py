"""Get / edit / unarchive an episode and the admin's tenant list, over the real service on
loopback (uvicorn, embedded Chroma; HashingEmbedder for speed), raw HTTP and episeg.client."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from episeg.client import APIError, Client
from episeg.interfaces.runtime import open_memory
from episeg.interfaces.service import create_app
from episeg.interfaces.service_auth import KeyRing
from episeg.testing import HashingEmbedder
from tests.interfaces.helpers import KEY_A, KEY_B, KEYS, LiveServer

pytestmark = pytest.mark.slow
KEY_ADMIN = "key-admin-0123456789abcdef"
KEY_ALICE_ADMIN = "key-alice-admin-0123456789"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    memory = open_memory(tmp_path_factory.mktemp("manage"), embedder=HashingEmbedder(dim=64))
    ring = KeyRing(
        {
            **KEYS,
            KEY_ADMIN: {"admin": True},
            KEY_ALICE_ADMIN: {"tenant": "alice", "admin": True},
        }
    )
    live = LiveServer(create_app(memory, ring))
    with Client(live.url, KEY_A) as alice:
        alice.observe({"actor": "user", "text": "rotate the jwt signing key", "session": "s1"})
        alice.observe({"actor": "user", "text": "login css broken on mobile", "session": "s2"})
        alice.flush()
    with Client(live.url, KEY_B) as bob:
        bob.observe({"actor": "user", "text": "bob's own note", "session": "b"})
        bob.flush()
    yield live
    live.stop()


def _alice_episode(server: LiveServer, session: str) -> str:
    with Client(server.url, KEY_A) as alice:
        return next(e["id"] for e in alice.episodes() if e["session"] == session)


class TestGetAndEdit:
    def test_get_then_patch_every_field(self, server: LiveServer) -> None:
        target = _alice_episode(server, "s1")
        with server.client(KEY_A) as http:
            got = http.get(f"/v1/episodes/{target}")
            assert got.status_code == 200
            assert got.json()["pinned"] is False and got.json()["metadata"] == {}
            body = {
                "summary": "jwt rotation",
                "pinned": True,
                "salience": 9,
                "metadata": {"project": "auth", "ticket": 4211, "x": 0.1, "ok": True},
            }
            edited = http.patch(f"/v1/episodes/{target}", json=body)
            assert edited.status_code == 200, edited.text
            out = edited.json()
        assert out["summary"] == "jwt rotation" and out["pinned"] is True
        assert out["salience"]["score"] == 9 and out["salience"]["by_user"] is True
        assert out["metadata"] == body["metadata"]
        with Client(server.url, KEY_A) as alice:
            assert alice.episode(target) == out

    @pytest.mark.parametrize(
        "body",
        [
            "{}",
            '{"salience": 11}',
            '{"salience": "9"}',
            '{"salience": 9.0}',
            '{"pinned": "yes"}',
            '{"summary": ""}',
            '{"metadata": {"k": [1]}}',
            '{"metadata": {"k": null}}',
            '{"metadata": {"bad key": 1}}',
            '{"metadata": {"k": 1e400}}',
            '{"metadata": {"k": NaN}}',
            '{"summary": "ok", "tenant": "bob"}',
            '{"summary": "ok", "pinned": true, "salience": 0}',
        ],
    )
    def test_malformed_edits_are_422_and_change_nothing(
        self, server: LiveServer, body: str
    ) -> None:
        target = _alice_episode(server, "s2")
        with server.client(KEY_A) as http:
            before = http.get(f"/v1/episodes/{target}").json()
            answer = http.patch(
                f"/v1/episodes/{target}",
                content=body,
                headers={"content-type": "application/json"},
            )
            assert answer.status_code == 422, answer.text
            assert http.get(f"/v1/episodes/{target}").json() == before

    def test_another_tenant_gets_404_everywhere_and_changes_nothing(
        self, server: LiveServer
    ) -> None:
        target = _alice_episode(server, "s2")
        with Client(server.url, KEY_A) as alice:
            before = alice.episode(target)
        with server.client(KEY_B) as bob:
            assert bob.get(f"/v1/episodes/{target}").status_code == 404
            assert bob.patch(f"/v1/episodes/{target}", json={"pinned": True}).status_code == 404
            assert bob.post(f"/v1/episodes/{target}/unarchive").status_code == 404
        with Client(server.url, KEY_B) as bob_client, pytest.raises(APIError) as err:
            bob_client.update_episode(target, summary="bob was here")
        assert err.value.status == 404
        with Client(server.url, KEY_A) as alice:
            assert alice.episode(target) == before

    def test_unarchive_is_idempotent(self, server: LiveServer) -> None:
        target = _alice_episode(server, "s2")
        with Client(server.url, KEY_A) as alice:
            out = alice.unarchive(target)
        assert out["archived"] is False and out["id"] == target

    def test_recall_filters_metadata_and_min_score(self, server: LiveServer) -> None:
        auth = _alice_episode(server, "s1")
        with Client(server.url, KEY_A) as alice:
            alice.update_episode(auth, metadata={"project": "auth"})
            hits = alice.recall("login jwt key", k=5, metadata={"project": "auth"})
            assert [h["episode"]["id"] for h in hits] == [auth]
            assert alice.recall("login jwt key", k=5, min_score=10.0) == []
            with pytest.raises(APIError) as err:
                alice.recall("login", metadata={"k": [1]})
            assert err.value.status == 422


class TestAdmin:
    def test_only_an_admin_key_lists_tenants(self, server: LiveServer) -> None:
        with Client(server.url, KEY_ADMIN) as admin:
            assert admin.tenants() == ["alice", "bob"]
        with Client(server.url, KEY_ALICE_ADMIN) as both:
            assert both.tenants() == ["alice", "bob"]
            assert both.episodes()  # also alice's own key
        with server.client(KEY_A) as http:
            assert http.get("/v1/admin/tenants").status_code == 403
        with server.client("not-a-key-0123456789") as http:
            assert http.get("/v1/admin/tenants").status_code == 401
        with server.client() as http:
            assert http.get("/v1/admin/tenants").status_code == 401

    def test_an_admin_only_key_has_no_tenant(self, server: LiveServer) -> None:
        with server.client(KEY_ADMIN) as http:
            # a valid key, for the admin routes only: forbidden, not unknown (F156)
            assert http.get("/v1/episodes").status_code == 403
