"""Grid search on the *tuning* split only, best configuration by Pk (lower is better).

Embeddings are computed once per dataset: segmenter configurations share one
:class:`~episeg.evaluation.caching.CachingEmbedder`, prefetched in large
batches, so each grid point only re-runs the signals and the combiner. Ties
in Pk go to WindowDiff, then to the earlier grid point.

:class:`CachingEmbedder` wraps any :class:`~episeg.typing.Embedder` and keeps
each distinct text's vector in memory (``inner_texts`` counts texts the
wrapped embedder really saw, ``requested_texts`` what callers asked for);
``prefetch`` embeds a whole split in one batched call.

Run: ``python -m episeg.evaluation.tune --data PATH.jsonl --config semantic
--grid semantic_threshold=0.6,0.7,0.8 --grid semantic_decay=0.4,0.6``
(``--data`` names the file whose *tuning* split is searched: ``tiage_train`` for
TIAGE, the hash-tune half otherwise, see :mod:`episeg.evaluation.datasets`).

>>> from episeg.evaluation.datasets import Dialogue
>>> from episeg.evaluation.baselines import make_baseline
>>> from episeg.types import Turn
>>> turns = [Turn(actor="user", text=str(i), ts=30.0 * i) for i in range(12)]
>>> gold = [Dialogue(id="d", source="demo", turns=turns, boundaries=[3, 6, 9])]
>>> best = grid_search(gold, lambda p: make_baseline("even", every=p["every"]),
...                    {"every": [2, 3, 4]}, name="even")
>>> best.best, best.best_result.pk
({'every': 3}, 0.0)
>>> from episeg.testing import HashingEmbedder
>>> inner = HashingEmbedder(dim=16)
>>> emb = CachingEmbedder(inner)
>>> emb.prefetch(["a b", "c d"])
>>> emb.embed(["a b", "c d", "a b"]).shape, inner.texts_embedded, emb.requested_texts
((3, 16), 2, 3)
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from episeg.errors import ConfigError
from episeg.evaluation.baselines import SegmentFn
from episeg.evaluation.datasets import (
    Dialogue,
    mean_segment_length,
    read_jsonl,
    select_part,
    tuning_dialogues,
)
from episeg.evaluation.runner import EvalResult, evaluate
from episeg.typing import Embedder

__all__ = [
    "DEFAULT_GRIDS",
    "CachingEmbedder",
    "TuneResult",
    "grid_search",
    "main",
    "parse_grid",
    "tune_window",
]

log = logging.getLogger(__name__)

DEFAULT_GRIDS: dict[str, dict[str, list[Any]]] = {
    "semantic": {"semantic_threshold": [0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85],
                 "semantic_decay": [0.3, 0.5, 0.7]},
    "semantic+drift": {"semantic_threshold": [0.6, 0.7, 0.8], "semantic_decay": [0.3, 0.5, 0.7],
                       "drift_threshold": [0.5, 0.9, 1.5]},
    "texttiling": {"block": [1, 2, 3, 4, 5, 6]},
    "texttiling-emb": {"block": [1, 2, 3, 4, 5, 6]},
}


class CachingEmbedder:
    """Memoise ``inner.embed`` by exact text (unbounded: meant for evaluation runs)."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self._cache: dict[str, np.ndarray] = {}
        self.inner_texts = 0
        self.requested_texts = 0

    @property
    def name(self) -> str:
        return f"cached:{self._inner.name}"

    @property
    def dim(self) -> int:
        return self._inner.dim

    def __len__(self) -> int:
        return len(self._cache)

    def prefetch(self, texts: Iterable[str]) -> None:
        """Embed every not-yet-cached text in one call to the wrapped embedder."""
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if not missing:
            return
        vectors = np.asarray(self._inner.embed(missing), dtype=np.float32)
        self.inner_texts += len(missing)
        for text, vector in zip(missing, vectors, strict=True):
            self._cache[text] = vector

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for ``texts`` (cached ones are reused, the rest embedded in one batch)."""
        if isinstance(texts, str):
            raise TypeError("embed takes a sequence of strings, not one string")
        self.requested_texts += len(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        self.prefetch(texts)
        return np.stack([self._cache[t] for t in texts])


@dataclass(frozen=True, slots=True)
class TuneResult:
    """Every grid point's result and the best one by (Pk, WindowDiff)."""

    name: str
    best: dict[str, Any]
    best_result: EvalResult
    trials: list[tuple[dict[str, Any], EvalResult]]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "best": self.best, "best_result": self.best_result.to_dict(),
                "trials": [{"params": p, **r.to_dict()} for p, r in self.trials]}


