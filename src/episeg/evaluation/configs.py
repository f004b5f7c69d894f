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
layered        all six                                 the old default: hand-set
                                                       policy, window.max_turns 24
                                                       (LocalJudge)
seed           window, semantic, prediction            window.max_turns 15,
                                                       semantic.threshold 0.45,
                                                       judge.every 4, periodic
============== ======================================= ==============================

Learned configurations (the default combiner, :mod:`episeg.segmentation.learned`):

================= ==================================================================
name              what
================= ==================================================================
learned           the agent-memory default: every cheap signal, the shipped model
learned-chat      the open-domain chat preset (``chat.npz``, roles ignored)
learned+judge     the default with the offline LocalJudge on the uncertain band
memory            what ``Memory()`` runs: the default with ``Memory``'s default judge
                  (:func:`~episeg.defaults.resolve_judge`: the offline judge with
                  roles unknown, none with real roles)
learned-no-<g>    the default with feature group ``g`` held at its training mean
                  (:data:`ABLATIONS`) or, for ``marker``/``structural``/``window``,
                  that signal off
probe             re-implementation of issue 11's probe: logistic regression over
                  frozen MiniLM turn/context vectors, trained on the tune parts
every-user-turn   a boundary before every user turn (real roles only)
================= ==================================================================

Speaker roles are read only where a dataset has real ones (``Dialogue.roles_known``,
passed per file as ``roles_known``): there the product default applies (hints
open episodes only before user and system turns). Where the roles are
synthetic (TIAGE, DialSeg711) every configuration runs with
``policy.hint_actors`` set to all four actors and ``combiner.roles_known`` off,
so no configuration can lean on fake alternation. The ``seed`` preset also
turns off the content-word scaling (``semantic.min_words=1``) that the seed's
sketch does not have.

``overrides`` change EpisegConfig fields (segmenter configs) or the baseline's
keyword (``block`` for TextTiling, ``every`` for even).

>>> fn = build_segment_fn("even", overrides={"every": 3})
>>> fn([None] * 7)[0]  # type: ignore[list-item]
[3, 6]
>>> build_segment_fn("nope")
Traceback (most recent call last):
...
episeg.errors.ConfigError: unknown configuration 'nope'; valid: texttiling, texttiling-emb, \
even, none, all, every-user-turn, probe, window, semantic, semantic+drift, prediction-local, \
layered, seed, learned, learned-chat, learned+judge, memory, learned-no-<group>
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from episeg.config import EpisegConfig
from episeg.defaults import DEFAULT, default_embedder, default_judge, resolve_judge
from episeg.embedders import CachingEmbedder, HashingEmbedder
from episeg.errors import ConfigError
from episeg.evaluation.ablations import ABLATIONS, SIGNAL_ABLATIONS, ablated
from episeg.evaluation.baselines import SegmentFn, make_baseline
from episeg.evaluation.datasets import Dialogue, mean_segment_length, tuning_dialogues
from episeg.evaluation.search import grid_search
from episeg.segmentation import Segmenter
from episeg.types import Turn
from episeg.typing import Embedder

__all__ = [
    "ABLATIONS",
    "BASELINE_NAMES",
    "CONFIG_NAMES",
    "LEARNED_NAMES",
    "SEGMENTER_NAMES",
    "build_segment_fn",
    "check_config_name",
    "every_user_turn",
    "segmenter_fn",
    "shared_embedder",
    "tune_window",
]

BASELINE_NAMES = ("texttiling", "texttiling-emb", "even", "none", "all", "every-user-turn", "probe")
SEGMENTER_NAMES = ("window", "semantic", "semantic+drift", "prediction-local", "layered", "seed")
LEARNED_NAMES = ("learned", "learned-chat", "learned+judge", "memory")
CONFIG_NAMES = BASELINE_NAMES + SEGMENTER_NAMES + LEARNED_NAMES
_LEARNED_SIGNALS = frozenset({"marker", "structural", "window", "semantic", "drift"})
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
    "layered": {"window.max_turns": 24},
    "seed": {
        "window.max_turns": 15,
        "semantic.threshold": 0.45,
        "judge.every": 4,
        "judge.gate": "periodic",
        "semantic.min_words": 1,
    },
}
_EVAL_BASE: dict[str, Any] = {
    "policy.hint_actors": ("user", "assistant", "tool", "system"),
    "combiner.roles_known": False,
}
"""Overrides for data whose speaker labels are synthetic (roles unknown)."""
_SHARED: list[CachingEmbedder] = []


def shared_embedder(inner: Embedder | None = None) -> CachingEmbedder:
    """The process-wide caching MiniLM embedder (loaded on first use).

    ``inner`` (first call only) replaces the bundled MiniLM, e.g. with a
    :class:`~episeg.evaluation.stored.StoredVectors` around it.
    """
    if not _SHARED:
        _SHARED.append(CachingEmbedder(inner if inner is not None else default_embedder()))
    elif inner is not None:
        raise ConfigError("the shared evaluation embedder is already built")
    return _SHARED[0]


