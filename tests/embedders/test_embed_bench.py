"""The encoder benchmark command through the real models (tiny sizes; shape only, no timings)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from episeg.benchmarks.embed_bench import main
from episeg.evaluation.datasets import default_data_root

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def tiage_dev() -> Path:
    root = default_data_root()
    path = root / "tiage" / "tiage_dev.jsonl" if root else None
    if path is None or not path.is_file():
        pytest.fail("evaluation data not found: ../shared/data/segmentation/tiage/tiage_dev.jsonl")
    return path


def test_one_command_gives_encoders_and_segmentation(tmp_path: Path, tiage_dev: Path) -> None:
    out = tmp_path / "embed.json"
    argv = ["--data", str(tiage_dev), "--turns", "40", "--single-turns", "8", "--rounds", "2"]
    assert main([*argv, "--scale", "100", "--json", str(out)]) == 0
    res = json.loads(out.read_text())
    assert res["machine"]["onnx_threads"] >= 1 and res["machine"]["cpus"] >= 1
    enc = res["encoders"]
    assert enc["texts"] == 40 and enc["distinct_texts_compared"] >= 1
    assert enc["min_cosine"] >= 1 - 1e-5
    for mode in ("single", "batch32"):
        assert enc[mode]["baseline_tps"] > 0 and enc[mode]["measured_tps"] > 0
        assert len(enc[mode]["round_ratios"]) == 2
    seg = res["segmentation"]
    assert seg["embedder"].startswith("OnnxMiniLMEmbedder")
    assert seg["turns"] == 40 and seg["scaling"][0]["turns"] == 100
    for key in ("streaming_ratio_to_single_encode", "batch_ratio_to_batched_encode"):
        assert seg[key] > 0


def test_bad_sizes_are_a_usage_error(tiage_dev: Path) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--data", str(tiage_dev), "--turns", "4", "--rounds", "0", "--no-segment"])
    assert exit_info.value.code == 2
