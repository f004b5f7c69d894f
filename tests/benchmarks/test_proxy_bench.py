"""Scale-out on loopback: two ``episeg serve`` replicas, one ``chroma run``, HAProxy in front.

The replicas have separate journals and share the Chroma server; HAProxy routes by API key
with consistent hashing, using the configuration that docs/DEPLOYMENT.md shows (shipped as
``episeg/interfaces/deploy/haproxy.cfg``). ``.ci/run`` installs HAProxy, so in CI (``CI``
set) a missing binary fails the test instead of skipping it.
"""

from __future__ import annotations

import os
import random
import shutil
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from episeg.benchmarks.proxy_bench import failures, run_proxy_bench
from episeg.testing.services import HAProxy, haproxy_config


def _require_haproxy() -> None:
    if shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin:/sbin"):
        return
    if os.environ.get("CI"):
        pytest.fail("haproxy is missing in CI: .ci/run must install it (apt-get install haproxy)")
    pytest.skip("haproxy is not installed (apt-get install haproxy); .ci/run installs it in CI")


@pytest.mark.slow
def test_replicas_behind_haproxy_serve_each_tenant_from_one_replica(tmp_path: Path) -> None:
    _require_haproxy()
    res = run_proxy_bench(
        tenants=6, sessions_per_tenant=2, turns_per_session=12, seed=3, path=tmp_path,
        baseline=False,
    )  # fmt: skip
    assert res["turns"] == 144 and res["errors"] == 0, res["error_samples"]
    # every turn in exactly one episode of its own tenant and session
    assert (res["missing"], res["duplicated"], res["foreign"], res["misplaced"]) == (0, 0, 0, 0)
    # no tenant answered by two replicas, and both replicas took tenants
    assert res["tenants_on_two_replicas"] == 0, res["replica_of_tenant"]
    assert set(res["tenants_per_replica"]) == {"replica1", "replica2"}, res["replica_of_tenant"]
    # tenant isolation in the shared store: no episode id under two tenants
    assert res["ids_shared_between_tenants"] == 0
    assert failures(res) == 0


def test_the_shipped_config_routes_by_key_with_consistent_hashing() -> None:
    text = haproxy_config().read_text(encoding="utf-8")
    lines = {line.strip() for line in text.splitlines()}
    assert {"balance hdr(Authorization)", "hash-type consistent"} <= lines
    assert "option redispatch" not in lines  # a tenant must not hop to a second replica
    docs = Path(__file__).resolve().parents[2] / "docs" / "DEPLOYMENT.md"
    if docs.exists():  # the page shows this very file
        assert text.strip() in docs.read_text(encoding="utf-8")


class _Ok(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def _answering_backend() -> Iterator[str]:
    """A loopback HTTP server answering 200 to every GET (a replica's health check included)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Ok)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.slow
def test_the_shipped_config_spreads_random_keys_evenly_over_the_replicas(tmp_path: Path) -> None:
    """HAProxy gives each server 16 ring points per unit of weight; at weight 1 the two
    replicas took 875 / 1,125 of these 2,000 keys (44% / 56%), at the shipped 100 979 / 1,021."""
    _require_haproxy()
    rng = random.Random(0)
    keys = [f"{rng.getrandbits(128):032x}" for _ in range(2000)]
    with (
        _answering_backend() as one,
        _answering_backend() as two,
        HAProxy([one, two], tmp_path / "haproxy.log") as proxy,
        httpx.Client(base_url=proxy.url, limits=httpx.Limits(max_keepalive_connections=0)) as http,
    ):  # a new connection per request, as many clients would open
        served = Counter(
            http.get("/v1/healthz", headers={"Authorization": f"Bearer {key}"}).headers[
                "X-Episeg-Replica"
            ]
            for key in keys
        )
    assert set(served) == {"replica1", "replica2"}, served
    assert all(0.47 <= n / len(keys) <= 0.53 for n in served.values()), served
