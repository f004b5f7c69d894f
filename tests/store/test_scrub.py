"""``episeg.store.scrub``: the unused slots of Chroma's vector files are zeroed, nothing else.

Synthetic segments pin the arithmetic and the refusals; a real embedded store
checks that a stale byte planted in an unused slot is gone after the store is
opened again, and that the store still reads and queries the same.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import numpy as np
import pytest
from chromadb.api.shared_system_client import SharedSystemClient

from episeg.store import ChromaBackend, scrub
from episeg.store.scrub import HEADER, STATE, scrub_segment, scrub_store
from tests.store.store_helpers import make_episode


def _segment(folder: Path, *, count: int = 3, slots: int = 10, per: int = 16, **kw: int) -> Path:
    folder.mkdir(parents=True)
    version = kw.get("version", 1)
    header = HEADER.pack(version, 0, slots, count, per, per - 8, 4, 0, 0, 16, 32, 16, 0.36, 100)
    (folder / "header.bin").write_bytes(header)
    (folder / "data_level0.bin").write_bytes(b"D" * kw.get("data_size", slots * per))
    (folder / "length.bin").write_bytes(b"L" * slots * 4)
    return folder


def test_only_the_slots_past_the_ones_in_use_are_zeroed(tmp_path: Path) -> None:
    seg = _segment(tmp_path / "seg")
    assert scrub_segment(seg) == (10 - 3) * 16 + (10 - 3) * 4
    assert (seg / "data_level0.bin").read_bytes() == b"D" * 48 + bytes(112)
    assert (seg / "length.bin").read_bytes() == b"L" * 12 + bytes(28)
    assert scrub_segment(seg) == 0  # already clean: nothing rewritten


def test_a_segment_once_scrubbed_is_skipped_until_its_capacity_changes(tmp_path: Path) -> None:
    seg = _segment(tmp_path / "seg")
    assert scrub_store(tmp_path) == 140
    assert (tmp_path / STATE).read_text() == "seg 10\n"
    (seg / "length.bin").write_bytes(b"L" * 40)  # not Chroma's doing: shows the skip
    assert scrub_store(tmp_path) == 0
    assert (seg / "length.bin").read_bytes() == b"L" * 40
    header = bytearray((seg / "header.bin").read_bytes())  # a resize: 10 -> 12 slots
    header[12:20] = (12).to_bytes(8, "little")
    (seg / "header.bin").write_bytes(bytes(header))
    assert scrub_store(tmp_path) == 28
    assert (tmp_path / STATE).read_text() == "seg 12\n"


def test_segments_that_are_gone_leave_the_list_and_a_bad_list_means_all_again(
    tmp_path: Path,
) -> None:
    _segment(tmp_path / "a")
    _segment(tmp_path / "b")
    assert scrub_store(tmp_path) == 280
    shutil.rmtree(tmp_path / "b")
    scrub_store(tmp_path)
    assert (tmp_path / STATE).read_text() == "a 10\n"
    (tmp_path / STATE).write_text("a ten\n")
    (tmp_path / "a" / "length.bin").write_bytes(b"L" * 40)
    assert scrub_store(tmp_path) == 28


def test_a_full_segment_is_left_as_it_is(tmp_path: Path) -> None:
    seg = _segment(tmp_path / "seg", count=10)
    assert scrub_segment(seg) == 0
    assert (seg / "data_level0.bin").read_bytes() == b"D" * 160


@pytest.mark.parametrize(
    "odd",
    [
        {"version": 2},
        {"count": 11},
        {"data_size": 40},  # shorter than the 3 slots in use: torn
    ],
)
def test_a_segment_it_does_not_understand_is_left_alone_and_logged(
    tmp_path: Path, odd: dict[str, int], caplog: pytest.LogCaptureFixture
) -> None:
    seg = _segment(tmp_path / "seg", **odd)
    before = (seg / "data_level0.bin").read_bytes()
    with caplog.at_level(logging.WARNING, logger="episeg.store"):
        assert scrub_store(tmp_path) == 0
    assert (seg / "data_level0.bin").read_bytes() == before
    assert any("left Chroma vector segment" in r.getMessage() for r in caplog.records)


def test_a_torn_header_is_left_alone(tmp_path: Path) -> None:
    seg = _segment(tmp_path / "seg")
    (seg / "header.bin").write_bytes(b"\x01\x00")
    assert scrub_segment(seg) is None
    assert (seg / "length.bin").read_bytes() == b"L" * 40


def _all_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in folder.rglob("*.bin"))


def _planted(folder: Path) -> tuple[Path, int]:
    """Plant a marker in the first unused slot of every vector segment; (a segment, slot size)."""
    planted = None
    for header in folder.glob("*/header.bin"):
        fields = HEADER.unpack(header.read_bytes())
        count, per = fields[3], fields[4]
        data = header.with_name("data_level0.bin")
        raw = bytearray(data.read_bytes())
        raw[count * per : count * per + 13] = b"stalesecret42"
        data.write_bytes(bytes(raw))
        planted = (header.parent, per)
    assert planted is not None
    return planted


def test_a_real_store_opened_again_has_no_stale_bytes_and_reads_the_same(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    store = ChromaBackend.persistent(tmp_path).store_for("u")
    store.add([make_episode(f"e{i}", rng.normal(size=8), text=f"turn {i}") for i in range(5)])
    query = rng.normal(size=8)
    before = [(ep.id, round(sim, 6)) for ep, sim in store.query(query, 3)]
    SharedSystemClient.clear_system_cache()  # as a new process would
    _planted(tmp_path)
    assert b"stalesecret42" in _all_bytes(tmp_path)
    again = ChromaBackend.persistent(tmp_path).store_for("u")
    assert b"stalesecret42" not in _all_bytes(tmp_path)
    assert again.count() == 5
    assert [(ep.id, round(sim, 6)) for ep, sim in again.query(query, 3)] == before
    again.add([make_episode("e9", rng.normal(size=8), text="one more turn")])
    assert again.count() == 6


def test_a_store_this_process_has_open_is_not_touched(tmp_path: Path) -> None:
    store = ChromaBackend.persistent(tmp_path).store_for("u")
    store.add([make_episode("e1", np.ones(8), text="hello there")])
    _planted(tmp_path)
    ChromaBackend.persistent(tmp_path)  # the same folder, still open here: Chroma owns its files
    assert b"stalesecret42" in _all_bytes(tmp_path)


def test_a_segment_it_cannot_write_is_logged_and_tried_at_the_next_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    _segment(tmp_path / "seg")

    def refuse(segment: Path) -> int:
        raise PermissionError(13, "Permission denied", str(segment / "data_level0.bin"))

    monkeypatch.setattr(scrub, "scrub_segment", refuse)
    with caplog.at_level(logging.WARNING, logger="episeg.store"):
        assert scrub_store(tmp_path) == 0
    assert any("could not zero" in r.getMessage() for r in caplog.records)
    assert not (tmp_path / STATE).exists()  # not recorded: tried again next time
    monkeypatch.undo()
    assert scrub_store(tmp_path) == 140
