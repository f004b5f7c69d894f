"""episeg's own access to Chroma's SQLite file never overlaps a Chroma call of this process.

Found by review: ``forget`` vacuumed ``chroma.sqlite3`` through Python's SQLite while
another thread's recall read it through Chroma's own copy of SQLite; the two copies
do not lock each other out in one process, and the file was left malformed (an
orphan index; it could not be opened again). Every Chroma call now holds
:data:`~episeg.store.access.CHROMA_ACCESS` shared and the vacuum holds it alone.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest
from chromadb.errors import InternalError

from episeg.memory import Memory
from episeg.store.access import StoreAccess
from episeg.store.chroma_io import translate, vanished_retry
from episeg.store.erase import vacuum_chroma
from episeg.testing import HashingEmbedder
from episeg.types import Turn


class TestStoreAccess:
    def test_many_share_it_and_the_exclusive_holder_waits_for_them(self) -> None:
        access, order = StoreAccess(), []
        inside, release = threading.Event(), threading.Event()

        def reader() -> None:
            with access.shared():
                inside.set()
                release.wait(5)
                order.append("reader out")

        def writer() -> None:
            with access.exclusive():
                order.append("writer in")

        threading.Thread(target=reader).start()
        assert inside.wait(5)
        with access.shared():  # a second holder does not wait for the first
            pass
        w = threading.Thread(target=writer)
        w.start()
        time.sleep(0.05)
        assert order == []  # the writer waits for the reader
        release.set()
        w.join(5)
        assert order == ["reader out", "writer in"]

    def test_a_waiting_writer_goes_before_new_readers(self) -> None:
        access, order = StoreAccess(), []
        inside, release = threading.Event(), threading.Event()

        def first_reader() -> None:
            with access.shared():
                inside.set()
                release.wait(5)

        def writer() -> None:
            with access.exclusive():
                order.append("writer")

        def late_reader() -> None:
            with access.shared():
                order.append("late reader")

        threading.Thread(target=first_reader).start()
        assert inside.wait(5)
        w = threading.Thread(target=writer)
        w.start()
        while not access._waiting_writers:
            time.sleep(0.001)
        r = threading.Thread(target=late_reader)
        r.start()
        time.sleep(0.05)
        release.set()
        w.join(5)
        r.join(5)
        assert order == ["writer", "late reader"]

    def test_nested_shared_use_does_not_wait_and_exclusive_inside_it_is_refused(self) -> None:
        access = StoreAccess()
        with access.shared(), access.shared():
            assert access.readers == 1
            with pytest.raises(RuntimeError, match="holds it shared"), access.exclusive():
                pass
        assert access.readers == 0 and not access.writing


def _say(mem: Memory, n: int) -> None:
    text = f"deploy the billing service, step {n}"
    mem.observe(Turn(actor="user", text=text, ts=float(n), user="ann", session=f"s{n}"))


def test_the_vacuum_waits_for_a_chroma_call_in_flight(tmp_path: Path) -> None:
    mem = Memory(path=tmp_path, embedder=HashingEmbedder(), judge=None, scorer=None)
    _say(mem, 1)
    mem.flush()
    in_call, leave, done = threading.Event(), threading.Event(), threading.Event()

    def chroma_call() -> None:  # what every store call does around Chroma
        with translate("a slow query"):
            in_call.set()
            leave.wait(5)

    def vacuum() -> None:
        vacuum_chroma(tmp_path / "chroma")
        done.set()

    threading.Thread(target=chroma_call).start()
    assert in_call.wait(5)
    threading.Thread(target=vacuum).start()
    assert not done.wait(0.2)  # not while the call runs
    leave.set()
    assert done.wait(10)
    assert mem.recall("ann", "billing service", k=1)
    mem.close()


@pytest.mark.slow  # ~30 vacuums beside a recall loop: a few seconds
def test_forget_beside_recalls_leaves_the_store_whole(tmp_path: Path) -> None:
    mem = Memory(path=tmp_path, embedder=HashingEmbedder(), judge=None, scorer=None)
    for n in range(60):
        _say(mem, n)
    mem.flush()
    stop, errors = threading.Event(), []

    def recalls() -> None:
        while not stop.is_set():
            try:
                mem.recall("ann", "deploy billing service", k=5)
            except Exception as exc:  # any error is the failure
                errors.append(repr(exc))

    readers = [threading.Thread(target=recalls) for _ in range(2)]
    for t in readers:
        t.start()
    try:
        for n in range(30):
            mem.forget("ann", session=f"s{n}")
    finally:
        stop.set()
        for t in readers:
            t.join(30)
    assert errors == []
    assert len(mem.episodes("ann", limit=100)) == 30
    mem.close()
    with sqlite3.connect(tmp_path / "chroma" / "chroma.sqlite3") as db:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]


def test_a_read_of_an_id_deleted_meanwhile_is_tried_again() -> None:
    # What a get beside a delete met inside Chroma (found as a flaky failure of the test above)
    calls: list[int] = []

    def get() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise InternalError("Error executing plan: Error finding id")
        return "read"

    assert vanished_retry(get) == "read" and len(calls) == 2

    def broken() -> str:
        calls.append(1)
        raise InternalError("no such table: collections")

    calls.clear()
    with pytest.raises(InternalError, match="no such table"):
        vanished_retry(broken)
    assert len(calls) == 1  # any other failure is not retried
