"""The hierarchical recall benchmark: a filled --path is reused, with the same queries."""

from __future__ import annotations

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
