"""Erased text must not stay in Chroma's vector files (``episeg.store.scrub``).

Embedded Chroma writes the unused slots of a new HNSW segment as the heap left
them (chroma-core/chroma#7688), so text that ``Memory.forget`` erased (or
another tenant's) can sit in ``data_level0.bin`` / ``length.bin``. The store is
scrubbed when it is opened. The test runs the forget scenario 100 times in a
fresh process, twice: right after the erasure the text is still in some runs'
files (which shows the check can fail; should Chroma stop leaking, the test is
skipped, since it could then show nothing); after the store is opened again,
in none, with every other episode intact.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

WORKER = Path(__file__).with_name("forget_scrub_worker.py")


def _runs(mode: str, runs: int = 100) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, str(WORKER), str(runs), mode],
        capture_output=True,
        text=True,
        timeout=900,
        check=True,
    )
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.slow
def test_once_the_store_is_opened_again_no_file_holds_the_erased_text() -> None:
    before = _runs("forget")
    if not before["leaks"]:  # the check below would show nothing
        pytest.skip(f"Chroma left no stale text in {before['runs']} runs (chroma#7688 fixed?)")
    after = _runs("reopen")
    assert before["broken"] == 0
    assert after["leaks"] == 0 and after["broken"] == 0, (before, after)
