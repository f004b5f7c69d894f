"""``python -m episeg.evaluation.tune``: grid search on the *tuning* split only.

Embeddings are computed once per dataset: segmenter configurations share one
:class:`~episeg.embedders.CachingEmbedder`, prefetched in large
batches, so each grid point only re-runs the signals and the combiner. The
search itself is :func:`episeg.evaluation.search.grid_search` (best by Pk,
ties to WindowDiff, then to the earlier grid point).

Run: ``python -m episeg.evaluation.tune --data PATH.jsonl --config semantic
--grid semantic.threshold=0.6,0.7,0.8 --grid semantic.decay=0.4,0.6``
(``--data`` names the file whose *tuning* split is searched: ``tiage_train`` for
TIAGE, the hash-tune half otherwise, see :mod:`episeg.evaluation.datasets`).

>>> parse_grid(["semantic.threshold=0.6,0.7", "window.max_turns=8"])
{'semantic.threshold': [0.6, 0.7], 'window.max_turns': [8]}
"""

from __future__ import annotations

import argparse
import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from episeg.embedders import CachingEmbedder
from episeg.errors import ConfigError
from episeg.evaluation.configs import build_segment_fn, shared_embedder, tune_window
from episeg.evaluation.datasets import read_jsonl, select_part, tuning_dialogues
from episeg.evaluation.report import format_table
from episeg.evaluation.results import evaluate
from episeg.evaluation.search import TuneResult, grid_search

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
    "semantic": {
        "semantic.threshold": [0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85],
        "semantic.decay": [0.3, 0.5, 0.7],
    },
    "semantic+drift": {
        "semantic.threshold": [0.6, 0.7, 0.8],
        "semantic.decay": [0.3, 0.5, 0.7],
        "drift.threshold": [0.5, 0.9, 1.5],
    },
    "texttiling": {"block": [1, 2, 3, 4, 5, 6]},
    "texttiling-emb": {"block": [1, 2, 3, 4, 5, 6]},
}


def _number(text: str) -> Any:
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            continue
    return text


def parse_grid(items: Sequence[str]) -> dict[str, list[Any]]:
    """``["a=1,2", "b=0.5"]`` -> ``{"a": [1, 2], "b": [0.5]}``.

    >>> parse_grid(["semantic.threshold=0.6,0.7", "block=2"])
    {'semantic.threshold': [0.6, 0.7], 'block': [2]}
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
    p = argparse.ArgumentParser(prog="python -m episeg.evaluation.tune")
    p.add_argument("--data", type=Path, required=True, help="file whose tuning split is used")
    p.add_argument("--config", required=True, help="configuration name to tune")
    p.add_argument("--grid", action="append", default=[], help="name=v1,v2 (repeatable)")
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--json", type=Path, default=None)
    p.add_argument(
        "--report",
        action="store_true",
        help="also score the best point once on the file's report part",
    )
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
        tuning,
        lambda params: build_segment_fn(
            args.config, tuning=tuning, overrides=params, embedder=embedder
        ),
        grid,
        name=args.config,
        dataset=f"{args.data.stem}:tune",
    )
    print(format_table([r for _, r in result.trials]))
    print(
        f"best {args.config} on {args.data.stem} tuning split: {result.best} "
        f"(Pk {result.best_result.pk:.4f}, WD {result.best_result.window_diff:.4f})"
    )
    document = result.to_dict()
    if args.report:
        held = select_part(args.data, read_jsonl(args.data, limit=args.limit), "report")
        if not held:
            raise ConfigError(f"{args.data.name} has no report part")
        fn = build_segment_fn(args.config, tuning=tuning, overrides=result.best, embedder=embedder)
        scored = evaluate(
            held, fn, f"{args.config}{result.best}", dataset=f"{args.data.stem}:report"
        )
        print(format_table([scored]))
        document["report"] = scored.to_dict()
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
