"""Scale-out on loopback: two ``episeg serve`` replicas, one ``chroma run``, HAProxy in front.

The replicas have separate journals and share the Chroma server; HAProxy routes by API key
with consistent hashing, using the configuration that docs/DEPLOYMENT.md shows (shipped as
``episeg/interfaces/deploy/haproxy.cfg``). ``.ci/run`` installs HAProxy, so in CI (``CI``
set) a missing binary fails the test instead of skipping it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from episeg.benchmarks.proxy_bench import failures, run_proxy_bench
from episeg.testing.services import haproxy_config


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
