"""What a results file records about how it was made: command, commit, model files.

An evaluation's JSON (``python -m episeg.evaluation --json``, ``episeg eval memory
--json``) carries a ``provenance`` object so that a figure can be traced to the
code and the boundary models that produced it without trusting the prose around
it: the command line, the package version, the git commit of the source tree
(with whether it had uncommitted changes; ``None`` outside a git checkout) and
the SHA-256 of each shipped weights file (a run with other weights shows other
hashes).

>>> record = provenance(["episeg", "eval", "memory"])
>>> record["argv"], sorted(record["weights"])
(['episeg', 'eval', 'memory'], ['boundary.npz', 'chat.npz'])
>>> len(record["weights"]["boundary.npz"])
64
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from collections.abc import Sequence
from importlib import resources
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

__all__ = ["provenance"]

_WEIGHTS = ("boundary.npz", "chat.npz")


def provenance(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """The ``provenance`` object of a results file (see the module docstring)."""
    try:
        package = version("episeg")
    except PackageNotFoundError:
        package = None
    commit, dirty = _git_state(Path(__file__).resolve().parent)
    folder = resources.files("episeg.segmentation") / "weights"
    weights = {
        name: hashlib.sha256((folder / name).read_bytes()).hexdigest()
        for name in _WEIGHTS
        if (folder / name).is_file()
    }
    return {
        "argv": list(sys.argv if argv is None else argv),
        "episeg_version": package,
        "commit": commit,
        "uncommitted_changes": dirty,
        "weights": weights,
    }


def _git_state(where: Path) -> tuple[str | None, bool | None]:
    """HEAD's commit and whether the tree differs from it; ``(None, None)`` without git."""
    try:
        head = subprocess.run(
            ["git", "-C", str(where), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        status = subprocess.run(
            ["git", "-C", str(where), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None, None
    return head or None, bool(status.strip())
