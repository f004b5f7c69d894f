"""``episeg.store.scrub``: Chroma's unused slots and deleted vectors are zeroed, nothing else.

Synthetic segments pin the arithmetic and the refusals; a real embedded store
checks that a stale byte planted in an unused slot, and the vector of an
episode deleted from it, are gone after the store is opened again, and that
the store still reads and queries the same.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from pathlib import Path

import numpy as np
import pytest
from chromadb.api.shared_system_client import SharedSystemClient

from episeg.store import ChromaBackend, scrub
from episeg.store.scrub import HEADER, STATE, Layout, scrub_segment, scrub_store
from tests.store.store_helpers import held_vector, make_episode, stored_vectors


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


def _age(seg: Path, seconds: float = 3600.0) -> None:
    """Date ``seg``'s vector file back, as one Chroma wrote before the last start."""
    data = seg / "data_level0.bin"
    old = data.stat().st_mtime_ns - int(seconds * 1e9)
    os.utime(data, ns=(old, old))


def test_a_segment_once_scrubbed_is_skipped_until_its_capacity_changes(tmp_path: Path) -> None:
    seg = _segment(tmp_path / "seg")
    assert scrub_store(tmp_path) == 140
    _age(seg)
    scrub_store(tmp_path)  # records the stamp of the file as it now is
    assert (tmp_path / STATE).read_text().startswith("seg 10 ")
    (seg / "length.bin").write_bytes(b"L" * 40)  # not Chroma's doing: shows the skip
    assert scrub_store(tmp_path) == 0
    assert (seg / "length.bin").read_bytes() == b"L" * 40
    header = bytearray((seg / "header.bin").read_bytes())  # a resize: 10 -> 12 slots
    header[12:20] = (12).to_bytes(8, "little")
    (seg / "header.bin").write_bytes(bytes(header))
    assert scrub_store(tmp_path) == 28
    assert (tmp_path / STATE).read_text().startswith("seg 12 ")


def test_segments_that_are_gone_leave_the_list_and_a_bad_list_means_all_again(
    tmp_path: Path,
) -> None:
    _segment(tmp_path / "a")
    _segment(tmp_path / "b")
    assert scrub_store(tmp_path) == 280
    shutil.rmtree(tmp_path / "b")
    scrub_store(tmp_path)
    assert [line.split()[:2] for line in (tmp_path / STATE).read_text().splitlines()] == [
        ["a", "10"]
    ]
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
        slots = Layout.read(header.parent)
        count, per = slots.count, slots.per_element
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

    def refuse(segment: Path, **kw: bool) -> int:
        raise PermissionError(13, "Permission denied", str(segment / "data_level0.bin"))

    monkeypatch.setattr(scrub, "scrub_segment", refuse)
    with caplog.at_level(logging.WARNING, logger="episeg.store"):
        assert scrub_store(tmp_path) == 0
    assert any("could not zero" in r.getMessage() for r in caplog.records)
    assert not (tmp_path / STATE).exists()  # not recorded: tried again next time
    monkeypatch.undo()
    assert scrub_store(tmp_path) == 140


def _mark_deleted(seg: Path, slot: int, *, per: int = 16) -> None:
    """Set hnswlib's deleted flag of ``slot`` and give it a recognisable vector (bytes 4..8)."""
    raw = bytearray((seg / "data_level0.bin").read_bytes())
    raw[slot * per + 2] |= 0x01
    raw[slot * per + 4 : slot * per + 8] = b"VVVV"
    (seg / "data_level0.bin").write_bytes(bytes(raw))


def test_the_vector_of_a_slot_marked_deleted_is_zeroed_and_nothing_else(tmp_path: Path) -> None:
    seg = _segment(tmp_path / "seg", count=3)  # slots: 4 B links, 4 B vector, 8 B label
    _mark_deleted(seg, 1)
    before = (seg / "data_level0.bin").read_bytes()
    assert scrub_segment(seg, tail=False) == 4
    after = (seg / "data_level0.bin").read_bytes()
    assert after[16:20] == before[16:20]  # its link header, deleted flag included, stays
    assert after[20:24] == bytes(4) and after[24:32] == before[24:32]  # vector gone, label kept
    assert after[:16] == before[:16] and after[32:] == before[32:]  # live slots and the tail
    assert scrub_segment(seg, tail=False) == 0  # already zero: nothing rewritten


