"""The hierarchical recall benchmark: a filled --path is reused, with the same queries."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from episeg.benchmarks.hierarchical_bench import run_hierarchical_bench


@pytest.mark.slow
def test_second_run_on_the_same_path_reuses_the_store(tmp_path: Path) -> None:
    sizes = {"n_tenants": 2, "queries": 4, "turns": 2, "others_each": 3}
    first = run_hierarchical_bench(30, path=tmp_path, **sizes)
    assert first["reused_store"] is False and first["ingest_eps"] > 0
    second = run_hierarchical_bench(30, path=tmp_path, **sizes)
    assert second["reused_store"] is True and second["ingest_eps"] is None
    assert second["turn_rows"] == 60 and second["index_bytes"] > 0
    assert second["recall_p50_ms"] > 0
    # the read floor: the store get of the returned episodes, timed alone
    assert 1 <= second["store_get_queries"] <= 4 and second["store_get_p50_ms"] > 0
    raw = second["raw_turn_query_p50_ms"]
    assert second["query_plus_get_ratio"] == pytest.approx((raw + second["store_get_p50_ms"]) / raw)
    # the tenant resident: filled from the store, the same hits, its memory per episode
    assert second["resident_same_hits"] is True and second["resident_fill_s"] > 0
    assert second["resident_bytes_per_episode"] > 0
    again = second["raw_turn_query_again_p50_ms"]
    assert second["recall_resident_ratio"] == pytest.approx(
        second["recall_resident_p50_ms"] / again
    )
    # both ratios again, the raw query and recall timed turn about
    for label in ("", "resident_"):
        base, meas = (
            second[f"raw_{label}interleaved_p50_ms"],
            second[f"recall_{label}interleaved_p50_ms"],
        )
        assert base > 0 and meas > 0
        assert second[f"recall_{label}interleaved_ratio"] == pytest.approx(meas / base)


def test_interleaved_timing_never_times_one_item_twice_in_a_row() -> None:
    from episeg.benchmarks.store_bench import time_interleaved

    calls: list[tuple[str, int]] = []
    time_interleaved(
        lambda x: calls.append(("base", x)), lambda x: calls.append(("meas", x)), range(5), rounds=2
    )
    assert len(calls) == 20 and [c[0] for c in calls[:4]] == ["base", "meas", "base", "meas"]
    assert calls[:2] == [("base", 0), ("meas", 2)]
    assert all(a[1] != b[1] for a, b in itertools.pairwise(calls))
    # every item timed once per round by each side
    assert sorted(x for kind, x in calls if kind == "meas") == sorted(list(range(5)) * 2)
    with pytest.raises(ValueError, match="at least one item"):
        time_interleaved(abs, abs, [])
