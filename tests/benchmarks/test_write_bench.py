"""The write benchmark: it works on copies, so its source store is never changed.

Slow tier: each run sets thresholds in child processes (a second or two each).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from episeg.benchmarks.hierarchical_bench import _episodes
from episeg.benchmarks.store_bench import fill
from episeg.benchmarks.write_bench import run_write_bench
from episeg.store import ChromaBackend
from episeg.store.tenants import collection_name


def _source(path: Path, n: int) -> None:
    rng = np.random.default_rng(3)
    store = ChromaBackend.persistent(path, sync_threshold=7).store_for("tenant-0")
    fill(store, n, 10, lambda size, prefix: _episodes(rng, size, 2, prefix, 1.7e9))


@pytest.mark.slow
def test_the_source_keeps_its_episodes_and_its_threshold(tmp_path: Path) -> None:
    _source(tmp_path / "src", 20)
    res = run_write_bench(20, thresholds=(1, 50), adds=2, updates=2, source=tmp_path / "src")
    assert [r["sync_threshold"] for r in res["runs"]] == [1, 50]
    backend = ChromaBackend.persistent(tmp_path / "src", sync_threshold=7)
    assert backend.store_for("tenant-0").count() == 20  # nothing was added to the source
    config = backend._client.get_collection(collection_name("tenant-0")).configuration_json
    assert config["hnsw"]["sync_threshold"] == 7


@pytest.mark.slow
def test_a_source_of_another_size_is_refused(tmp_path: Path) -> None:
    _source(tmp_path / "src", 12)
    with pytest.raises(ValueError, match="holds 12 episodes of tenant-0, not 20"):
        run_write_bench(20, thresholds=(1,), adds=2, updates=2, source=tmp_path / "src")
