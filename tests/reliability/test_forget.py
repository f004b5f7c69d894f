"""Forget erases everywhere: no byte of the text is left under the data folder (issue 12).

Through the real parts: an embedded Chroma store and the SQLite journal on
disk, then a real ``chroma run`` server. Each test greps the files under the
folder (Chroma's ``chroma.sqlite3`` and vector files, the journal and its
``-wal``) for the forgotten text: right after ``forget`` every byte but the
unused slots of the vector files, and every byte once the store is opened
again (see ``tests/erased_bytes.py``); and checks that what was not forgotten
is still there and recallable.
"""

from __future__ import annotations

import json
import logging
import subprocess
from pathlib import Path

import pytest
from chromadb.api.shared_system_client import SharedSystemClient

from episeg.config import EpisegConfig, StoreConfig
from episeg.memory import Memory
from episeg.testing import ChromaServer, HashingEmbedder, InMemoryBackend
from episeg.types import Turn
from tests.erased_bytes import files_with, fts_trigrams, reopened_files_with
from tests.store.store_helpers import held_vector, stored_vectors

from .helpers import one_turn_episode


def _files_with(folder: Path, needle: str) -> list[str]:
    """Right after ``forget`` in this process: everywhere but Chroma's unused slots."""
    return files_with(folder, needle, unused_slots=False)


def _memory(path: Path, **kw: object) -> Memory:
    return Memory(path=path, embedder=HashingEmbedder(), judge=None, scorer=None, **kw)  # type: ignore[arg-type]


def _say(mem: Memory, user: str, session: str, text: str, ts: float) -> None:
    mem.observe(Turn(actor="user", text=text, ts=ts, user=user, session=session))


class TestForgetWithALargerSyncThreshold:
    def test_the_report_counts_what_chromas_log_still_holds(
        self, tmp_path: Path, caplog: pytest.LogCaptureFixture
    ) -> None:
        config = EpisegConfig(store=StoreConfig(sync_threshold=1000))
        mem = _memory(tmp_path, config=config)
        assert mem.backend.sync_threshold == 1000  # type: ignore[attr-defined]
        _say(mem, "alice", "s1", "zebraquokka alpha secret deploy note", 1.0)
        _say(mem, "alice", "s1", "and a second zebraquokka line", 2.0)
        [episode] = mem.flush("alice")
        with caplog.at_level(logging.WARNING, logger="episeg.memory"):
            report = mem.forget("alice", episode=episode.id)
        # the episode's row and its two turn rows: erased from the collections, not from the log
        assert report.episodes == (episode.id,) and report.log_rows == 3
        assert mem.episodes("alice") == [] and mem.recall("alice", "zebraquokka", k=1) == []
        assert _files_with(tmp_path, "zebraquokka") == ["chroma/chroma.sqlite3"]
        [warning] = [r.getMessage() for r in caplog.records if "Chroma's log" in r.getMessage()]
        assert "3 row(s)" in warning and "sync_threshold 1000" in warning
        assert report.to_dict()["log_rows"] == 3
        mem.close()

    def test_another_tenants_rows_under_the_same_id_are_not_counted(self, tmp_path: Path) -> None:
        # ids a caller chooses (store_episodes, the LangGraph adapter's) may coincide between
        # tenants; bob's rows in Chroma's log are not what alice's erasure left behind
        config = EpisegConfig(store=StoreConfig(sync_threshold=1000))
        mem = _memory(tmp_path, config=config)
        for user, text in (("alice", "zebraquokka alice note"), ("bob", "pangolinyak bob note")):
            mem.store_episodes([one_turn_episode(user, "shared-id", text)])
        report = mem.forget("alice", episode="shared-id")
        assert report.episodes == ("shared-id",)
        assert report.log_rows == 2  # alice's episode row and turn row; bob's two are his
        assert [e.summary for e in mem.episodes("bob")] == ["pangolinyak bob note"]
        assert mem.forget("bob", episode="shared-id").log_rows == 2
        mem.close()


