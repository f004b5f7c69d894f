"""Recall: similarity candidates, a recency + importance + similarity rerank, reinforcement.

Scoring rule (Generative Agents), over the ``max(k, config.recall.candidates)``
nearest candidates of one tenant:

``score = a * recency + b * importance + c * similarity`` with
``(a, b, c) = weights`` (default ``config.recall.weights``), where each term
is min-max normalised over the candidates to [0, 1]:

* ``recency = config.recall.recency_base ** hours`` since ``last_accessed``
  (``closed_at`` if never recalled; a future time counts as 0 hours);
* ``importance = salience.normalized``. An *unscored* episode (no salience,
  or ``Salience.unscored``) gets the **median** of the scored candidates'
  importance (0.0 if none is scored) and its result has
  ``importance_imputed=True``; nothing silently becomes 5;
* ``similarity`` is the cosine similarity returned by the store.

Recall passes ``config.recall.min_span``: a term whose raw values differ by
less than its span is *not* stretched to the whole [0, 1] range (plain
min-max would turn "recalled a second ago" versus "closed a minute ago" into
recency 1 versus 0 and let it outvote a clear similarity winner).

When every candidate has the same value of a term (including a single
candidate), that term contributes 0 to every score: there is nothing to
rank on, and no division by zero. Ties in ``score`` are broken by raw
similarity, then by id. ``ScoredEpisode.recency/importance/similarity`` hold
the *weighted* contributions, so they sum to ``score``.

Each recalled episode is reinforced (:func:`episeg.recall.forgetting.reinforce`) and
written back with ``store.update``; the results carry the updated episodes.

>>> import tempfile
>>> from episeg.config import EpisegConfig
>>> from episeg.recall.rerank import Recaller
>>> from episeg.store import ChromaBackend
>>> from episeg.testing import HashingEmbedder
>>> from episeg.types import Episode, Salience, Turn
>>> emb = HashingEmbedder(dim=64)
>>> store = ChromaBackend.persistent(tempfile.mkdtemp()).store_for("alice")
>>> texts = {"d": "deploy version 2 to prod", "c": "cook pasta for dinner"}
>>> store.add([Episode(id=i, user="alice", session="s", summary=t, opened_at=0.0,
...                    closed_at=0.0, turns=(Turn(actor="user", text=t, ts=0.0),),
...                    embedding=emb.embed([t])[0], salience=Salience.scored(5, scorer="x"))
...            for i, t in texts.items()])
>>> rec = Recaller(store, emb, config=EpisegConfig(), clock=lambda: 3600.0)
>>> [(r.episode.id, r.episode.recall_count) for r in rec.recall("deploy version", k=1)]
[('d', 1)]
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import statistics
import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path

import numpy as np

from episeg.config import EpisegConfig
from episeg.errors import ConfigError, TenantError
from episeg.recall.forgetting import reinforce
from episeg.types import Episode, ScoredEpisode
from episeg.typing import Embedder, EpisodeStore

__all__ = ["Clock", "Recaller", "feedback", "rerank"]

Clock = Callable[[], float]
Weights = tuple[float, float, float]


def _minmax(values: Sequence[float], min_span: float = 0.0) -> list[float]:
    lo, hi = min(values), max(values)
    if hi - lo <= 1e-12:
        return [0.0] * len(values)
    span = max(hi - lo, min_span)
    return [(v - lo) / span for v in values]


def _importance(episode: Episode) -> float | None:
    sal = episode.salience
    return None if sal is None else sal.normalized


def rerank(
    candidates: Sequence[tuple[Episode, float]],
    *,
    weights: Weights,
    recency_base: float,
    now: float,
    min_span: Weights = (0.0, 0.0, 0.0),
) -> list[ScoredEpisode]:
    """Score and sort ``(episode, cosine similarity)`` candidates (module rules).

    ``min_span`` (recency, importance, similarity) is the smallest raw range
    a term is stretched over; the default ``(0, 0, 0)`` is plain min-max.
    """
    if not candidates:
        return []
    recency = []
    for ep, _ in candidates:
        ref = ep.last_accessed if ep.last_accessed is not None else ep.closed_at
        recency.append(recency_base ** (max(0.0, now - ref) / 3600.0))
    raw_imp = [_importance(ep) for ep, _ in candidates]
    known = [v for v in raw_imp if v is not None]
    fill = statistics.median(known) if known else 0.0
    importance = [fill if v is None else v for v in raw_imp]
    sims = [float(s) for _, s in candidates]
    a, b, c = weights
    out = [
        ScoredEpisode(
            episode=ep,
            score=a * r + b * i + c * s,
            recency=a * r,
            importance=b * i,
            similarity=c * s,
            raw_similarity=raw,
            importance_imputed=imp is None,
        )
        for (ep, raw), r, i, s, imp in zip(
            candidates,
            _minmax(recency, min_span[0]),
            _minmax(importance, min_span[1]),
            _minmax(sims, min_span[2]),
            raw_imp,
            strict=True,
        )
    ]
    out.sort(key=lambda se: (-se.score, -se.raw_similarity, se.episode.id))
    return out


def feedback(
    results: Sequence[ScoredEpisode],
    used_ids: Collection[str],
    *,
    weights: Weights,
    rate: float = 0.5,
    min_share: float = 0.05,
) -> Weights:
    """Nudge rerank weights toward the terms that ranked the *used* episodes high.

    Bounded multiplicative-weights update: for each term the advantage
    ``A = mean(term of used) - mean(term of all results)`` is computed on the
    normalised [0, 1] term values (contribution / weight), so ``A`` is in
    [-1, 1]; then ``w *= exp(rate * A)``. The weights are rescaled to keep
    their sum, and every non-zero weight is kept at or above
    ``min_share * sum``. A weight of 0 stays 0 (a term you switched off is
    never switched back on). No used id -> weights unchanged. ``results``
    must come from a recall ranked with these same ``weights`` (call it once
    per recall), since the normalised values are recovered by dividing.

    Raises
    ------
    ValueError
        If a used id is not among ``results`` or ``rate``/``min_share`` are invalid.

    >>> from episeg.types import ScoredEpisode
    >>> from episeg.types import Episode
    >>> def se(i, rec, imp, sim):
    ...     ep = Episode(id=i, user="u", session="s", turns=(), summary="",
    ...                  opened_at=0.0, closed_at=0.0)
    ...     return ScoredEpisode(ep, rec + imp + sim, rec, imp, sim, sim)
    >>> res = [se("old", 0.0, 0.0, 1.0), se("new", 1.0, 0.0, 0.0)]
    >>> w = feedback(res, {"new"}, weights=(1.0, 1.0, 1.0))
    >>> [round(x, 3) for x in w], round(sum(w), 6)
    ([1.258, 0.979, 0.763], 3.0)
    """
    if not 0.0 < rate <= 5.0 or not 0.0 <= min_share < 1.0 / 3.0:
        raise ValueError(f"need 0 < rate <= 5 and 0 <= min_share < 1/3, got {rate}, {min_share}")
    known = {se.episode.id for se in results}
    unknown = sorted(set(used_ids) - known)
    if unknown:
        raise ValueError(f"used id(s) {unknown[:5]} are not among the recall results")
    if not used_ids:
        return weights
    total = sum(weights)
    new: list[float] = []
    for n, w in enumerate(weights):
        if w <= 0.0:
            new.append(0.0)
            continue
        values = [(se.recency, se.importance, se.similarity)[n] / w for se in results]
        used = [v for se, v in zip(results, values, strict=True) if se.episode.id in used_ids]
        advantage = sum(used) / len(used) - sum(values) / len(values)
        new.append(w * math.exp(rate * advantage))
    scale = total / sum(new)
    floor = min_share * total
    clamped = [0.0 if w == 0.0 else max(w * scale, floor) for w in new]
    scale = total / sum(clamped)
    return (clamped[0] * scale, clamped[1] * scale, clamped[2] * scale)


class Recaller:
    """Recall for one tenant's store, with reinforcement and learned weights.

    Parameters
    ----------
    store, embedder
        The tenant-bound store and the embedder its episodes were embedded with.
    config
        Weights, recency base, candidate count and strength rules.
    clock
        Returns "now" in seconds since the epoch (inject one in tests).
    reinforce
        Write recall count / last access / strength back after each recall.
    weights_path
        Optional JSON file holding this tenant's learned weights; read at
        construction if it exists (its tenant must match) and rewritten by
        :meth:`feedback`.
    """

    def __init__(
        self,
        store: EpisodeStore,
        embedder: Embedder,
        *,
        config: EpisegConfig | None = None,
        clock: Clock = time.time,
        reinforce: bool = True,
        weights_path: str | Path | None = None,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._config = config or EpisegConfig()
        self._clock = clock
        self._reinforce = reinforce
        self._weights_path = None if weights_path is None else Path(weights_path)
        self._weights: Weights = self._config.recall.weights
        if self._weights_path is not None and self._weights_path.exists():
            self._weights = self._load_weights(self._weights_path)

    @property
    def weights(self) -> Weights:
        """The current (recency, importance, similarity) weights."""
        return self._weights

    def recall(self, query: str | np.ndarray, k: int = 5) -> list[ScoredEpisode]:
        """The ``k`` best episodes for ``query`` (a text or an embedding), best first."""
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        if isinstance(query, str):
            vector = self._embedder.embed([query])[0]
        else:
            vector = np.asarray(query, dtype=np.float32)
        candidates = self._store.query(vector, max(k, self._config.recall.candidates))
        now = float(self._clock())
        ranked = rerank(
            candidates,
            weights=self._weights,
            recency_base=self._config.recall.recency_base,
            now=now,
            min_span=self._config.recall.min_span,
        )[:k]
        if not self._reinforce or not ranked:
            return ranked
        updated = [reinforce(se.episode, config=self._config, now=now) for se in ranked]
        self._store.update(updated)
        return [dataclasses.replace(se, episode=ep) for se, ep in zip(ranked, updated, strict=True)]

    def feedback(
        self, results: Sequence[ScoredEpisode], used_ids: Collection[str], *, rate: float = 0.5
    ) -> Weights:
        """Apply :func:`feedback` to this recaller's weights (and persist them)."""
        self._weights = feedback(results, used_ids, weights=self._weights, rate=rate)
        if self._weights_path is not None:
            payload = {"tenant": self._store.tenant, "weights": list(self._weights)}
            tmp = self._weights_path.with_suffix(self._weights_path.suffix + ".tmp")
            tmp.write_text(json.dumps(payload), encoding="utf-8")
            os.replace(tmp, self._weights_path)
        return self._weights

    def _load_weights(self, path: Path) -> Weights:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            tenant, raw = data["tenant"], [float(w) for w in data["weights"]]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"cannot read learned weights from {path}: {exc!r}") from exc
        if tenant != self._store.tenant:
            raise TenantError(
                f"{path} holds weights of tenant {tenant!r}, not {self._store.tenant!r}"
            )
        if len(raw) != 3 or any(w < 0 or not math.isfinite(w) for w in raw):
            raise ConfigError(f"{path} must hold 3 non-negative weights, got {raw}")
        return (raw[0], raw[1], raw[2])
