"""Erase from the episode store: what a forget found and removed, and the file vacuum.

:class:`ForgetReport` is what :meth:`episeg.memory.Memory.forget` answers.
Store-side erasure goes through the tenant-bound store (so another tenant's
id can only ever be "not found"): episodes leave the episode collection and
their turn rows leave the turn collection; a whole tenant's two collections
are dropped. Chroma's write-ahead log (``embeddings_queue``) is purged after
each write when collections have ``sync_threshold=1``, the default
(:class:`~episeg.config.StoreConfig`); with a larger one an erased record's
rows stay there until Chroma next persists, and :func:`log_rows` counts them
(``ForgetReport.log_rows``). The deleted rows' bytes stay in SQLite's free
pages until :func:`vacuum_chroma` (embedded store) or ``chroma vacuum --path
DIR`` (the supported CLI, for a ``chroma run`` server's folder).

>>> r = ForgetReport(user="alice", episodes=("e1",), missing=("e9",))
>>> r.to_dict()["missing"], r.found, r.log_rows
(['e9'], True, None)
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from episeg.errors import EpisegError, StoreError
from episeg.store.access import CHROMA_ACCESS
from episeg.store.import_check import read_export
from episeg.store.repair import rebuild_folder, write_rebuild_file
from episeg.store.tenants import collection_name
from episeg.store.turns import turn_collection_name, turn_row_id
from episeg.types import Episode
from episeg.typing import EpisodeStore

__all__ = ["ForgetReport", "erase_from_rebuild", "log_rows", "session_episodes", "vacuum_chroma"]

_PAGE = 1000
_FTS = "embedding_fulltext_search"  # Chroma's full-text index of documents (FTS5, trigrams)


@dataclass(frozen=True, slots=True)
class ForgetReport:
    """What one forget erased for ``user``.

    ``episodes`` the stored episodes erased; ``turns`` journaled turns erased
    (open or waiting for the store); ``missing`` asked-for episode ids that
    are not this tenant's (another tenant's id lands here: nothing of theirs
    is touched); ``vacuumed`` whether the store's file was vacuumed here
    (False for a ``chroma run`` server: run ``chroma vacuum`` there);
    ``log_rows`` how many rows of an embedded store's write-ahead log still
    hold an erased record (0 with the default ``store.sync_threshold`` of 1;
    ``None`` for a server, which this process cannot read).
    """

    user: str
    episodes: tuple[str, ...] = ()
    turns: int = 0
    missing: tuple[str, ...] = ()
    session: str | None = None
    tenant: bool = False
    vacuumed: bool = False
    log_rows: int | None = None

    @property
    def found(self) -> bool:
        """Whether anything was erased."""
        return bool(self.episodes or self.turns or self.tenant)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the HTTP, CLI and MCP answer)."""
        return {
            "user": self.user,
            "forgotten": list(self.episodes),
            "turns": self.turns,
            "missing": list(self.missing),
            "session": self.session,
            "tenant": self.tenant,
            "vacuumed": self.vacuumed,
            "log_rows": self.log_rows,
        }


def session_episodes(store: EpisodeStore, session: str | None) -> list[Episode]:
    """Every stored episode of ``session`` (``None``: of any) in this tenant's store.

    Archived episodes are included.
    """
    found: list[Episode] = []
    offset = 0
    while True:
        page = store.list_episodes(limit=_PAGE, offset=offset, include_archived=True)
        found.extend(ep for ep in page if session in (None, ep.session))
        if len(page) < _PAGE:
            return found
        offset += _PAGE


def log_rows(folder: Path | None, user: str, episodes: Sequence[Episode]) -> int | None:
    """Rows of an embedded store's write-ahead log still holding user's erased records.

    Their records are the episode's own and its turn rows
    (:func:`~episeg.store.turns.turn_row_id`), in ``user``'s two collections
    only: another tenant may use the same episode id, and its rows are not
    this erasure's. A row counts if it carries a vector or metadata (the row
    of a delete holds neither); ``None`` if ``folder`` holds no embedded
    store; 0 once the tenant's collections are gone (dropping a collection
    drops its log).

    Raises
    ------
    StoreError
        If SQLite cannot read the file.
    """
    if folder is None or not (folder / "chroma.sqlite3").exists():
        return None
    ids = [ep.id for ep in episodes]
    ids += [turn_row_id(ep.id, pos) for ep in episodes for pos in range(len(ep.turns))]
    wanted = list(dict.fromkeys(ids))
    names = (collection_name(user), turn_collection_name(user))
    total = 0
    with (
        CHROMA_ACCESS.exclusive(),
        _chroma_file(folder, "read Chroma's log in", read_only=True) as db,
    ):
        owned = [
            row[0] for row in db.execute("SELECT id FROM collections WHERE name IN (?, ?)", names)
        ]
        if not owned or not wanted:
            return 0
        # a log row's topic is "persistent://<tenant>/<database>/<collection id>"
        topics = " OR ".join("topic LIKE ?" for _ in owned)
        patterns = [f"%/{collection}" for collection in owned]
        for start in range(0, len(wanted), _PAGE):
            chunk = wanted[start : start + _PAGE]
            marks = ",".join("?" * len(chunk))
            (n,) = db.execute(
                f"SELECT COUNT(*) FROM embeddings_queue WHERE id IN ({marks}) AND ({topics}) AND "
                "(vector IS NOT NULL OR COALESCE(metadata, '{}') != '{}')",
                [*chunk, *patterns],
            ).fetchone()
            total += int(n)
    return total


