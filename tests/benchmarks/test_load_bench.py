"""Load through the real service: concurrent sessions of several tenants, every turn once.

Runs ``episeg serve`` (real MiniLM, offline judge and scorer, embedded Chroma, journal) in a
subprocess and the bounded load generator of :mod:`episeg.benchmarks.load_bench` against it.
The figures for docs/RELIABILITY.md come from the same module's CLI at a larger size.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from episeg.benchmarks.load_bench import check_exactly_once, make_session, run_load_bench


@pytest.mark.slow
def test_concurrent_sessions_every_turn_in_exactly_one_episode(tmp_path: Path) -> None:
    res = run_load_bench(
        tenants=3,
        sessions_per_tenant=3,
        turns_per_session=16,
        seed=7,
        path=tmp_path,
        baseline=False,
    )
    assert res["sessions"] == 9 and res["turns"] == 144
    assert res["errors"] == 0, res["error_samples"]
    assert (res["missing"], res["duplicated"], res["foreign"], res["misplaced"]) == (0, 0, 0, 0)
    assert res["turns_per_s"] > 0 and res["latency_p99_ms"] >= res["latency_p50_ms"] > 0


def test_the_exactly_once_check_sees_each_kind_of_loss() -> None:
    sent = make_session("alice", "s0", 4, seed=0) + make_session("bob", "s0", 2, seed=0)
    rows = [(t.id or "", t.user, t.session) for t in sent]
    assert check_exactly_once(sent, rows) == {
        "missing": 0,
        "duplicated": 0,
        "foreign": 0,
        "misplaced": 0,
    }
    broken = [
        *rows[1:],
        rows[2],
        ("ghost-1", "alice", "s0"),
        (rows[4][0], "alice", "s0"),
    ]  # bob's turn stored under alice
    broken = [r for r in broken if r != rows[4]]
    assert check_exactly_once(sent, broken) == {
        "missing": 1,
        "duplicated": 1,
        "foreign": 1,
        "misplaced": 1,
    }