def test_a_deletion_after_the_last_pass_is_found_and_an_unchanged_file_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seg = _segment(tmp_path / "seg", count=3)
    assert scrub_store(tmp_path) == 140
    _age(seg)
    assert scrub_store(tmp_path) == 0  # the stamp of the aged file is recorded
    calls: list[Path] = []
    real = scrub.scrub_segment

    def counted(segment: Path, **kw: bool) -> int | None:
        calls.append(segment)
        return real(segment, **kw)

    monkeypatch.setattr(scrub, "scrub_segment", counted)
    assert scrub_store(tmp_path) == 0 and calls == []  # unchanged since the last pass
    _mark_deleted(seg, 2)  # Chroma persisted a deletion: the file changed
    assert scrub_store(tmp_path) == 4 and calls == [seg]
    assert (seg / "data_level0.bin").read_bytes()[36:40] == bytes(4)
    assert scrub_store(tmp_path) == 0 and calls == [seg, seg]  # written just now: read again
    _age(seg)
    scrub_store(tmp_path)
    assert scrub_store(tmp_path) == 0 and calls == [seg, seg, seg]  # then skipped


def test_a_vector_file_changed_within_the_same_tick_is_not_taken_as_unchanged(
    tmp_path: Path,
) -> None:
    # Chroma writing right after a pass, within one mtime tick and at the same size, must not
    # hide a deletion: a file younger than two seconds gets no stamp and is read next time
    seg = _segment(tmp_path / "seg", count=3)
    assert scrub_store(tmp_path) == 140
    stamp = (seg / "data_level0.bin").stat().st_mtime_ns
    _mark_deleted(seg, 1)
    os.utime(seg / "data_level0.bin", ns=(stamp, stamp))  # the same mtime as at the pass
    assert scrub_store(tmp_path) == 4


def test_a_list_of_the_older_form_means_a_pass_for_deleted_vectors_only(tmp_path: Path) -> None:
    seg = _segment(tmp_path / "seg", count=3)
    (tmp_path / STATE).write_text("seg 10\n")  # written before deleted vectors were zeroed
    _mark_deleted(seg, 0)
    _age(seg)
    assert scrub_store(tmp_path) == 4  # the tail (done then) is not rewritten
    assert (seg / "length.bin").read_bytes() == b"L" * 40
    assert (tmp_path / STATE).read_text().startswith("seg 10 ")


def test_a_header_whose_vector_does_not_fit_its_slot_is_left_alone(tmp_path: Path) -> None:
    seg = tmp_path / "seg"
    _segment(seg)
    header = bytearray((seg / "header.bin").read_bytes())
    header[36:44] = (9).to_bytes(8, "little")  # label offset 9: the label would not end the slot
    (seg / "header.bin").write_bytes(bytes(header))
    assert scrub_segment(seg) is None


def test_a_deleted_episode_leaves_no_vector_once_the_store_is_opened_again(
    tmp_path: Path,
) -> None:
    rng = np.random.default_rng(5)
    vecs = {f"e{i}": rng.normal(size=8) for i in range(6)}
    store = ChromaBackend.persistent(tmp_path).store_for("u")
    store.add([make_episode(k, v, text=f"turn {k}") for k, v in vecs.items()])
    store.delete(["e2"])
    query = rng.normal(size=8)
    before = [(ep.id, round(sim, 5)) for ep, sim in store.query(query, 3)]
    SharedSystemClient.clear_system_cache()  # as a new process would
    assert held_vector(stored_vectors(tmp_path), vecs["e2"])  # Chroma only marked its slot
    again = ChromaBackend.persistent(tmp_path).store_for("u")
    stored = stored_vectors(tmp_path)
    assert not held_vector(stored, vecs["e2"])
    assert all(held_vector(stored, v) for k, v in vecs.items() if k != "e2")
    assert again.count() == 5
    assert [(ep.id, round(sim, 5)) for ep, sim in again.query(query, 3)] == before
    again.add([make_episode("e2", vecs["e2"], text="turn e2 again")])  # the same id, re-added
    assert again.query(vecs["e2"], 1)[0][0].id == "e2"


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs Linux /proc")
def test_processes_using_a_folder_are_found_and_this_one_is_not(tmp_path: Path) -> None:
    import subprocess
    import sys

    (tmp_path / "chroma.sqlite3").write_bytes(b"")
    with (tmp_path / "chroma.sqlite3").open("rb"):  # this process: never counted
        assert scrub.processes_using(tmp_path) == []
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; f = open(sys.argv[1]); sys.stdin.read()",
            str(tmp_path / "chroma.sqlite3"),
        ],
        stdin=subprocess.PIPE,
    )
    try:
        for _ in range(200):  # until it has opened the file
            if scrub.processes_using(tmp_path):
                break
            time.sleep(0.01)
        assert scrub.processes_using(tmp_path) == [holder.pid]
        assert scrub.processes_using(tmp_path / "elsewhere") == []
    finally:
        holder.communicate(b"", timeout=30)
    assert scrub.processes_using(tmp_path) == []