def grid_search(dialogues: Sequence[Dialogue],
                factory: Callable[[dict[str, Any]], SegmentFn],
                grid: Mapping[str, Sequence[Any]], *, name: str,
                dataset: str = "") -> TuneResult:
    """Evaluate ``factory(params)`` at every point of ``grid`` on ``dialogues``."""
    if not grid or any(len(v) == 0 for v in grid.values()):
        raise ConfigError(f"grid must name at least one value per key, got {dict(grid)}")
    keys = list(grid)
    trials: list[tuple[dict[str, Any], EvalResult]] = []
    for values in itertools.product(*(grid[k] for k in keys)):
        params = dict(zip(keys, values, strict=True))
        label = f"{name}[{', '.join(f'{k}={v}' for k, v in params.items())}]"
        result = evaluate(dialogues, factory(params), label, dataset=dataset)
        log.info("%s: Pk %.4f WD %.4f", label, result.pk, result.window_diff)
        trials.append((params, result))
    best_params, best = min(trials, key=lambda t: (t[1].pk, t[1].window_diff))
    return TuneResult(name=name, best=best_params, best_result=best, trials=trials)


def tune_window(tuning: Sequence[Dialogue], *, embedder: Embedder | None = None) -> int:
    """``window_max_turns`` with the lowest Pk for the window-only segmenter on ``tuning``.

    Candidates run from 1 to twice the mean gold segment length. The window
    signal never reads embeddings, so the default embedder here is the free
    :class:`~episeg.testing.HashingEmbedder` (same boundaries, no model cost).
    """
    from episeg.evaluation.configs import segmenter_fn
    from episeg.testing import HashingEmbedder

    if embedder is None:
        embedder = HashingEmbedder()

    top = max(2, round(2 * mean_segment_length(tuning)))
    result = grid_search(
        tuning, lambda p: segmenter_fn(frozenset({"window"}), p, embedder=embedder,
                                       with_judge=False),
        {"window_max_turns": list(range(1, top + 1))}, name="window")
    return int(result.best["window_max_turns"])


def _number(text: str) -> Any:
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            continue
    return text


def parse_grid(items: Sequence[str]) -> dict[str, list[Any]]:
    """``["a=1,2", "b=0.5"]`` -> ``{"a": [1, 2], "b": [0.5]}``.

    >>> parse_grid(["semantic_threshold=0.6,0.7", "block=2"])
    {'semantic_threshold': [0.6, 0.7], 'block': [2]}
    """
    grid: dict[str, list[Any]] = {}
    for item in items:
        key, sep, values = item.partition("=")
        if not sep or not key.strip() or not values.strip():
            raise ConfigError(f"grid item must look like name=v1,v2; got {item!r}")
        grid[key.strip()] = [_number(v.strip()) for v in values.split(",") if v.strip()]
    return grid


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; prints every trial and the best, optionally writes JSON."""
    from episeg.evaluation.configs import build_segment_fn, shared_embedder
    from episeg.evaluation.report import format_table

    p = argparse.ArgumentParser(prog="python -m episeg.evaluation.tune")
    p.add_argument("--data", type=Path, required=True, help="file whose tuning split is used")
    p.add_argument("--config", required=True, help="configuration name to tune")
    p.add_argument("--grid", action="append", default=[], help="name=v1,v2 (repeatable)")
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--json", type=Path, default=None)
    p.add_argument("--report", action="store_true",
                   help="also score the best point once on the file's report part")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    logging.getLogger("episeg.evaluation").setLevel(logging.INFO)
    grid = parse_grid(args.grid) if args.grid else DEFAULT_GRIDS.get(args.config)
    if not grid:
        raise ConfigError(f"no default grid for {args.config!r}; pass --grid name=v1,v2")
    tuning = tuning_dialogues(args.data, limit=args.limit)
    embedder: CachingEmbedder | None = None
    if args.config not in ("texttiling", "even", "none", "all"):
        embedder = shared_embedder()
        embedder.prefetch(t.text for d in tuning for t in d.turns)
    result = grid_search(
        tuning, lambda params: build_segment_fn(args.config, tuning=tuning, overrides=params,
                                                embedder=embedder),
        grid, name=args.config, dataset=f"{args.data.stem}:tune")
    print(format_table([r for _, r in result.trials]))
    print(f"best {args.config} on {args.data.stem} tuning split: {result.best} "
          f"(Pk {result.best_result.pk:.4f}, WD {result.best_result.window_diff:.4f})")
    document = result.to_dict()
    if args.report:
        held = select_part(args.data, read_jsonl(args.data, limit=args.limit), "report")
        if not held:
            raise ConfigError(f"{args.data.name} has no report part")
        fn = build_segment_fn(args.config, tuning=tuning, overrides=result.best, embedder=embedder)
        scored = evaluate(held, fn, f"{args.config}{result.best}",
                          dataset=f"{args.data.stem}:report")
        print(format_table([scored]))
        document["report"] = scored.to_dict()
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
