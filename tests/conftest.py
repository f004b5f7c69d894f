"""Shared fixtures: the real MiniLM embedder is loaded once per test session.

The fast tier (``-m "not slow"``) runs fewer property-test examples: see
:mod:`tests.property_budget`; the whole suite (CI) runs all of them.

``tmp_path`` folders live on a RAM file system (``/dev/shm``) when the machine
has one: every test that opens a Memory creates a real SQLite journal and a real
embedded Chroma there, and their fsyncs cost ~50 ms per store on a disk (~0 on
tmpfs); so do the folders of ``tempfile.mkdtemp()`` (the doctests' stores), which
are removed when the run ends. ``EPISEG_TEST_TMPFS=0`` keeps both under the usual
temporary directory; an explicit ``--basetemp`` or ``PYTEST_DEBUG_TEMPROOT`` wins.

Bytecode is cached (``__pycache__``, git-ignored) even where
``PYTHONDONTWRITEBYTECODE`` is set: without the cache every run compiles
episeg's modules and rewrites the asserts of every test module again (~2.5 s of
a fast-tier run here). ``EPISEG_TEST_BYTECODE=0`` keeps the variable's effect.
"""

from __future__ import annotations

import gc
import os
import resource
import shutil
import sys
import tempfile
from pathlib import Path

if os.environ.get("EPISEG_TEST_BYTECODE", "1") != "0":
    sys.dont_write_bytecode = False  # before episeg and the test modules are imported

import pytest
from hypothesis import settings

from episeg.embedders import MiniLMEmbedder
from tests import property_budget

settings.register_profile("fast", max_examples=property_budget.FAST_PROFILE_EXAMPLES)

RAM_DISK = Path("/dev/shm")
_MIN_FREE_BYTES = 2 * 1024**3  # a fast-tier run writes ~100 MB; leave room for everyone else
_TEMPFILE = pytest.StashKey[tuple[str | None, str | None]]()


def ram_temp_root(candidate: Path = RAM_DISK) -> Path | None:
    """``candidate`` if it is a writable folder with at least 2 GiB free, else None.

    >>> ram_temp_root(Path("/no/such/folder")) is None
    True
    """
    if not candidate.is_dir() or not os.access(candidate, os.W_OK | os.X_OK):
        return None
    stat = os.statvfs(candidate)
    return candidate if stat.f_bavail * stat.f_frsize >= _MIN_FREE_BYTES else None


def raise_open_file_limit(want: int = 16_384) -> None:
    """Lift the soft limit on open files toward ``want`` (never above the hard limit).

    chromadb's shared system cache keeps each test's client and its files open for the
    process's life; a machine whose soft limit is the common 1,024 must not fail the
    suite on that (a subprocess the tests start inherits the raised limit).
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    ceiling = want if hard == resource.RLIM_INFINITY else min(want, hard)
    if soft != resource.RLIM_INFINITY and soft < ceiling:
        resource.setrlimit(resource.RLIMIT_NOFILE, (ceiling, hard))


def pytest_configure(config: pytest.Config) -> None:
    raise_open_file_limit()
    if "not slow" in (config.option.markexpr or ""):
        property_budget.use_fast_tier()
        settings.load_profile("fast")
    root = ram_temp_root() if os.environ.get("EPISEG_TEST_TMPFS", "1") != "0" else None
    if root is None:
        return
    if config.option.basetemp is None:
        # read by pytest's tmp_path_factory when it makes its first folder
        os.environ.setdefault("PYTEST_DEBUG_TEMPROOT", str(root))
    # tempfile.mkdtemp() (the doctests' stores) goes to a folder of this run, removed at the end
    folder = tempfile.mkdtemp(prefix="episeg-tests-", dir=root)
    config.stash[_TEMPFILE] = (folder, tempfile.tempdir)
    tempfile.tempdir = folder


def pytest_collection_finish(session: pytest.Session) -> None:
    """Every module is imported now: move their ~200k objects out of the collector's way.

    Each full garbage collection during the run would walk them again (~2 s of a fast-tier
    run here); objects made by the tests are collected as before.
    """
    gc.collect()
    gc.freeze()


def pytest_unconfigure(config: pytest.Config) -> None:
    folder, before = config.stash.get(_TEMPFILE, (None, None))
    if folder is not None:
        tempfile.tempdir = before
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def minilm() -> MiniLMEmbedder:
    """The real bundled all-MiniLM-L6-v2 (no hub access)."""
    return MiniLMEmbedder.default()
