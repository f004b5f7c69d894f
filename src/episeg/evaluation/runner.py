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
from episeg.evaluation.provenance import provenance
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
        help="JSONL files (default: the five files under --data-root)",
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
        help="which part of each file to score (see datasets.select_part; 'report': tiage_dev, "
        "the SuperDialseg hash-report half, the agent_tau task-report streams, all of DialSeg711)",
    )
    p.add_argument("--limit", type=int, default=None, help="first N dialogues of each file")
    p.add_argument("--tolerance", type=int, default=1, help="boundary F1 tolerance in turns")
    p.add_argument(
        "--min-window",
        type=int,
        default=1,
        help="floor of the window k of the legacy pk / window_diff columns in the JSON "
        "(protocol A always uses max(2, ...), protocol B segeval's own window)",
    )
    p.add_argument(
        "--embed-cache",
        type=Path,
        default=None,
        help="an .npz of turn vectors kept between runs (read if present, written back)",
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
    from episeg.evaluation.configs import build_segment_fn, check_config_name
    from episeg.evaluation.report import format_table, write_json

    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    logging.getLogger("episeg.evaluation").setLevel(logging.INFO)
    files: list[Path] = args.data or default_data_files(args.data_root)
    names = [c.strip() for c in args.configs.split(",") if c.strip()]
    for name in names:  # before any model is loaded
        check_config_name(name)
    part: Part = args.part
    results: list[EvalResult] = []
    stored = None
    if args.embed_cache is not None:
        from episeg.defaults import default_embedder
        from episeg.evaluation.configs import shared_embedder
        from episeg.evaluation.stored import StoredVectors

        stored = StoredVectors(default_embedder(), args.embed_cache)
        shared_embedder(stored)
    if any(n not in ("none", "all", "even", "texttiling", "every-user-turn") for n in names):
        from episeg.evaluation.configs import shared_embedder

        # One batched pass over every scored turn (tuning parts are embedded on first use).
        texts = [
            t.text for f in files for d in select_part(f, read_jsonl(f), part) for t in d.turns
        ]
        shared_embedder().prefetch(texts)
    for path in files:
        dialogues = select_part(path, read_jsonl(path), part)[: args.limit]
        if not dialogues:
            log.warning("%s: no dialogues in part %r, skipped", path.name, part)
            continue
        roles_known = all(d.roles_known for d in dialogues)
        for name in names:
            fn = build_segment_fn(name, data_path=path, limit=args.limit, roles_known=roles_known)
            result = evaluate(
                dialogues,
                fn,
                name,
                dataset=path.stem,
                tolerance=args.tolerance,
                min_window=args.min_window,
            )
            log.info(
                "%s %s: A Pk %.3f WD %.3f F1 %.3f; B Pk %.3f; ratio %.2f (%.1fs)",
                path.stem,
                name,
                result.pk_a,
                result.wd_a,
                result.f1_a,
                result.pk_b,
                result.boundary_ratio,
                result.seconds,
            )
            results.append(result)
    if stored is not None and stored.new_texts:
        stored.save()
    print(format_table(results))
    meta = {
        "files": [str(f) for f in files],
        "part": part,
        "limit": args.limit,
        "min_window": args.min_window,
        "tolerance": args.tolerance,
        "provenance": provenance(),
    }
    if args.json:
        write_json(results, args.json, meta=meta)
    if args.plot:
        from episeg.evaluation.report import plot_pk_vs_judge_calls

        plot_pk_vs_judge_calls(results, args.plot)
    return 0
