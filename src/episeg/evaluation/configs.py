"""Named configurations for the runner: the baselines and the segmenter's signal sets.

Baselines (no model unless noted): ``texttiling`` (Hearst 1997 over turns),
``texttiling-emb`` (same, MiniLM block similarity), ``even`` (a boundary every
``n`` turns, ``n`` = mean gold segment length of the *tuning* split, rounded),
``none`` and ``all`` (degenerate references).

Segmenter configurations (:class:`episeg.segmentation.segmenter.Segmenter`, imported
lazily; MiniLM through one shared :class:`CachingEmbedder`):

============== ======================================= ==============================
name           signals                                 config
============== ======================================= ==============================
window         window                                  window.max_turns tuned (Pk,
                                                       tuning split, see ``tune``)
semantic       semantic                                defaults
semantic+drift semantic, drift                         defaults
prediction-    prediction (LocalJudge, offline)        judge.gate periodic,
local                                                  judge.every default
layered        all six                                 defaults (LocalJudge)
seed           window, semantic, prediction            window.max_turns 15,
                                                       semantic.threshold 0.45,
                                                       judge.every 4, periodic
============== ======================================= ==============================

Every segmenter configuration runs with ``policy.hint_actors`` set to all four
actors: DialSeg711 and TIAGE carry no real speaker roles (the data README
says so), so the product default of opening episodes only before user turns
would be a handicap that says nothing about the signals. The ``seed``
preset also turns off the content-word scaling (``semantic.min_words=1``)
that the seed's sketch does not have.

``overrides`` change EpisegConfig fields (segmenter configs) or the baseline's
keyword (``block`` for TextTiling, ``every`` for even).

>>> fn = build_segment_fn("even", overrides={"every": 3})
>>> fn([None] * 7)[0]  # type: ignore[list-item]
[3, 6]
>>> build_segment_fn("nope")
Traceback (most recent call last):
...
episeg.errors.ConfigError: unknown configuration 'nope'; valid: texttiling, texttiling-emb, \
even, none, all, window, semantic, semantic+drift, prediction-local, layered, seed
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from episeg.config import EpisegConfig
from episeg.defaults import default_embedder, default_judge
from episeg.embedders import CachingEmbedder, HashingEmbedder
from episeg.errors import ConfigError
from episeg.evaluation.baselines import SegmentFn, make_baseline
from episeg.evaluation.datasets import Dialogue, mean_segment_length, tuning_dialogues
from episeg.evaluation.search import grid_search
from episeg.segmentation import Segmenter
from episeg.types import Turn
from episeg.typing import Embedder

__all__ = [
    "BASELINE_NAMES",
    "CONFIG_NAMES",
    "SEGMENTER_NAMES",
    "build_segment_fn",
    "segmenter_fn",
    "shared_embedder",
    "tune_window",
]

BASELINE_NAMES = ("texttiling", "texttiling-emb", "even", "none", "all")
SEGMENTER_NAMES = ("window", "semantic", "semantic+drift", "prediction-local", "layered", "seed")
CONFIG_NAMES = BASELINE_NAMES + SEGMENTER_NAMES
_SIGNALS: dict[str, frozenset[str]] = {
    "window": frozenset({"window"}),
    "semantic": frozenset({"semantic"}),
    "semantic+drift": frozenset({"semantic", "drift"}),
    "prediction-local": frozenset({"prediction"}),
    "layered": frozenset({"marker", "structural", "window", "semantic", "drift", "prediction"}),
    "seed": frozenset({"window", "semantic", "prediction"}),
}
_PRESETS: dict[str, dict[str, Any]] = {
    "prediction-local": {"judge.gate": "periodic"},
    "seed": {
        "window.max_turns": 15,
        "semantic.threshold": 0.45,
        "judge.every": 4,
        "judge.gate": "periodic",
        "semantic.min_words": 1,
    },
}
_EVAL_BASE: dict[str, Any] = {"policy.hint_actors": ("user", "assistant", "tool", "system")}
_SHARED: list[CachingEmbedder] = []


def shared_embedder() -> CachingEmbedder:
    """The process-wide caching MiniLM embedder (loaded on first use)."""
    if not _SHARED:
        _SHARED.append(CachingEmbedder(default_embedder()))
    return _SHARED[0]


def segmenter_fn(
    signals: frozenset[str], overrides: Mapping[str, Any], *, embedder: Embedder, with_judge: bool
) -> SegmentFn:
    """A ``segment_fn`` running one :class:`~episeg.segmentation.Segmenter` (stats as deltas)."""
    seg = Segmenter(
        config=EpisegConfig().with_overrides(**overrides),
        embedder=embedder,
        judge=default_judge(embedder) if with_judge else None,
        signals=signals,
    )

    def run(turns: Sequence[Turn]) -> tuple[list[int], dict[str, Any]]:
        before = seg.stats
        episodes = seg.segment(turns)
        after = seg.stats
        cuts, total = [], 0
        for ep in episodes[:-1]:
            total += len(ep.turns)
            cuts.append(total)
        stats = {k: after[k] - before.get(k, 0) for k in ("judge_calls", "embed_calls")}
        return cuts, stats

    return run


def build_segment_fn(
    name: str,
    *,
    data_path: str | Path | None = None,
    tuning: Sequence[Dialogue] | None = None,
    overrides: Mapping[str, Any] | None = None,
    embedder: Embedder | None = None,
    limit: int | None = None,
) -> SegmentFn:
    """The ``segment_fn`` for configuration ``name``.

    ``tuning`` (or the tuning split belonging to ``data_path``) sets the even
    baseline's step and the window configuration's ``window.max_turns``
    unless ``overrides`` fix them.
    """
    if name not in CONFIG_NAMES:
        raise ConfigError(f"unknown configuration {name!r}; valid: {', '.join(CONFIG_NAMES)}")
    params = dict(overrides or {})

    def tuned() -> Sequence[Dialogue]:
        if tuning is not None:
            return tuning
        if data_path is None:
            raise ConfigError(f"{name} needs tuning dialogues or data_path")
        return tuning_dialogues(data_path, limit=limit)

    if name in BASELINE_NAMES:
        if name == "even" and "every" not in params:
            params["every"] = max(1, round(mean_segment_length(tuned())))
        if name == "texttiling-emb" and embedder is None:
            embedder = shared_embedder()
        return make_baseline(name, embedder=embedder, **params)
    emb = embedder if embedder is not None else shared_embedder()
    config = {**_EVAL_BASE, **_PRESETS.get(name, {}), **params}
    if name == "window" and "window.max_turns" not in config:
        config["window.max_turns"] = tune_window(tuned())
    return segmenter_fn(
        _SIGNALS[name], config, embedder=emb, with_judge="prediction" in _SIGNALS[name]
    )


def tune_window(tuning: Sequence[Dialogue], *, embedder: Embedder | None = None) -> int:
    """``window.max_turns`` with the lowest Pk for the window-only segmenter on ``tuning``.

    Candidates run from 1 to twice the mean gold segment length. The window
    signal never reads embeddings, so the default embedder here is the free
    :class:`~episeg.embedders.HashingEmbedder` (same boundaries, no model cost).
    """
    if embedder is None:
        embedder = HashingEmbedder()

    top = max(2, round(2 * mean_segment_length(tuning)))
    result = grid_search(
        tuning,
        lambda p: segmenter_fn(frozenset({"window"}), p, embedder=embedder, with_judge=False),
        {"window.max_turns": list(range(1, top + 1))},
        name="window",
    )
    return int(result.best["window.max_turns"])
