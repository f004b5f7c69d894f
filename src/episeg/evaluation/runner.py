"""``python -m episeg.evaluation``: run segmentation configurations over dialogue sets.

The scoring itself is :func:`episeg.evaluation.results.evaluate` (re-exported
here with :class:`~episeg.evaluation.results.EvalResult`); this module reads the
data, builds each configuration and writes the table and JSON.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence
from pathlib import Path

from episeg.evaluation.datasets import Part, default_data_files, read_jsonl, select_part
from episeg.evaluation.results import EvalResult, evaluate

__all__ = ["EvalResult", "evaluate", "main"]

log = logging.getLogger(__name__)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m episeg.evaluation", description="Evaluate segmentation configurations."
    )
    p.add_argument(
        "--data",
        nargs="+",
        type=Path,
        default=None,
        help="JSONL files (default: the four files under --data-root)",
    )
    p.add_argument(
        "--data-root",
        type=Path,
        default=None,
        help="default: ../shared/data/segmentation next to the repository",
    )
    p.add_argument(
        "--configs",
        default="texttiling,even,none",
        help="comma-separated names; see episeg.evaluation.configs.CONFIG_NAMES",
    )
    p.add_argument(
        "--part",
        choices=["all", "tune", "report"],
        default="all",
        help="which part of each file to score (see datasets.select_part)",
    )
    p.add_argument("--limit", type=int, default=None, help="first N dialogues of each file")
    p.add_argument("--tolerance", type=int, default=1, help="boundary F1 tolerance in turns")
    p.add_argument(
        "--min-window",
        type=int,
        default=1,
        help="floor of the Pk/WindowDiff window k (2 reproduces segeval's default "
        "and SuperDialseg's evaluation code)",
    )
    p.add_argument("--json", type=Path, default=None, help="write results as JSON here")
    p.add_argument("--plot", type=Path, default=None, help="write a PNG plot here")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the process exit status.

    ``memory`` as the first argument runs the memory evaluation instead
    (:mod:`episeg.evaluation.memory`, ``episeg eval memory --help``).
    """
    if argv and argv[0] == "memory":
        from episeg.evaluation.memory import main as memory_main

        return memory_main(list(argv[1:]))
    from episeg.evaluation.configs import build_segment_fn
    from episeg.evaluation.report import format_table, write_json

    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    logging.getLogger("episeg.evaluation").setLevel(logging.INFO)
    files: list[Path] = args.data or default_data_files(args.data_root)
    names = [c.strip() for c in args.configs.split(",") if c.strip()]
    part: Part = args.part
    results: list[EvalResult] = []
    for path in files:
        dialogues = select_part(path, read_jsonl(path), part)[: args.limit]
        if not dialogues:
            log.warning("%s: no dialogues in part %r, skipped", path.name, part)
            continue
        for name in names:
            fn = build_segment_fn(name, data_path=path, limit=args.limit)
            result = evaluate(
                dialogues,
                fn,
                name,
                dataset=path.stem,
                tolerance=args.tolerance,
                min_window=args.min_window,
            )
            log.info(
                "%s %s: Pk %.4f WD %.4f F1 %.4f (%.1fs)",
                path.stem,
                name,
                result.pk,
                result.window_diff,
                result.f1,
                result.seconds,
            )
            results.append(result)
    print(format_table(results))
    meta = {
        "files": [str(f) for f in files],
        "part": part,
        "limit": args.limit,
        "min_window": args.min_window,
        "tolerance": args.tolerance,
    }
    if args.json:
        write_json(results, args.json, meta=meta)
    if args.plot:
        from episeg.evaluation.report import plot_pk_vs_judge_calls

        plot_pk_vs_judge_calls(results, args.plot)
    return 0