def segmenter_fn(
    signals: frozenset[str],
    overrides: Mapping[str, Any],
    *,
    embedder: Embedder,
    with_judge: bool,
    ablate: Sequence[str] = (),
    memory_default: bool = False,
) -> SegmentFn:
    """A ``segment_fn`` running one :class:`~episeg.segmentation.Segmenter` (stats as deltas).

    ``ablate`` holds learned-model features at their training mean (ablations).
    ``memory_default``: the judge is ``Memory``'s default for the config
    (:func:`~episeg.defaults.resolve_judge`) instead of the offline one.
    """
    config = EpisegConfig().with_overrides(**overrides)
    judge = default_judge(embedder) if with_judge else None
    if memory_default:
        judge = resolve_judge(DEFAULT, embedder, config)
    seg = Segmenter(
        config=config,
        embedder=embedder,
        judge=judge,
        signals=signals - ({"prediction"} if memory_default and judge is None else set()),
    )
    if ablate:
        if seg.learned is None:
            raise ConfigError("ablating learned features needs the learned combiner")
        seg.learned = ablated(seg.learned, ablate)

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


def check_config_name(name: str) -> str | None:
    """Raise ``ConfigError`` unless ``name`` is a configuration; its ablated group, if any.

    Cheap (nothing is built or loaded), so callers check every name first.

    >>> check_config_name("even") is None, check_config_name("learned-no-marker")
    (True, 'marker')
    """
    valid = (*CONFIG_NAMES, "learned-no-<group>")
    ablation = name.removeprefix("learned-no-") if name.startswith("learned-no-") else None
    if name not in CONFIG_NAMES and ablation not in (*ABLATIONS, *SIGNAL_ABLATIONS):
        raise ConfigError(f"unknown configuration {name!r}; valid: {', '.join(valid)}")
    return ablation


def build_segment_fn(
    name: str,
    *,
    data_path: str | Path | None = None,
    tuning: Sequence[Dialogue] | None = None,
    overrides: Mapping[str, Any] | None = None,
    embedder: Embedder | None = None,
    limit: int | None = None,
    roles_known: bool = False,
) -> SegmentFn:
    """The ``segment_fn`` for configuration ``name``.

    ``tuning`` (or the tuning split belonging to ``data_path``; never a test
    file itself, see :func:`~episeg.evaluation.datasets.tuning_dialogues`) sets
    the even baseline's step, the window configuration's ``window.max_turns``
    and trains the probe, unless ``overrides`` fix them. ``roles_known``: the
    dialogues' speaker labels are real (see the module docstring).
    """
    ablation = check_config_name(name)
    params = dict(overrides or {})

    def tuned() -> Sequence[Dialogue]:
        if tuning is not None:
            return tuning
        if data_path is None:
            raise ConfigError(f"{name} needs tuning dialogues or data_path")
        return tuning_dialogues(data_path, limit=limit)

    if name == "every-user-turn":
        return every_user_turn if roles_known else make_baseline("none")
    if name == "probe":
        from episeg.evaluation.probe import train_probe

        return train_probe(tuned(), embedder or shared_embedder())
    if name in BASELINE_NAMES:
        if name == "even" and "every" not in params:
            params["every"] = max(1, round(mean_segment_length(tuned())))
        if name == "texttiling-emb" and embedder is None:
            embedder = shared_embedder()
        return make_baseline(name, embedder=embedder, **params)
    emb = embedder if embedder is not None else shared_embedder()
    base = {} if roles_known else dict(_EVAL_BASE)
    if name in LEARNED_NAMES or ablation is not None:
        preset: dict[str, Any] = {"combiner.kind": "learned"}
        if name == "learned-chat":
            preset.update(_EVAL_BASE, **{"combiner.weights": "chat"})
        judged = name in ("learned+judge", "memory")
        signals = _LEARNED_SIGNALS | ({"prediction"} if judged else set())
        if ablation in SIGNAL_ABLATIONS:
            signals = signals - {ablation}
        return segmenter_fn(
            frozenset(signals),
            {**base, **preset, **params},
            embedder=emb,
            with_judge=name == "learned+judge",
            ablate=ABLATIONS.get(ablation or "", ()),
            memory_default=name == "memory",
        )
    config = {**base, "combiner.kind": "layered", **_PRESETS.get(name, {}), **params}
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


def every_user_turn(turns: Sequence[Turn]) -> tuple[list[int], dict[str, Any]]:
    """Baseline: a boundary before every user turn but the first turn."""
    cuts = [i for i, t in enumerate(turns) if i > 0 and t.actor.value == "user"]
    return cuts, {"judge_calls": 0, "embed_calls": 0}