class TestForgetEmbedded:
    def test_episode_session_and_tenant_leave_no_bytes(self, tmp_path: Path) -> None:
        mem = _memory(tmp_path)
        _say(mem, "alice", "s1", "zebraquokka alpha secret deploy note", 1.0)
        _say(mem, "alice", "s2", "marmotlynx beta kept around", 2.0)
        _say(mem, "alice", "s3", "ocelotkiwi session three secret", 3.0)
        _say(mem, "bob", "s1", "pangolinyak bob keeps this", 4.0)
        stored = mem.flush()
        _say(mem, "alice", "s3", "ocelotkiwi open turn not flushed", 5.0)  # journal only
        first = next(e for e in stored if e.user == "alice" and e.session == "s1")
        assert _files_with(tmp_path, "zebraquokka")  # it is there before

        # another tenant's id erases nothing and says so
        other = mem.forget("bob", episode=first.id)
        assert other.missing == (first.id,) and not other.found
        assert mem.store("alice").get([first.id])

        report = mem.forget("alice", episode=first.id)
        assert report.episodes == (first.id,) and report.vacuumed
        assert report.log_rows == 0  # sync_threshold 1: Chroma's log purged at once
        assert _files_with(tmp_path, "zebraquokka") == []
        assert fts_trigrams(tmp_path, "zebraquokka") == []  # nor pieces in the full-text index
        assert [h.episode.session for h in mem.recall("alice", "zebraquokka", k=5)] != ["s1"]

        report = mem.forget("alice", session="s3")
        assert report.turns >= 1  # the open turn left the journal
        assert _files_with(tmp_path, "ocelotkiwi") == []
        assert mem.journal.open_sessions("alice") == []

        hits = mem.recall("alice", "marmotlynx", k=1)
        assert hits and hits[0].episode.session == "s2"  # the rest is untouched

        assert mem.forget("alice", all=True).tenant
        assert _files_with(tmp_path, "marmotlynx") == []
        assert mem.episodes("alice") == []
        assert mem.recall("alice", "marmotlynx", k=1) == []
        assert _files_with(tmp_path, "pangolinyak")  # bob keeps his
        assert mem.recall("bob", "pangolinyak", k=1)
        mem.close()
        for erased in ("zebraquokka", "ocelotkiwi", "marmotlynx"):
            assert reopened_files_with(tmp_path, erased) == []
        assert reopened_files_with(tmp_path, "pangolinyak")

    def test_the_erased_vectors_leave_chromas_files_when_the_store_is_opened_again(
        self, tmp_path: Path
    ) -> None:
        # Chroma deletes a vector by marking its slot; episeg zeroes such slots at the next open
        embedder = HashingEmbedder()
        erased, kept = "zebraquokka alpha secret deploy note", "marmotlynx beta kept around"
        mem = _memory(tmp_path)
        _say(mem, "alice", "s1", erased, 1.0)
        _say(mem, "alice", "s2", kept, 2.0)
        first, second = sorted(mem.flush(), key=lambda e: e.session)
        assert first.embedding is not None and second.embedding is not None
        gone = [first.embedding, embedder.embed([erased])[0]]  # the episode's and its turn's
        mem.forget("alice", episode=first.id)
        mem.close()
        SharedSystemClient.clear_system_cache()  # as a new process would
        assert any(held_vector(stored_vectors(tmp_path), v) for v in gone)  # only marked
        mem = _memory(tmp_path)
        stored = stored_vectors(tmp_path)
        assert not any(held_vector(stored, v) for v in gone)
        assert held_vector(stored, second.embedding)
        assert held_vector(stored, embedder.embed([kept])[0])
        [hit] = mem.recall("alice", "marmotlynx", k=1)
        assert hit.episode.id == second.id
        mem.close()

    def test_a_forgotten_turn_id_is_accepted_again_and_survives_restart(
        self, tmp_path: Path
    ) -> None:
        mem = _memory(tmp_path)
        turn = Turn(actor="user", text="wombatibis", ts=1.0, id="t1", user="u", session="s")
        mem.observe(turn)
        [ep] = mem.flush()
        mem.forget("u", episode=ep.id)
        mem.observe(turn)  # not a duplicate any more
        assert [len(e.turns) for e in mem.flush()] == [1]
        mem.forget("u", session="s")
        mem.close()
        again = _memory(tmp_path)  # replay finds nothing of it
        assert again.flush("u") == [] and again.episodes("u") == []
        assert _files_with(tmp_path, "wombatibis") == []
        again.close()
        assert reopened_files_with(tmp_path, "wombatibis") == []

    def test_episodes_waiting_in_the_outbox_are_erased_too(self, tmp_path: Path) -> None:
        backend = InMemoryBackend()
        mem = _memory(tmp_path, backend=backend)
        backend.down = True  # the store is down: closed episodes wait in the outbox
        _say(mem, "u", "s1", "yakpelican pending one", 1.0)
        _say(mem, "u", "s2", "owlmantis pending two", 2.0)
        assert mem.flush("u") == [] and len(mem.pending_writes()) == 2
        backend.down = False
        [one] = [e for e in mem.pending_writes() if e.session == "s1"]
        assert mem.forget("u", episode=one.id).episodes == (one.id,)
        assert mem.forget("u", session="s2").session == "s2"
        assert mem.pending_writes() == []
        assert _files_with(tmp_path, "yakpelican") == []
        assert _files_with(tmp_path, "owlmantis") == []
        assert mem.retry_pending() == [] and mem.episodes("u") == []
        mem.close()

    def test_exactly_one_target(self, tmp_path: Path) -> None:
        mem = _memory(tmp_path)
        with pytest.raises(ValueError, match="exactly one"):
            mem.forget("u", episode="e", all=True)
        with pytest.raises(ValueError, match="exactly one"):
            mem.forget("u")
        mem.close()