def erase_from_rebuild(
    folder: Path | None,
    tenant: str,
    *,
    episode: str | None = None,
    session: str | None = None,
    everything: bool = False,
) -> list[Episode]:
    """Take what ``forget`` erases out of an unfinished rebuild of ``tenant``; return it.

    A rebuild that could not finish (:mod:`episeg.store.repair`) keeps the
    tenant's episodes in ``<folder>.repair/<collection>/episodes.jsonl`` and
    adds them back at the next start; an erased episode left there would be
    stored again. ``everything`` deletes the folder; otherwise the file is
    written again without ``episode`` or ``session``'s episodes.

    Raises
    ------
    StoreError
        If the file cannot be read or written again (nothing is erased then).
    """
    if folder is None:
        return []
    work = rebuild_folder(folder, tenant)
    if not work.is_dir():
        return []
    file = work / "episodes.jsonl"
    try:
        with file.open(encoding="utf-8") as lines:
            episodes = read_export(lines, tenant=tenant)
    except FileNotFoundError:
        episodes = []  # stopped before its file was written: the folder holds no episode
    except (OSError, EpisegError) as exc:
        raise StoreError(f"cannot read the unfinished rebuild in {work}: {exc}") from exc
    if everything:
        shutil.rmtree(work)
        return episodes
    gone = [
        e for e in episodes if e.id == episode or (session is not None and e.session == session)
    ]
    if gone:
        ids = {e.id for e in gone}
        kept = [e for e in episodes if e.id not in ids]
        dims = {int(e.embedding.size) for e in kept if e.embedding is not None}
        write_rebuild_file(work, tenant, kept, dims.pop() if len(dims) == 1 else None)
    return gone


def vacuum_chroma(folder: Path | None, *, timeout: float = 30.0) -> bool:
    """Rewrite an embedded Chroma store's ``chroma.sqlite3`` without erased data; False if none.

    First Chroma's full-text index (an FTS5 table of trigrams) is merged
    (``'optimize'``): a deleted document's trigrams otherwise stay in its data
    blocks, which ``VACUUM`` copies as they are. Then ``VACUUM`` leaves no freed
    page. Both run holding :data:`~episeg.store.access.CHROMA_ACCESS`
    exclusively: no Chroma call of this process is in flight meanwhile (two
    copies of SQLite in one process do not lock each other out; a ``VACUUM``
    beside a Chroma read corrupted the file). Chroma's connection reads the
    rewritten file at its next call. ``timeout``: how long SQLite waits for
    another process's lock.

    Raises
    ------
    StoreError
        If SQLite cannot optimize or vacuum the file.
    """
    if folder is None or not (folder / "chroma.sqlite3").exists():
        return False
    with (
        CHROMA_ACCESS.exclusive(),
        _chroma_file(folder, "vacuum the Chroma store in", timeout=timeout) as db,
    ):
        if db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (_FTS,)
        ).fetchone():
            db.execute(f"INSERT INTO {_FTS}({_FTS}) VALUES ('optimize')")
        db.execute("VACUUM")
    return True


@contextmanager
def _chroma_file(
    folder: Path, what: str, *, read_only: bool = False, timeout: float = 30.0
) -> Iterator[sqlite3.Connection]:
    """A connection to ``folder/chroma.sqlite3``, closed after; SQLite errors as StoreError."""
    path = folder / "chroma.sqlite3"
    try:
        if read_only:
            db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=timeout)
        else:
            db = sqlite3.connect(path, timeout=timeout, isolation_level=None)
        try:
            yield db
        finally:
            db.close()
    except sqlite3.Error as exc:
        raise StoreError(f"cannot {what} {folder}: {exc}") from exc
