"""Rebuild a tenant whose embedded Chroma vector segment a ``kill -9`` tore.

Embedded Chroma writes a collection's HNSW vector segment (index files, then
``index_metadata.pickle``) with plain writes after every write here
(``sync_threshold=1``). A SIGKILL among them leaves a segment Chroma can
neither load nor extend ("Error deserializing pickle file", "Failed to apply
logs to the hnsw segment writer"; chroma-core/chroma#7238, #7678): every read
and write of the collection fails from then on. Its metadata segment (SQLite,
transactional) is intact: each episode but its vectors.

:func:`rebuild_tenant` puts such a tenant back together:

1. the episodes are read from Chroma's SQLite file (read-only; :func:`read_records`);
2. vectors come from whichever collection still reads (the episode vectors, or
   the turn vectors and their normalised mean), else from the turns' text
   re-embedded with the memory's embedder, as the segmenter made them;
3. the episodes are written to ``<chroma folder>.repair/<collection>/``
   (``episeg-export`` format, fsynced) before anything is dropped;
4. the two collections are dropped (once) and the episodes upserted back, then
   the folder is deleted. A crash in 4 leaves it: :func:`resume_rebuilds` (at
   start-up) or the next rebuild of the tenant finishes it; nothing is lost.

"""

from __future__ import annotations

import dataclasses
import logging
import os
import shutil
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from episeg.errors import EpisegError, StoreError
from episeg.store.chroma_io import is_torn
from episeg.store.codec import decode
from episeg.store.import_check import read_export
from episeg.store.portability import episode_line, header_line, trailer_line
from episeg.store.tenants import collection_name, validate_tenant
from episeg.types import Episode

__all__ = [
    "is_torn",
    "read_records",
    "rebuild_folder",
    "rebuild_tenant",
    "resume_rebuilds",
    "write_rebuild_file",
]

log = logging.getLogger(__name__)
_DOCUMENT = "chroma:document"
Embed = Callable[[Sequence[str]], np.ndarray]


def read_records(folder: Path, collection: str) -> list[tuple[str, dict[str, Any]]]:
    """``(id, metadata)`` of every record of ``collection`` in Chroma's SQLite file.

    Reads the collection's metadata segment (``chroma.sqlite3`` in
    ``folder``) without Chroma; an unknown collection has no records.

    Raises
    ------
    StoreError
        If the file cannot be read or its layout is not the one of
        chromadb 1.5 (the version episeg pins).
    """
    path = Path(folder) / "chroma.sqlite3"
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
        try:
            return _records(db, collection)
        finally:
            db.close()
    except sqlite3.Error as exc:
        raise StoreError(f"cannot read Chroma's records of {collection} in {path}: {exc}") from exc


def _records(db: sqlite3.Connection, collection: str) -> list[tuple[str, dict[str, Any]]]:
    segments = db.execute(
        "SELECT s.id FROM segments s JOIN collections c ON s.collection = c.id "
        "WHERE c.name = ? AND s.scope = 'METADATA'",
        (collection,),
    ).fetchall()
    if len(segments) > 1:
        raise StoreError(f"collection {collection} has {len(segments)} metadata segments")
    if not segments:
        return []
    rows = db.execute(
        "SELECT e.id, e.embedding_id, m.key, m.string_value, m.int_value, m.float_value, "
        "m.bool_value FROM embeddings e LEFT JOIN embedding_metadata m ON m.id = e.id "
        "WHERE e.segment_id = ? ORDER BY e.id",
        (segments[0][0],),
    ).fetchall()
    arrays = db.execute(
        "SELECT COUNT(*) FROM embedding_metadata_array a JOIN embeddings e ON a.id = e.id "
        "WHERE e.segment_id = ?",
        (segments[0][0],),
    ).fetchone()[0]
    if arrays:
        raise StoreError(f"collection {collection} holds array metadata; episeg writes none")
    out: dict[int, tuple[str, dict[str, Any]]] = {}
    for row_id, record_id, key, text, integer, real, flag in rows:
        _, meta = out.setdefault(row_id, (record_id, {}))
        if key is None or key == _DOCUMENT:
            continue
        if flag is not None:
            meta[key] = bool(flag)
        elif integer is not None:
            meta[key] = int(integer)
        elif real is not None:
            meta[key] = float(real)
        else:
            meta[key] = text
    return list(out.values())


