"""Recall over the open segments: turns not yet in a closed episode are recallable too.

A session's open episode is only stored when it closes (a boundary, a flush,
the idle timeout). Until then its turns live in the journal, with their
embeddings; :func:`score_open` ranks them for a query with the scoring of
:mod:`episeg.recall.hierarchical`, and :func:`merge_open` puts the resulting
hits among the stored ones, within the same ``k`` and word budget.

Scoring: the three RRF lists are the stored lists with the open turns merged
in, and an open turn takes the rank it would have there: by cosine in the dense
list (the same embedder, so cosines compare), by BM25 score in the two lexical
lists (the open turns get their own small BM25 index, whose scores are merged
with the stored index's as they are, exactly as the stored index merges its
own delta part). Relevance, recency and the imputed importance (the median of
the stored hits', since an open segment has no salience yet) then follow
:func:`episeg.recall.ranking.rank`. A hit of an open segment has ``open=True``;
its id is the id the episode will be stored under when it closes. Filters: an
open segment is kept by ``session`` and ``since``/``until`` like an episode;
it has no user metadata, so a ``metadata`` filter excludes it.

>>> from episeg.types import Turn
>>> seg = OpenSegment(id="e9", user="u", session="s",
...                   turns=(Turn(actor="user", text="book the flight to Oslo", ts=5.0),),
...                   vectors=np.ones((1, 2), np.float32))
>>> seg.opened_at, seg.closed_at, seg.allowed(session="s", since=6.0, until=None)
(5.0, 5.0, False)
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from episeg.recall.candidates import dense_turns
from episeg.recall.hierarchical import HierarchicalRecaller
from episeg.recall.hits import Expand, RecallHit
from episeg.recall.lexical import LexicalIndex
from episeg.recall.window import RecallWindow
from episeg.types import Episode, Turn

__all__ = ["OpenHit", "OpenSegment", "merge_open", "score_open"]

_Key = tuple[int, int]  # (segment index, position)


@dataclass(frozen=True, slots=True)
class OpenSegment:
    """One session's open turns (as stored: markers stripped) and their embeddings."""

    id: str
    user: str
    session: str
    turns: tuple[Turn, ...]
    vectors: np.ndarray

    @property
    def opened_at(self) -> float:
        return self.turns[0].ts

    @property
    def closed_at(self) -> float:
        return self.turns[-1].ts

    def allowed(self, *, session: str | None, since: float | None, until: float | None) -> bool:
        """Whether a recall's session / time filter keeps this segment."""
        return (
            (session is None or self.session == session)
            and (since is None or self.closed_at >= since)
            and (until is None or self.opened_at <= until)
        )


@dataclass
class OpenHit:
    """An open segment's score and its matched positions, best first."""

    segment: OpenSegment
    score: float
    relevance: float
    recency: float
    importance: float
    ranked: list[int] = field(default_factory=list)
    cosine: dict[int, float] = field(default_factory=dict)
    lexical: bool = False


def score_open(
    recaller: HierarchicalRecaller,
    segments: Sequence[OpenSegment],
    vector: np.ndarray,
    text: str,
    stored: Sequence[RecallHit],
    *,
    now: float,
    session: str | None = None,
    since: float | None = None,
    until: float | None = None,
    metadata: Mapping[str, object] | None = None,
) -> list[OpenHit]:
    """The open segments matching the query, scored as the stored turns are."""
    keep = [s for s in segments if s.turns and s.allowed(session=session, since=since, until=until)]
    if metadata or not keep:
        return []
    p, index = recaller.params, recaller.store.index
    window = RecallWindow(index.cards, session, since, until)
    fused: defaultdict[_Key, float] = defaultdict(float)
    cosine: dict[_Key, float] = {}
    # 1. dense: merged with the stored list by cosine
    q = vector / (np.linalg.norm(vector) or 1.0)
    theirs: list[tuple[float, _Key | None]] = [
        (cos, None)
        for eid, _, cos in dense_turns(recaller.store, vector, p.turn_candidates, window)
        if cos >= p.min_similarity and window.allows(eid)
    ]
    for n, seg in enumerate(keep):
        norms = np.linalg.norm(seg.vectors, axis=1)
        for pos, cos in enumerate((seg.vectors @ q) / np.where(norms == 0, 1.0, norms)):
            if cos >= p.min_similarity:
                theirs.append((float(cos), (n, pos)))
    _add_ranks(fused, theirs, p.rrf_k, p.turn_candidates, cosine)
    lexical: set[int] = set()
    if text:
        widen = 4 if window.active else 1
        # 2. lexical turns: BM25 scores of both indexes merged as they are
        turn_index: LexicalIndex[_Key] = LexicalIndex()
        turn_index.add(
            [(n, pos) for n, s in enumerate(keep) for pos in range(len(s.turns))],
            [t.text for s in keep for t in s.turns],
        )
        stored_turns = [
            (score, None)
            for key, score in index.turns.top(text, p.turn_candidates * widen)
            if window.allows(key[0])
        ][: p.turn_candidates]
        found = [(score, key) for key, score in turn_index.top(text, p.turn_candidates)]
        lexical |= {key[0] for _, key in found}
        _add_ranks(fused, [*stored_turns, *found], p.rrf_k, p.turn_candidates)
        # 3. lexical episodes: each contributes its turns in a row
        if p.episode_candidates:
            _add_episode_ranks(fused, recaller, keep, text, window, widen)
    hits = []
    weights = p.weights
    known = [h.importance for h in stored]
    imputed = statistics.median(known) if known else 0.0
    scale = (p.rrf_k + 1) / (3 if text else 1)
    for n, seg in enumerate(keep):
        mine = {pos: value for (m, pos), value in fused.items() if m == n}
        if not mine:
            continue
        relevance = weights[2] * max(mine.values()) * scale
        recency = weights[0] * p.recency_base ** (max(0.0, now - seg.closed_at) / 3600.0)
        hits.append(
            OpenHit(
                segment=seg,
                score=relevance + recency + imputed,
                relevance=relevance,
                recency=recency,
                importance=imputed,
                ranked=sorted(mine, key=lambda pos: (-mine[pos], pos)),
                cosine={pos: c for (m, pos), c in cosine.items() if m == n},
                lexical=n in lexical,
            )
        )
    return hits


