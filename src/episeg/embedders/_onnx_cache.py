"""Where exported ONNX models live, and how a cached one is made and trusted.

The cache root is ``$EPISEG_CACHE_DIR`` when set, else
``$XDG_CACHE_HOME/episeg`` (``~/.cache/episeg``); an exported model lives at
``<root>/onnx/<key>/model.onnx``, where ``key`` names what was exported (a
fingerprint of the weights and the export settings), so a new model version
or export format gets a new folder and never reuses a stale file.

:func:`cached_model` is the whole protocol, independent of ONNX:

1. a cached file is used when it matches the size and CRC-32 recorded beside
   it (``model.onnx.crc32``) and ``load(path)`` accepts it (``load`` raises
   for an incompatible file); otherwise the reason is logged and it is
   exported again;
2. exporting takes an exclusive ``flock`` on ``<key>/.lock`` (two processes
   do not both spend seconds exporting), looks again (the other may have
   just finished), calls ``export`` on a temporary file in the same folder,
   loads that file (a bad export fails here and never lands), fsyncs it and
   moves it and its checksum into place with :func:`os.replace`: readers see
   the old file or the whole new one, never a partial write;
3. under that lock, scratch files (``.export-*``) left by an exporter that
   was killed (SIGKILL, OOM, power loss: its cleanup never ran) are deleted
   first and logged: only the lock holder writes them, so none is live.

>>> import tempfile
>>> root = Path(tempfile.mkdtemp())
>>> def export(path):
...     _ = path.write_text("v1")
>>> cached_model("k", export=export, load=Path.read_text, root=root)
'v1'
>>> _ = (root / "onnx" / "k" / "model.onnx").write_text("v")  # truncated by accident
>>> cached_model("k", export=export, load=Path.read_text, root=root)  # logged, re-exported
'v1'
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import tempfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

__all__ = ["cache_root", "cached_model", "model_file"]

log = logging.getLogger(__name__)

T = TypeVar("T")

MODEL_FILE = "model.onnx"
SCRATCH_PREFIX = ".export-"  # temporary files of an export in progress (the fp32 one too)


def cache_root() -> Path:
    """``$EPISEG_CACHE_DIR``, else ``$XDG_CACHE_HOME/episeg``, else ``~/.cache/episeg``.

    >>> import os
    >>> os.environ["EPISEG_CACHE_DIR"] = "/tmp/x"
    >>> str(cache_root())
    '/tmp/x'
    >>> del os.environ["EPISEG_CACHE_DIR"]
    """
    explicit = os.environ.get("EPISEG_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "episeg"


def cached_model(
    key: str,
    *,
    export: Callable[[Path], None],
    load: Callable[[Path], T],
    root: Path | None = None,
) -> T:
    """``load`` the cached ``<root>/onnx/<key>/model.onnx``, exporting it first if needed.

    Parameters
    ----------
    key
        Folder name: one per distinct export (letters, digits, ``-``, ``_``, ``.``).
    export
        Writes a fresh model to the path it is given (a temporary file).
    load
        Opens a model file and returns what the caller uses; raises any
        exception when the file is missing, corrupt or incompatible.
    root
        Cache root; default :func:`cache_root`.
    """
    target = model_file(key, root)
    folder = target.parent
    if target.exists():
        found = _try_cached(target, load, quiet=True)
        if found is not None:
            return found[0]
    folder.mkdir(parents=True, exist_ok=True)
    with _exclusive(folder / ".lock"):
        _remove_stale_scratch(folder)
        if target.exists():  # another process may have exported it while we waited
            found = _try_cached(target, load, quiet=False)
            if found is not None:
                return found[0]
        log.info("exporting ONNX model to %s (once per model version)", target)
        scratch = _scratch(folder, ".onnx")
        stamp = _scratch(folder, ".crc32")
        try:
            export(scratch)
            loaded = load(scratch)
            stamp.write_text(_checksum(scratch), encoding="ascii")
            for path in (scratch, stamp):
                os.chmod(path, 0o644)  # mkstemp makes it 0600; the cache may be shared
                _fsync(path)
            os.replace(scratch, target)
            os.replace(stamp, _stamp(target))
            _fsync(folder)
        finally:
            scratch.unlink(missing_ok=True)
            stamp.unlink(missing_ok=True)
    return loaded


def _try_cached(target: Path, load: Callable[[Path], T], *, quiet: bool) -> tuple[T] | None:
    """``(load(target),)`` when the file matches its checksum and loads, else ``None``.

    ``quiet``: a mismatch is not logged (outside the lock, a writer may be between
    replacing the model and its checksum; the caller looks again under the lock).
    """
    try:
        stamp = _stamp(target).read_text(encoding="ascii")
    except OSError as exc:
        reason = f"no checksum: {exc.strerror}"
    else:
        reason = "checksum mismatch" if stamp != _checksum(target) else ""
    if not reason:
        try:
            return (load(target),)
        except Exception as exc:
            reason = str(exc) or type(exc).__name__
    if not quiet:
        log.warning("cached ONNX model %s is unusable (%s); exporting it again", target, reason)
    return None


def _stamp(target: Path) -> Path:
    return target.with_name(target.name + ".crc32")


def _checksum(path: Path) -> str:
    """``"<size> <crc32>"``: enough to catch a torn, truncated or bit-flipped file."""
    crc = 0
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            crc = zlib.crc32(chunk, crc)
    return f"{path.stat().st_size} {crc:08x}"


def _remove_stale_scratch(folder: Path) -> None:
    """Delete the ``.export-*`` files of ``folder``: call it holding the folder's lock."""
    for path in sorted(folder.glob(f"{SCRATCH_PREFIX}*")):
        try:
            size = path.stat().st_size
            path.unlink()
        except FileNotFoundError:
            continue
        log.warning("removed %s (%d bytes), left by an interrupted ONNX export", path, size)


def _scratch(folder: Path, suffix: str) -> Path:
    fd, name = tempfile.mkstemp(dir=folder, prefix=SCRATCH_PREFIX, suffix=suffix)
    os.close(fd)
    return Path(name)


def model_file(key: str, root: Path | None = None) -> Path:
    """Where :func:`cached_model` keeps ``key``'s model: ``<root>/onnx/<key>/model.onnx``.

    >>> model_file("minilm-x", Path("/c")).as_posix()
    '/c/onnx/minilm-x/model.onnx'
    """
    if not key or not all(c.isalnum() or c in "-_." for c in key) or key.startswith("."):
        raise ValueError(f"cache key must be a plain folder name, got {key!r}")
    return (root if root is not None else cache_root()) / "onnx" / key / MODEL_FILE


@contextlib.contextmanager
def _exclusive(path: Path) -> Iterator[None]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the flock


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