@pytest.mark.slow
class TestForgetChromaServer:
    def test_text_leaves_the_server_folder(self, tmp_path: Path) -> None:
        server = ChromaServer(tmp_path / "srv")
        try:
            mem = _memory(tmp_path / "mem", backend=server.backend())
            _say(mem, "alice", "s1", "capybaraheron secret", 1.0)
            _say(mem, "alice", "s2", "tapirgecko kept", 2.0)
            [first, _] = mem.flush()
            assert _files_with(tmp_path / "srv", "capybaraheron")
            report = mem.forget("alice", episode=first.id)
            assert report.episodes == (first.id,) and not report.vacuumed
            assert _files_with(tmp_path / "mem", "capybaraheron") == []
            mem.close()
        finally:
            server.stop()
        # Chroma's log no longer holds it (sync_threshold=1); its free pages go with
        # the supported `chroma vacuum` on the server's folder
        subprocess.run(
            [server.exe, "vacuum", "--path", str(tmp_path / "srv"), "--force"],
            check=True,
            capture_output=True,
            timeout=120,
        )
        assert _files_with(tmp_path / "srv", "capybaraheron") == []
        assert _files_with(tmp_path / "srv", "tapirgecko")
        # and the unused slots of its vector files, which may hold stale heap bytes, with
        # `episeg scrub` (what an embedded store does when it is opened)
        from episeg.interfaces.cli import main

        assert main(["scrub", str(tmp_path / "srv")]) == 0
        assert files_with(tmp_path / "srv", "capybaraheron") == []
        assert files_with(tmp_path / "srv", "tapirgecko")

    def test_the_erased_vectors_leave_the_server_folder_by_episeg_scrub(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        from episeg.interfaces.cli import EXIT_BAD_INPUT, main

        srv = tmp_path / "srv"
        server = ChromaServer(srv)
        try:
            mem = _memory(tmp_path / "mem", backend=server.backend())
            _say(mem, "alice", "s1", "capybaraheron secret", 1.0)
            _say(mem, "alice", "s2", "tapirgecko kept", 2.0)
            first, second = sorted(mem.flush(), key=lambda e: e.session)
            assert first.embedding is not None and second.embedding is not None
            mem.forget("alice", episode=first.id)
            mem.close()
            # the server has the folder open: refused, nothing touched
            assert main(["scrub", str(srv)]) == EXIT_BAD_INPUT
            assert "stop the server first" in capsys.readouterr().err
        finally:
            server.stop()
        assert held_vector(stored_vectors(srv), first.embedding)  # Chroma only marked it
        assert main(["scrub", str(srv), "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["bytes_zeroed"] > 0
        stored = stored_vectors(srv)
        assert not held_vector(stored, first.embedding)
        assert held_vector(stored, second.embedding)
        server.start()  # the server takes its folder back as it was, less the erased vectors
        try:
            mem = _memory(tmp_path / "mem", backend=server.backend())
            [hit] = mem.recall("alice", "tapirgecko", k=1)
            assert hit.episode.id == second.id
            mem.close()
        finally:
            server.stop()
        assert main(["scrub", str(tmp_path / "mem")]) == EXIT_BAD_INPUT  # no Chroma data there
        assert "holds no Chroma data" in capsys.readouterr().err
