"""The ONNX export cache with a tiny fake export: no model, no onnxruntime, milliseconds."""

from __future__ import annotations

import logging
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from episeg.embedders._onnx_cache import cache_root, cached_model
from episeg.embedders._onnx_export import fingerprint


class FakeExport:
    """Writes ``payload`` (slowly, to widen any race window) and counts its calls."""

    def __init__(self, payload: str = "model-v1", delay: float = 0.0) -> None:
        self.payload = payload
        self.delay = delay
        self.calls = 0

    def __call__(self, path: Path) -> None:
        self.calls += 1
        with path.open("w") as handle:
            handle.write(self.payload[:3])
            handle.flush()
            time.sleep(self.delay)
            handle.write(self.payload[3:])


def load(path: Path) -> str:
    text = path.read_text()
    if not text.startswith("model-"):
        raise ValueError(f"not a model: {text[:10]!r}")
    return text


def target(root: Path, key: str = "k1") -> Path:
    return root / "onnx" / key / "model.onnx"


class TestCachedModel:
    def test_exports_once_then_loads(self, tmp_path):
        export = FakeExport()
        assert cached_model("k1", export=export, load=load, root=tmp_path) == "model-v1"
        assert cached_model("k1", export=export, load=load, root=tmp_path) == "model-v1"
        assert export.calls == 1
        assert target(tmp_path).read_text() == "model-v1"

    def test_keys_do_not_share_a_file(self, tmp_path):
        cached_model("k1", export=FakeExport("model-a"), load=load, root=tmp_path)
        assert cached_model("k2", export=FakeExport("model-b"), load=load, root=tmp_path) == (
            "model-b"
        )
        assert target(tmp_path, "k1").read_text() == "model-a"

    @pytest.mark.parametrize("damage", ["", "model", "garbage bytes \x00\x01"])
    def test_corrupt_cache_is_logged_and_exported_again(self, tmp_path, caplog, damage):
        export = FakeExport()
        cached_model("k1", export=export, load=load, root=tmp_path)
        target(tmp_path).write_text(damage)
        with caplog.at_level(logging.WARNING, logger="episeg.embedders._onnx_cache"):
            assert cached_model("k1", export=export, load=load, root=tmp_path) == "model-v1"
        assert export.calls == 2
        assert "unusable" in caplog.text and "exporting it again" in caplog.text
        assert target(tmp_path).read_text() == "model-v1"

    @pytest.mark.parametrize("damage", ["flip", "no checksum"])
    def test_a_file_the_loader_accepts_is_still_checked(self, tmp_path, caplog, damage):
        export = FakeExport()
        cached_model("k1", export=export, load=load, root=tmp_path)
        if damage == "flip":  # same size, still "loads": only the checksum sees it
            target(tmp_path).write_text("model-v2")
        else:
            target(tmp_path).with_name("model.onnx.crc32").unlink()
        with caplog.at_level(logging.WARNING, logger="episeg.embedders._onnx_cache"):
            assert cached_model("k1", export=export, load=load, root=tmp_path) == "model-v1"
        assert export.calls == 2
        assert ("checksum" in caplog.text) and "exporting it again" in caplog.text

    def test_a_bad_export_never_lands_and_leaves_no_scratch(self, tmp_path):
        with pytest.raises(ValueError, match="not a model"):
            cached_model("k1", export=FakeExport("broken"), load=load, root=tmp_path)
        folder = target(tmp_path).parent
        assert not target(tmp_path).exists()
        assert [p.name for p in folder.iterdir()] == [".lock"]

    def test_a_failing_export_keeps_the_old_file(self, tmp_path):
        cached_model("k1", export=FakeExport(), load=load, root=tmp_path)
        target(tmp_path).write_text("stale")

        def explode(path: Path) -> None:
            path.write_text("model-half")
            raise OSError("disk full")

        with pytest.raises(OSError, match="disk full"):
            cached_model("k1", export=explode, load=load, root=tmp_path)
        assert target(tmp_path).read_text() == "stale"

    def test_concurrent_first_use_exports_once(self, tmp_path):
        export = FakeExport(delay=0.2)
        results: list[str] = []
        start = threading.Barrier(4)

        def use() -> None:
            start.wait()
            results.append(cached_model("k1", export=export, load=load, root=tmp_path))

        threads = [threading.Thread(target=use) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert results == ["model-v1"] * 4
        assert export.calls == 1

    def test_file_is_world_readable(self, tmp_path):
        cached_model("k1", export=FakeExport(), load=load, root=tmp_path)
        assert stat.S_IMODE(target(tmp_path).stat().st_mode) == 0o644

    @pytest.mark.parametrize("key", ["", "../up", "a/b", ".hidden"])
    def test_rejects_keys_that_are_not_plain_folder_names(self, tmp_path, key):
        with pytest.raises(ValueError, match="plain folder name"):
            cached_model(key, export=FakeExport(), load=load, root=tmp_path)


_KILLED_EXPORTER = """
import sys, time
from pathlib import Path
from episeg.embedders._onnx_cache import cached_model

def export(path):
    path.write_bytes(b"x" * 100_000)
    print("exporting", flush=True)
    time.sleep(600)  # killed here, as by SIGKILL, OOM or a power cut

cached_model("k1", export=export, load=Path.read_text, root=Path(sys.argv[1]))
"""


class TestInterruptedExport:
    """R2-7: a killed exporter's scratch files stayed in the cache folder for good."""

    @pytest.mark.slow
    def test_the_next_exporter_removes_them(self, tmp_path, caplog):
        proc = subprocess.Popen(
            [sys.executable, "-c", _KILLED_EXPORTER, str(tmp_path)], stdout=subprocess.PIPE
        )
        try:
            assert proc.stdout is not None and proc.stdout.readline() == b"exporting\n"
        finally:
            proc.kill()
            proc.wait()
        folder = target(tmp_path).parent
        left = sorted(p.name for p in folder.glob(".export-*"))
        assert sorted(name.rsplit(".", 1)[1] for name in left) == ["crc32", "onnx"]
        with caplog.at_level(logging.WARNING, logger="episeg.embedders._onnx_cache"):
            assert cached_model("k1", export=FakeExport(), load=load, root=tmp_path) == "model-v1"
        names = sorted(p.name for p in folder.iterdir())
        assert names == [".lock", "model.onnx", "model.onnx.crc32"]
        assert all(name in caplog.text for name in left)
        assert "interrupted ONNX export" in caplog.text


class TestUnwritableCache:
    """R2-10: an unwritable empty cache said only "[Errno 30] Read-only file system"."""

    def test_the_error_names_episeg_cache_dir(self, tmp_path, monkeypatch):
        from episeg.embedders import OnnxMiniLMEmbedder
        from episeg.errors import BackendUnavailableError

        blocker = tmp_path / "file"  # a cache folder that cannot be made, as on a read-only disk
        blocker.write_text("")
        monkeypatch.setenv("EPISEG_CACHE_DIR", str(blocker / "cache"))
        with pytest.raises(BackendUnavailableError) as err:
            OnnxMiniLMEmbedder(threads=1)
        message = str(err.value)
        assert "cannot write the ONNX model cache" in message and "Not a directory" in message
        assert "set EPISEG_CACHE_DIR" in message and "python -m episeg.embedders" in message


class TestCacheRoot:
    def test_explicit_dir_wins(self, monkeypatch, tmp_path):
        monkeypatch.setenv("EPISEG_CACHE_DIR", str(tmp_path / "c"))
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
        assert cache_root() == tmp_path / "c"

    def test_xdg_then_home(self, monkeypatch, tmp_path):
        monkeypatch.delenv("EPISEG_CACHE_DIR", raising=False)
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
        assert cache_root() == tmp_path / "x" / "episeg"
        monkeypatch.delenv("XDG_CACHE_HOME")
        monkeypatch.setenv("HOME", str(tmp_path))
        assert cache_root() == tmp_path / ".cache" / "episeg"


class TestFingerprint:
    def make(self, folder: Path, weights: bytes) -> Path:
        folder.mkdir()
        (folder / "config.json").write_text('{"hidden_size": 4}')
        (folder / "model.safetensors").write_bytes(weights)
        return folder

    def test_changes_with_weights_config_and_settings(self, tmp_path):
        weights = bytes(range(256)) * 4096  # 1 MiB
        base = fingerprint(self.make(tmp_path / "a", weights), quantize=False)
        changed = bytearray(weights)
        changed[-1] ^= 1
        assert fingerprint(self.make(tmp_path / "b", bytes(changed)), quantize=False) != base
        assert fingerprint(tmp_path / "a", quantize=True) != base
        (tmp_path / "a" / "config.json").write_text('{"hidden_size": 8}')
        assert fingerprint(tmp_path / "a", quantize=False) != base

    def test_is_stable_and_a_plain_folder_name(self, tmp_path):
        folder = self.make(tmp_path / "a", b"w" * 10)
        key = fingerprint(folder, quantize=False)
        assert key == fingerprint(folder, quantize=False)
        assert "/" not in key and not key.startswith(".")
