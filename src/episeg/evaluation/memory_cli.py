"""The command line of ``episeg eval memory`` (run by :func:`episeg.evaluation.memory.main`).

>>> args = memory_parser().parse_args(["--set", "recall.warm_cache=true", "--no-ablation"])
>>> args.overrides, args.no_ablation, args.budgets
(['recall.warm_cache=true'], True, [200, 500, 1000])
"""

from __future__ import annotations

import argparse
from pathlib import Path

from episeg.evaluation.memory_scores import BUDGETS

__all__ = ["memory_parser"]


def memory_parser() -> argparse.ArgumentParser:
    """The parser of ``episeg eval memory`` (see :mod:`episeg.evaluation.memory`)."""
    p = argparse.ArgumentParser(
        prog="episeg eval memory",
        description="Evidence recall on LoCoMo at matched word budgets, with baselines.",
    )
    p.add_argument(
        "--data",
        type=Path,
        default=None,
        help="LoCoMo JSON file or folder (default: ../shared/data/memory/locomo/locomo_dev.json)",
    )
    p.add_argument("--budgets", type=int, nargs="+", default=list(BUDGETS))
    p.add_argument("--conversations", type=int, default=None, help="first N conversations")
    p.add_argument("--questions", type=int, default=None, help="first N questions of each")
    p.add_argument("--no-ablation", action="store_true", help="skip the ablation table")
    p.add_argument(
        "--packing",
        choices=("cut", "fill"),
        default="cut",
        help="budget rule: cut at the first turn that does not fit (the LoCoMo README's, "
        "default) or skip it and fill with later ones (figures before 2026-12-07)",
    )
    p.add_argument(
        "--no-judge",
        action="store_true",
        help="build each memory with judge=None instead of Memory's default judge",
    )
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="change a config field of every memory, e.g. recall.warm_cache=true (repeatable)",
    )
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap rounds (default 1000)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", type=Path, default=None, help="write the results as JSON here")
    p.add_argument("--markdown", type=Path, default=None, help="write the tables here")
    return p
