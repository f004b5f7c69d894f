"""Episode ids are unique across processes that share one store (issue 12, F3).

Two processes with separate journals writing to one ``chroma run`` server used to give
episodes of equal (tenant, session, first turn id) the same id, so the second overwrote
the first. Each journal now carries a random node id folded into its episode ids.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from episeg.durability.journal import Journal
from episeg.memory import Memory
from episeg.testing import ChromaServer, HashingEmbedder
from episeg.types import Actor, Turn

from .memstore import MemBackend


def _turns(topic: str) -> list[Turn]:
    texts = [f"{topic} step one", f"Done. <episode_boundary> {topic}", f"{topic} again"]
    return [
        Turn(
            actor=Actor.USER if n % 2 == 0 else Actor.ASSISTANT,
            text=t,
            ts=float(n),
            user="alice",
            session="s1",
            id=f"t{n}",
        )
        for n, t in enumerate(texts)
    ]


class TestNodeId:
    def test_a_new_journal_gets_a_random_node_kept_on_reopen(self, tmp_path: Path) -> None:
        one = Journal(tmp_path / "a" / "journal.sqlite3")
        node = one.node
        one.close()
        again = Journal(tmp_path / "a" / "journal.sqlite3")
        assert len(node) == 16 and again.node == node
        assert Journal(tmp_path / "b" / "journal.sqlite3").node != node
        again.close()

    def test_a_journal_from_before_node_ids_keeps_its_ids(self, tmp_path: Path) -> None:
        path = tmp_path / "journal.sqlite3"
        with sqlite3.connect(path) as db:  # the tables a journal had before node ids
            db.execute(
                "CREATE TABLE sessions (user TEXT, session TEXT, last_ts REAL,"
                " checkpoint TEXT NOT NULL, PRIMARY KEY (user, session))"
            )
        legacy = Journal(path)
        assert legacy.node == ""
        legacy.close()
        assert Journal(path).node == ""  # and stays so

    def test_two_journals_sharing_a_store_do_not_overwrite(self, tmp_path: Path) -> None:
        backend = MemBackend()
        for name, topic in (("a", "deploy prod"), ("b", "rotate the jwt key")):
            mem = Memory(
                path=tmp_path / name,
                embedder=HashingEmbedder(),
                judge=None,
                scorer=None,
                backend=backend,
            )
            mem.ingest(_turns(topic))
            mem.flush()
            mem.close()
        assert len(backend.writes) == 4 and len(backend.rows) == 4  # 2 episodes each, none lost

    def test_ids_survive_a_restart(self, tmp_path: Path) -> None:
        backend = MemBackend()
        kw = {"embedder": HashingEmbedder(), "judge": None, "scorer": None, "backend": backend}
        mem = Memory(path=tmp_path, **kw)  # type: ignore[arg-type]
        mem.ingest(_turns("deploy prod")[:2])  # the boundary closed episode 1; t2 is open
        mem.close()  # a crash: t2 only in the journal
        mem = Memory(path=tmp_path, **kw)  # type: ignore[arg-type]
        mem.ingest(_turns("deploy prod"))  # re-sent: t0, t1 refused, t2 too
        mem.flush()
        assert sorted(len(e.turns) for e in backend.rows.values()) == [1, 2]
        assert len(backend.writes) == 2  # no id changed across the restart
        mem.close()


_WORKER = """
import json, sys
from episeg.interfaces.runtime import open_memory
from episeg.types import Turn
mem = open_memory(sys.argv[1], chroma_url=sys.argv[2])
for line in sys.argv[3:]:
    mem.observe(Turn.from_dict(json.loads(line)))
ids = [e.id for e in mem.flush()]
print(json.dumps(ids))
"""


@pytest.mark.slow
def test_two_processes_on_one_chroma_server_keep_every_episode(tmp_path: Path) -> None:
    with ChromaServer(tmp_path / "chroma") as server:
        url = f"http://127.0.0.1:{server.port}"
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", _WORKER, str(tmp_path / name), url]
                + [json.dumps(t.to_dict()) for t in _turns(topic)],
                stdout=subprocess.PIPE,
                text=True,
            )
            for name, topic in (("a", "deploy prod"), ("b", "rotate the jwt key"))
        ]
        outs = [p.communicate(timeout=300)[0] for p in procs]
        assert [p.returncode for p in procs] == [0, 0]
        store = server.backend().store_for("alice")
        episodes = store.list_episodes(limit=100)
    assert all(json.loads(out) for out in outs)
    texts = sorted(t.text for e in episodes for t in e.turns)
    assert len(texts) == 6 and len({e.id for e in episodes}) == len(episodes)
    assert any("deploy prod" in t for t in texts) and any("jwt" in t for t in texts)