def rebuild_tenant(backend: Any, tenant: str, embed: Embed) -> int:
    """Rebuild ``tenant``'s collections in an embedded store; return the episodes kept.

    ``backend`` is a :class:`~episeg.store.chroma.ChromaBackend` with a
    ``path``; ``embed`` the memory's embedder (texts cut as the segmenter cuts them).

    Raises
    ------
    StoreError
        Without an embedded store's folder (a ``chroma run`` server keeps
        its own files), or when a step fails (the rebuild file then stays and
        :func:`resume_rebuilds` finishes the job).
    """
    tenant = validate_tenant(tenant)
    folder = _folder(backend)
    work = rebuild_folder(folder, tenant)
    if (work / "episodes.jsonl").exists():  # an unfinished rebuild: its file is the truth
        return _restore(backend, tenant, work)
    episodes = []
    for record_id, meta in read_records(folder, collection_name(tenant)):
        if meta.get("tenant") != tenant:
            log.error(
                "record %r of %r is stamped %r; not rebuilt", record_id, tenant, meta["tenant"]
            )
            continue
        episodes.append(decode(record_id, None, meta, None))
    episodes = _with_vectors(backend, tenant, episodes, embed)
    dims = {int(np.asarray(e.embedding).size) for e in episodes}
    write_rebuild_file(work, tenant, episodes, dims.pop() if len(dims) == 1 else None)
    kept = _restore(backend, tenant, work)
    log.warning("rebuilt the torn collections of tenant %r: %d episode(s)", tenant, kept)
    return kept


def resume_rebuilds(backend: Any) -> list[str]:
    """Finish the rebuilds a crash interrupted (their files are left); return the tenants."""
    folder = getattr(backend, "path", None)
    if folder is None or not Path(f"{folder}.repair").is_dir():
        return []
    done = []
    for work in sorted(Path(f"{folder}.repair").iterdir()):
        if not (work / "episodes.jsonl").exists():  # died before anything was dropped
            shutil.rmtree(work)
            continue
        try:
            tenant = validate_tenant((work / "tenant.txt").read_text(encoding="utf-8"))
            kept = _restore(backend, tenant, work)
        except (OSError, EpisegError) as exc:  # the folder stays for the next try
            log.error("could not finish the interrupted rebuild in %s: %s", work, exc)
            continue
        log.warning("finished the interrupted rebuild of tenant %r: %d episode(s)", tenant, kept)
        done.append(tenant)
    return done


def _folder(backend: Any) -> Path:
    folder = getattr(backend, "path", None)
    if folder is None:
        raise StoreError("a torn Chroma vector segment can only be rebuilt in an embedded store")
    return Path(folder)


def _chunks(items: Sequence[Episode], size: int = 512) -> Iterator[Sequence[Episode]]:
    yield from (items[at : at + size] for at in range(0, len(items), size))