def merge_open(
    stored: Sequence[RecallHit],
    opened: Sequence[OpenHit],
    k: int,
    max_words: int | None,
    *,
    expand: Expand | str = Expand.TURNS,
    context: int = 0,
) -> list[RecallHit]:
    """Stored and open hits best first (stored first on a tie), within ``k`` and ``max_words``.

    A stored hit keeps the turns recall chose for it and is dropped whole if
    it no longer fits; an open hit takes its matched turns best first (with
    ``context`` turns around each, or whole with ``expand="episode"``) while
    they fit, as recall packs stored turns.
    """
    budget = math.inf if max_words is None else float(max_words)
    items: list[RecallHit | OpenHit] = [*stored, *opened]
    order = sorted(range(len(items)), key=lambda i: (-items[i].score, i))
    out: list[RecallHit] = []
    used = 0.0
    for i in order:
        if len(out) == k:
            break
        item = items[i]
        if isinstance(item, RecallHit):
            if used + item.words <= budget:
                out.append(item)
                used += item.words
            continue
        positions = _pack(item, budget - used, Expand.parse(expand), context)
        if positions:
            hit = _hit(item, positions)
            out.append(hit)
            used += hit.words
    return out


def _add_ranks(
    fused: defaultdict[_Key, float],
    entries: list[tuple[float, _Key | None]],
    rrf_k: int,
    limit: int,
    cosine: dict[_Key, float] | None = None,
) -> None:
    """RRF contributions of the open keys among ``entries`` (stored ones first on a tie)."""
    entries.sort(key=lambda e: (-e[0], e[1] is not None))
    for rank, (value, key) in enumerate(entries[:limit]):
        if key is not None:
            fused[key] += 1.0 / (rrf_k + 1 + rank)
            if cosine is not None:
                cosine[key] = value


def _add_episode_ranks(
    fused: defaultdict[_Key, float],
    recaller: HierarchicalRecaller,
    keep: Sequence[OpenSegment],
    text: str,
    window: RecallWindow,
    widen: int,
) -> None:
    p, index = recaller.params, recaller.store.index
    seg_index: LexicalIndex[int] = LexicalIndex()
    seg_index.add(list(range(len(keep))), ["\n".join(t.text for t in s.turns) for s in keep])
    stored = [
        (score, index.cards[eid].n_turns, None)
        for eid, score in index.episodes.top(text, p.episode_candidates * widen)
        if window.allows(eid)
    ][: p.episode_candidates]
    found = [
        (score, len(keep[n].turns), n) for n, score in seg_index.top(text, p.episode_candidates)
    ]
    merged = sorted([*stored, *found], key=lambda e: (-e[0], e[2] is not None))
    rank = 0
    for _, n_turns, n in merged[: p.episode_candidates]:
        if n is None:
            rank += n_turns
            continue
        prior = {pos: fused.get((n, pos), 0.0) for pos in range(n_turns)}
        for pos in sorted(prior, key=lambda q: (-prior[q], q)):
            fused[(n, pos)] += 1.0 / (p.rrf_k + 1 + rank)
            rank += 1


def _pack(hit: OpenHit, room: float, expand: Expand, context: int) -> list[int]:
    words = [len(t.text.split()) for t in hit.segment.turns]
    if expand is Expand.EPISODE:
        return list(range(len(words))) if sum(words) <= room else []
    chosen: dict[int, None] = {}
    used = 0.0
    for pos in hit.ranked:
        lo, hi = max(0, pos - context), min(len(words), pos + context + 1)
        span = [q for q in range(lo, hi) if q not in chosen]
        need = sum(words[q] for q in span)
        if span and used + need <= room:
            chosen.update(dict.fromkeys(span))
            used += need
    return sorted(chosen)


def _hit(hit: OpenHit, positions: list[int]) -> RecallHit:
    seg = hit.segment
    best = hit.ranked[0]
    episode = Episode(
        id=seg.id,
        user=seg.user,
        session=seg.session,
        turns=seg.turns,
        summary=seg.turns[best].text[:200],
        opened_at=seg.opened_at,
        closed_at=seg.closed_at,
    )
    return RecallHit(
        episode=episode,
        score=hit.score,
        recency=hit.recency,
        importance=hit.importance,
        similarity=hit.relevance,
        raw_similarity=max((hit.cosine.get(q, 0.0) for q in positions), default=0.0),
        importance_imputed=True,
        turns=tuple(seg.turns[q] for q in positions),
        positions=tuple(positions),
        lexical=hit.lexical,
        open=True,
    )
