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
open turns have no user metadata, so a ``metadata`` filter excludes them (an
episode waiting in the outbox is filtered by its own).

The data (:class:`OpenSegment`, :class:`OpenCorpus`, :class:`OpenHit`) is in
:mod:`episeg.recall.open_corpus`.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import cast

import numpy as np

from episeg.recall.candidates import dense_turns
from episeg.recall.hierarchical import HierarchicalRecaller
from episeg.recall.hits import DATE_WORDS, Expand, RecallHit, turn_span, word_count
from episeg.recall.open_corpus import Key, OpenCorpus, OpenHit, OpenSegment
from episeg.recall.window import RecallWindow
from episeg.store.usermeta import MetaScalar
from episeg.types import Episode

__all__ = ["OpenCorpus", "OpenHit", "OpenSegment", "merge_open", "score_open"]


def score_open(
    recaller: HierarchicalRecaller,
    segments: Sequence[OpenSegment] | OpenCorpus,
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
    corpus = segments if isinstance(segments, OpenCorpus) else OpenCorpus(segments)
    wanted = cast("Mapping[str, MetaScalar] | None", metadata)
    keep = {
        n
        for n, s in enumerate(corpus.segments)
        if s.allowed(session=session, since=since, until=until, metadata=wanted)
    }
    if not keep:
        return []
    p, index = recaller.params, recaller.store.index
    window = RecallWindow(index.cards, session, since, until)
    fused: defaultdict[Key, float] = defaultdict(float)
    cosine: dict[Key, float] = {}
    # 1. dense: merged with the stored list by cosine
    q = vector / (np.linalg.norm(vector) or 1.0)
    theirs: list[tuple[float, Key | None]] = [
        (cos, None)
        for eid, _, cos in dense_turns(recaller.store, vector, p.turn_candidates, window)
        if cos >= p.min_similarity and window.allows(eid)
    ]
    cosines = corpus.units @ q if len(corpus.keys) else np.zeros(0, np.float32)
    for row in np.flatnonzero(cosines >= p.min_similarity):
        key = corpus.keys[int(row)]
        if key[0] in keep:
            theirs.append((float(cosines[row]), key))
    _add_ranks(fused, theirs, p.rrf_k, p.turn_candidates, cosine)
    lexical: set[int] = set()
    if text:
        widen = 4 if window.active else 1
        # 2. lexical turns: BM25 scores of both indexes merged as they are
        stored_turns = [
            (score, None)
            for key, score in index.turns.top(text, p.turn_candidates * widen)
            if window.allows(key[0])
        ][: p.turn_candidates]
        found = [
            (score, key)
            for key, score in corpus.turn_index().top(text, p.turn_candidates * widen)
            if key[0] in keep
        ][: p.turn_candidates]
        lexical |= {key[0] for _, key in found}
        _add_ranks(fused, [*stored_turns, *found], p.rrf_k, p.turn_candidates)
        # 3. lexical episodes: each contributes its turns in a row
        if p.episode_candidates:
            _add_episode_ranks(fused, recaller, corpus, keep, text, window, widen)
    hits = []
    weights = p.weights
    known = [h.importance for h in stored]
    imputed = statistics.median(known) if known else 0.0
    scale = (p.rrf_k + 1) / (3 if text else 1)
    for n in sorted(keep):
        seg = corpus.segments[n]
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
    count_summaries: bool = False,
) -> list[RecallHit]:
    """Stored and open hits best first (stored first on a tie), within ``k`` and ``max_words``.

    A stored hit keeps the turns recall chose for it and is dropped whole if
    it no longer fits; an open hit takes its matched turns best first (with
    ``context`` turns around each, or whole with ``expand="episode"``) while
    they fit, as recall packs stored turns. With ``count_summaries`` each hit
    also spends its summary's words and 2 for its dates.
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
            cost = item.words + (_header(item.episode.summary) if count_summaries else 0)
            if used + cost <= budget:
                out.append(item)
                used += cost
            continue
        header = _header(_summary(item)) if count_summaries else 0
        positions = _pack(item, budget - used - header, Expand.parse(expand), context)
        if positions:
            hit = _hit(item, positions)
            out.append(hit)
            used += hit.words + header
    return out


def _header(summary: str) -> int:
    """What a hit carries besides its turns, in words: its summary and its two dates."""
    return word_count(summary) + DATE_WORDS


def _summary(hit: OpenHit) -> str:
    """An open hit's summary: its best-matching turn, cut to 200 characters."""
    return hit.segment.turns[hit.ranked[0]].text[:200]


def _add_ranks(
    fused: defaultdict[Key, float],
    entries: list[tuple[float, Key | None]],
    rrf_k: int,
    limit: int,
    cosine: dict[Key, float] | None = None,
) -> None:
    """RRF contributions of the open keys among ``entries`` (stored ones first on a tie)."""
    entries.sort(key=lambda e: (-e[0], e[1] is not None))
    for rank, (value, key) in enumerate(entries[:limit]):
        if key is not None:
            fused[key] += 1.0 / (rrf_k + 1 + rank)
            if cosine is not None:
                cosine[key] = value


def _add_episode_ranks(
    fused: defaultdict[Key, float],
    recaller: HierarchicalRecaller,
    corpus: OpenCorpus,
    keep: set[int],
    text: str,
    window: RecallWindow,
    widen: int,
) -> None:
    p, index = recaller.params, recaller.store.index
    stored = [
        (score, index.cards[eid].n_turns, None)
        for eid, score in index.episodes.top(text, p.episode_candidates * widen)
        if window.allows(eid)
    ][: p.episode_candidates]
    found = [
        (score, len(corpus.segments[n].turns), n)
        for n, score in corpus.episode_index().top(text, p.episode_candidates * widen)
        if n in keep
    ][: p.episode_candidates]
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
    for pos in hit.ranked:  # the match first, then the context that fits (F157)
        span = turn_span(words, pos, context, chosen, room - used)
        need = sum(words[q] for q in span)
        if span and used + need <= room:
            chosen.update(dict.fromkeys(span))
            used += need
    return sorted(chosen)


def _hit(hit: OpenHit, positions: list[int]) -> RecallHit:
    seg = hit.segment
    episode = Episode(
        id=seg.id,
        user=seg.user,
        session=seg.session,
        turns=seg.turns,
        summary=_summary(hit),
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
