"""The suite lifts a low soft limit on open files (chromadb keeps every test's client open)."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_a_soft_limit_of_1024_is_raised_toward_the_hard_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard <= 1024:
        expected = hard  # nothing to raise to: the limit stays where it is
    else:
        expected = 16_384 if hard == resource.RLIM_INFINITY else min(16_384, hard)

    def low_soft_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(1024, soft), hard))

    code = (
        "import resource; from tests.conftest import raise_open_file_limit; "
        "raise_open_file_limit(); print(resource.getrlimit(resource.RLIMIT_NOFILE)[0])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        preexec_fn=low_soft_limit,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert int(out.stdout) == max(expected, min(1024, soft))
