"""Episode <-> Chroma record codec: id, document, flat metadata, embedding.

Chroma metadata values must be scalars (str, int, float, bool), so the
structured parts of an :class:`~episeg.types.Episode` (turns, verdicts,
salience) are stored as JSON strings; everything a filter or the recall
pass needs (times, recall state, ``archived``, ``pinned``) stays a plain
scalar. The user's own metadata goes under ``meta.<key>``
(:mod:`episeg.store.usermeta`), apart from episeg's keys. Records written
before pins and user metadata existed read back unpinned, with none.
Optional fields that are ``None`` are *omitted* (Chroma drops ``None``
values), and :func:`decode` reads absence back as ``None``. Floats (times,
strength) are stored as ``repr`` strings: Chroma 1.5.9 float metadata loses
the last bits (measured: 9007.876897497723 came back ...725). Embeddings
come back from a cosine-space collection equal up to float32 rounding
(Chroma stores them normalised). The tenant id
is written into every record so each read can verify it.

>>> import numpy as np
>>> from episeg.store.codec import decode, encode
>>> from episeg.types import Episode, Salience, Turn
>>> ep = Episode(id="e1", user="u", session="s",
...              turns=(Turn(actor="user", text="deploy v2", ts=1.0),),
...              summary="deploy", opened_at=1.0, closed_at=2.0,
...              embedding=np.ones(4, dtype=np.float32) / 2,
...              salience=Salience.scored(7, scorer="anchored"), pinned=True,
...              metadata={"ticket": 42})
>>> rec = encode(ep, tenant="alice")
>>> rec.metadata["tenant"], rec.metadata["archived"], rec.metadata["meta.ticket"]
('alice', False, '42')
>>> back = decode(rec.id, rec.document, rec.metadata, rec.embedding)
>>> back == ep, back.embedding.tolist()
(True, [0.5, 0.5, 0.5, 0.5])
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from episeg.errors import MetadataError, StoreError
from episeg.store.usermeta import PREFIX, from_chroma, to_chroma, validate_metadata
from episeg.types import Episode, Salience, Turn, Verdict

__all__ = [
    "CODEC_VERSION",
    "RECALL_FIELDS",
    "USER_FIELDS",
    "EpisodeRecord",
    "decode",
    "encode",
    "recall_metadata",
    "user_metadata",
]

_INT64 = 2**63  # Chroma stores integers in 64 bits

CODEC_VERSION = 1
"""Written as ``codec`` into every record; :func:`decode` refuses other versions."""

RECALL_FIELDS = ("recall_count", "last_accessed", "strength", "archived")
"""The metadata keys that :meth:`ChromaEpisodeStore.update` rewrites."""

USER_FIELDS = ("summary", "salience", "pinned")
"""The metadata keys a user's edit rewrites (``revise``), besides the ``meta.`` entries."""

MetaValue = str | int | float | bool | None


@dataclass(frozen=True, slots=True)
class EpisodeRecord:
    """One episode as Chroma stores it."""

    id: str
    document: str
    metadata: dict[str, MetaValue]
    embedding: np.ndarray


def recall_metadata(episode: Episode) -> dict[str, MetaValue]:
    """The recall-state metadata of ``episode``; ``last_accessed=None`` maps to ``None``.

    A ``None`` value passed to Chroma's ``update`` deletes that key, which
    :func:`decode` reads back as ``None``.
    """
    return {
        "recall_count": int(episode.recall_count),
        "last_accessed": None if episode.last_accessed is None else _f(episode.last_accessed),
        "strength": _f(episode.strength),
        "archived": bool(episode.archived),
    }


def user_metadata(
    episode: Episode, stored: Mapping[str, Any] | None = None
) -> dict[str, MetaValue]:
    """The user-editable metadata of ``episode``: summary, salience, pin, ``meta.`` entries.

    ``meta.`` keys present in ``stored`` (the record as it is) but not in
    ``episode.metadata`` map to ``None``, which Chroma's ``update`` deletes.
    """
    meta: dict[str, MetaValue] = {
        "summary": episode.summary,
        "salience": _salience_json(episode),
        "pinned": bool(episode.pinned),
    }
    meta.update(dict.fromkeys((k for k in stored or {} if k.startswith(PREFIX)), None))
    meta.update(to_chroma(episode.metadata))
    return meta


