"""F160: a request carrying two ``Authorization`` headers is refused, by the replica and the proxy.

HAProxy's ``balance hdr(Authorization)`` hashes one occurrence of the header and the
service read the first: a request with two keys could be routed by one tenant's key
and served under the other's, so one tenant's turns could reach two replicas.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from episeg.testing.services import HAProxy
from tests.benchmarks.test_proxy_bench import _answering_backend, _require_haproxy
from tests.interfaces.helpers import KEY_A, KEY_B, LiveServer, live_memory

TWO_KEYS = [("Authorization", f"Bearer {KEY_A}"), ("Authorization", f"Bearer {KEY_B}")]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    with live_memory(tmp_path) as (served, _):
        yield served


def test_the_service_refuses_two_authorization_headers(server: LiveServer) -> None:
    with httpx.Client(base_url=server.url) as http:
        for method, path, body in [
            ("POST", "/v1/recall", {"query": "alps"}),
            ("POST", "/v1/turns", {"turns": [{"actor": "user", "text": "hi", "session": "s"}]}),
            ("GET", "/v1/admin/tenants", None),
        ]:
            answer = http.request(method, path, json=body, headers=TWO_KEYS)
            assert answer.status_code == 400, (path, answer.text)
            assert "more than one Authorization" in answer.json()["detail"]
        same_twice = [TWO_KEYS[0], TWO_KEYS[0]]
        assert http.post("/v1/recall", json={"query": "a"}, headers=same_twice).status_code == 400
        one = http.post("/v1/recall", json={"query": "alps"}, headers=[TWO_KEYS[0]])
        assert one.status_code == 200, one.text
    with server.client(KEY_A) as c:  # nothing was written by the refused requests
        assert c.get("/v1/episodes").json()["episodes"] == []


def test_the_shipped_haproxy_config_refuses_two_authorization_headers(tmp_path: Path) -> None:
    _require_haproxy()
    assert shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin:/sbin")
    with (
        _answering_backend() as one,
        _answering_backend() as two,
        HAProxy([one, two], tmp_path / "haproxy.log") as proxy,
        httpx.Client(base_url=proxy.url) as http,
    ):
        assert http.get("/v1/healthz", headers=TWO_KEYS).status_code == 400
        assert http.get("/v1/healthz", headers=[TWO_KEYS[0]]).status_code == 200