def _stored_vectors(store: Any, ids: list[str]) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The episode and turn vectors of ``ids`` that still read (a torn collection gives none)."""
    found: tuple[dict[str, Any], dict[str, np.ndarray]] = ({}, {})
    reads: tuple[Callable[[], dict[str, Any]], ...] = (
        lambda: {e.id: e.embedding for e in store.get(ids) if e.embedding is not None},
        lambda: dict(store.turn_vectors(ids)),
    )
    for into, read, what in zip(found, reads, ("episode", "turn"), strict=True):
        try:
            into.update(read())
        except StoreError as exc:
            if not is_torn(exc):
                raise
            log.warning(
                "the %s vectors of %d episode(s) are computed again: %s", what, len(ids), exc
            )
    return found


def _with_vectors(
    backend: Any, tenant: str, episodes: list[Episode], embed: Embed
) -> list[Episode]:
    store = backend.store_for(tenant)
    kept_vectors: dict[str, Any] = {}
    kept_turns: dict[str, np.ndarray] = {}
    for chunk in _chunks(episodes):
        stored_vectors, stored_turns = _stored_vectors(store, [e.id for e in chunk])
        kept_vectors.update(stored_vectors)
        kept_turns.update(stored_turns)
    out = []
    for chunk in _chunks(episodes):
        missing = [e for e in chunk if len(kept_turns.get(e.id, ())) != len(e.turns)]
        texts = [t.text for e in missing for t in e.turns]
        matrix = np.asarray(embed(texts), dtype=np.float32) if texts else np.zeros((0, 0))
        at = 0
        for e in missing:
            kept_turns[e.id] = matrix[at : at + len(e.turns)]
            at += len(e.turns)
        for e in chunk:
            rows = kept_turns[e.id]
            vector = kept_vectors.get(e.id)
            if vector is None:
                if not len(rows):
                    raise StoreError(f"episode {e.id!r} has neither turns nor a readable vector")
                mean = rows.mean(axis=0)
                vector = (mean / max(float(np.linalg.norm(mean)), 1e-12)).astype(np.float32)
            out.append(
                dataclasses.replace(
                    e, embedding=vector, turn_embeddings=rows if len(rows) else None
                )
            )
    return out


def rebuild_folder(folder: Path, tenant: str) -> Path:
    """Where a rebuild of ``tenant`` in the store ``folder`` keeps its file until it is done."""
    return Path(f"{folder}.repair") / collection_name(tenant)


def write_rebuild_file(
    work: Path, tenant: str, episodes: Sequence[Episode], dim: int | None
) -> None:
    """The episodes, durably, in ``work`` (``tenant.txt`` first, then the episodes file)."""
    work.mkdir(parents=True, exist_ok=True)
    _durable(work / "tenant.txt", [tenant])
    lines = [header_line("rebuild", dim), *map(episode_line, episodes), trailer_line(len(episodes))]
    _durable(work / "episodes.jsonl", lines)


def _durable(path: Path, lines: Sequence[str]) -> None:
    tmp = path.with_suffix(".tmp")
    try:
        with tmp.open("w", encoding="utf-8") as out:
            out.writelines(lines)
            out.flush()
            os.fsync(out.fileno())
        tmp.replace(path)
        fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise StoreError(f"cannot write the rebuild file {path}: {exc}") from exc


def _restore(backend: Any, tenant: str, work: Path) -> int:
    """Drop ``tenant``'s collections (once: ``dropped`` marks it), add ``work``'s episodes back.

    The adds are upserts, so finishing an interrupted restore again keeps
    episodes written since; ``work`` is deleted once every episode reads back.
    """
    try:
        with (work / "episodes.jsonl").open(encoding="utf-8") as lines:
            episodes = read_export(lines, tenant=tenant)
    except (OSError, EpisegError) as exc:
        raise StoreError(f"cannot read the rebuild file in {work}: {exc}") from exc
    if not (work / "dropped").exists():
        backend.drop_tenant(tenant)
        _durable(work / "dropped", [])
    store = backend.store_for(tenant)
    found = 0
    for chunk in _chunks(episodes):
        store.add(chunk)
        found += len(store.get([e.id for e in chunk]))
    if found != len(episodes):
        raise StoreError(
            f"{len(episodes) - found} rebuilt episode(s) of {tenant!r} do not read "
            f"back; the rebuild file stays in {work}"
        )
    shutil.rmtree(work)
    return len(episodes)