def encode(episode: Episode, *, tenant: str) -> EpisodeRecord:
    """Flatten ``episode`` into a Chroma record stamped with ``tenant``.

    Raises
    ------
    StoreError
        If the episode has no embedding, its embedding is not a finite vector, its
        ``recall_count`` does not fit Chroma's 64-bit integers, or
        its user metadata breaks the rules of :mod:`episeg.store.usermeta` (such a
        record could be written but not read back: every later read of the tenant
        would fail on it).
    """
    try:
        validate_metadata(episode.metadata, what=f"episode {episode.id!r} metadata")
    except MetadataError as exc:
        raise StoreError(str(exc)) from exc
    if not 0 <= episode.recall_count < _INT64:
        count = episode.recall_count
        raise StoreError(f"episode {episode.id!r}: recall_count {count} is not in 0 .. 2**63 - 1")
    if episode.embedding is None:
        raise StoreError(f"episode {episode.id!r} has no embedding; embed it before storing")
    vector = np.asarray(episode.embedding, dtype=np.float32).reshape(-1)
    if vector.size == 0 or not np.all(np.isfinite(vector)):
        raise StoreError(f"episode {episode.id!r} has an empty or non-finite embedding")
    meta: dict[str, MetaValue] = {
        "codec": CODEC_VERSION,
        "tenant": tenant,
        "user": episode.user,
        "session": episode.session,
        "opened_at": _f(episode.opened_at),
        "closed_at": _f(episode.closed_at),
        "turns": json.dumps([t.to_dict() for t in episode.turns], ensure_ascii=False),
        "boundary_verdicts": _verdicts_json(episode.boundary_verdicts),
        "closing_verdicts": _verdicts_json(episode.closing_verdicts),
    }
    if episode.parent_id is not None:
        meta["parent_id"] = episode.parent_id
    meta.update({k: v for k, v in user_metadata(episode).items() if v is not None})
    meta.update({k: v for k, v in recall_metadata(episode).items() if v is not None})
    return EpisodeRecord(id=episode.id, document=episode.text, metadata=meta, embedding=vector)


def decode(
    id: str, document: str | None, metadata: Mapping[str, Any] | None, embedding: Any = None
) -> Episode:
    """Rebuild the :class:`Episode` that :func:`encode` flattened.

    Raises
    ------
    StoreError
        If the metadata is missing, of another codec version or malformed.
    """
    if not metadata:
        raise StoreError(f"record {id!r} has no metadata; not written by episeg")
    if metadata.get("codec") != CODEC_VERSION:
        raise StoreError(
            f"record {id!r} has codec {metadata.get('codec')!r}; this episeg reads {CODEC_VERSION}"
        )
    try:
        sal_raw = metadata.get("salience")
        salience = None
        if sal_raw is not None:
            sal = json.loads(str(sal_raw))
            salience = Salience(score=sal["score"], scorer=sal["scorer"], reason=sal["reason"])
        last = metadata.get("last_accessed")
        parent = metadata.get("parent_id")
        return Episode(
            id=id,
            user=str(metadata["user"]),
            session=str(metadata["session"]),
            turns=tuple(Turn.from_dict(t) for t in json.loads(str(metadata["turns"]))),
            summary=str(metadata["summary"]),
            opened_at=float(metadata["opened_at"]),
            closed_at=float(metadata["closed_at"]),
            embedding=None if embedding is None else np.asarray(embedding, dtype=np.float32),
            salience=salience,
            parent_id=None if parent is None else str(parent),
            boundary_verdicts=_verdicts(metadata["boundary_verdicts"]),
            closing_verdicts=_verdicts(metadata["closing_verdicts"]),
            recall_count=int(metadata["recall_count"]),
            last_accessed=None if last is None else float(last),
            strength=float(metadata["strength"]),
            archived=bool(metadata["archived"]),
            pinned=bool(metadata.get("pinned", False)),
            metadata=from_chroma(metadata),
        )
    except MetadataError as exc:
        raise StoreError(f"record {id!r} has malformed user metadata: {exc}") from exc
    except (KeyError, TypeError, ValueError) as exc:
        raise StoreError(f"record {id!r} has malformed metadata: {exc!r}") from exc


def _salience_json(episode: Episode) -> str | None:
    sal = episode.salience
    if sal is None:
        return None
    return json.dumps(
        {"score": sal.score, "scorer": sal.scorer, "reason": sal.reason}, ensure_ascii=False
    )


def _f(value: float) -> str:
    return repr(float(value))


def _verdicts_json(verdicts: tuple[Verdict, ...]) -> str:
    rows = [v.to_dict() for v in verdicts]  # exact scores: the codec round-trips
    return json.dumps(rows, ensure_ascii=False)


def _verdicts(raw: Any) -> tuple[Verdict, ...]:
    return tuple(Verdict.from_dict(v) for v in json.loads(str(raw)))
