"""The benchmark commands through the real parts (small sizes; the figures come from the CLI)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from episeg.benchmarks import main as bench_main
from episeg.benchmarks.segment_bench import run_segment_bench


@pytest.mark.slow
def test_segment_bench_with_the_real_model(tiage_dev: Path) -> None:
    res = run_segment_bench(tiage_dev, n_turns=60, single_turns=16, scale=(200,), rounds=2)
    assert res["turns"] == 60 and res["rounds"] == 2
    assert len(res["streaming_round_ratios"]) == 2 and len(res["batch_round_ratios"]) == 2
    for key in ("raw_encode_single_tps", "raw_encode_batch32_tps", "streaming_tps", "batch_tps"):
        assert res[key] > 0, key
    # The ratio is the two unrounded totals divided (rounded to 3 places); the rates are
    # rounded to 0.1 turn/s. Compare like with like: the ratio must lie in the interval the
    # rounded rates allow (under load a rate of a few turns/s makes that interval wide).
    streaming, raw = res["streaming_tps"], res["raw_encode_single_tps"]
    low, high = (streaming - 0.05) / (raw + 0.05), (streaming + 0.05) / max(raw - 0.05, 1e-9)
    assert low - 0.0005 <= res["streaming_ratio_to_single_encode"] <= high + 0.0005
    assert res["scaling"][0]["turns"] == 200 and res["scaling"][0]["episodes"] >= 1


@pytest.mark.slow
def test_recall_bench_cli_writes_its_json(tmp_path: Path) -> None:
    out = tmp_path / "recall.json"
    assert (
        bench_main(
            [
                "recall",
                "--episodes",
                "300",
                "--tenants",
                "3",
                "--others-each",
                "20",
                "--queries",
                "10",
                "--path",
                str(tmp_path),
                "--json",
                str(out),
            ]
        )
        == 0
    )
    (row,) = json.loads(out.read_text())
    assert row["total_rows"] == 340 and row["raw_query_p50_ms"] > 0
    assert row["recall_ratio"] == pytest.approx(row["recall_p50_ms"] / row["raw_query_p50_ms"])
