"""What the encoder and segmentation benchmarks share: turns, alternating timing, the CLI tail.

:func:`alternate` times a baseline and a measured path on the same blocks of
items, switching which goes first each round, so drift of a shared machine's
speed hits both alike; :func:`raw_encoder` is an embedder's encode without
any episeg code on top; :func:`load_texts` reads turns from a segmentation
JSONL; :func:`machine` describes where a run happened; :func:`run_cli` is the
common end of both commands (usage errors, JSON printed and written).

>>> res = alternate([1, 2, 3, 4], 2, baseline=lambda b: None, measured=lambda b: None)
>>> len(res["round_ratios"]), res["baseline_tps"] > 0
(2, True)
>>> check_sizes(rounds=0, single_turns=4, turns=4)
Traceback (most recent call last):
...
ValueError: need rounds >= 1 and at least one turn per round, got rounds=0, single_turns=4, turns=4
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from episeg.typing import Embedder

__all__ = [
    "alternate",
    "bench_parser",
    "check_sizes",
    "describe",
    "load_texts",
    "machine",
    "raw_encoder",
    "run_cli",
]

T = TypeVar("T")


def check_sizes(*, rounds: int, single_turns: int, turns: int) -> None:
    """Refuse sizes that leave a round without a turn (``ValueError``)."""
    if rounds < 1 or single_turns < rounds or turns < rounds:
        raise ValueError(
            f"need rounds >= 1 and at least one turn per round, got rounds={rounds}, "
            f"single_turns={single_turns}, turns={turns}"
        )


def load_texts(path: str | Path, limit: int) -> list[tuple[str, str, str]]:
    """(dialogue id, speaker, text) of the first ``limit`` turns of a segmentation JSONL."""
    rows: list[tuple[str, str, str]] = []
    with Path(path).open(encoding="utf-8") as handle:
        for line in handle:
            dialogue = json.loads(line)
            for turn in dialogue["turns"]:
                rows.append((dialogue["id"], turn["speaker"], turn["text"]))
                if len(rows) >= limit:
                    return rows
    return rows


def _rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else float("inf")


def alternate(
    items: Sequence[T],
    rounds: int,
    *,
    baseline: Callable[[Sequence[T]], object],
    measured: Callable[[Sequence[T]], object],
) -> dict[str, Any]:
    """Time ``baseline`` and ``measured`` on the same blocks of items, alternating which
    goes first each round; ratios are total over total (baseline time / measured time)."""
    spent = {"baseline": 0.0, "measured": 0.0}
    ratios = []
    size = -(-len(items) // rounds)
    for number, first in enumerate(range(0, len(items), size)):
        block = items[first : first + size]
        pair = [("baseline", baseline), ("measured", measured)]
        took = {}
        for label, run in pair if number % 2 == 0 else pair[::-1]:
            start = time.perf_counter()
            run(block)
            took[label] = time.perf_counter() - start
            spent[label] += took[label]
        ratios.append(round(took["baseline"] / took["measured"], 3))
    return {
        "baseline_tps": round(_rate(len(items), spent["baseline"]), 1),
        "measured_tps": round(_rate(len(items), spent["measured"]), 1),
        "ratio": round(spent["baseline"] / spent["measured"], 3),
        "round_ratios": ratios,
    }


def raw_encoder(embedder: Embedder) -> Callable[[list[str], int], object]:
    """``encode(texts, batch_size)`` without any episeg code on top.

    A torch :class:`~episeg.embedders.MiniLMEmbedder` exposes its
    ``SentenceTransformer`` as ``model``: that model's ``encode`` is the raw
    path. Any other embedder (ONNX, which batches 32 at a time itself) is its
    own raw path: ``embed``.

    >>> from episeg.testing import HashingEmbedder
    >>> raw_encoder(HashingEmbedder(dim=4))(["a"], 1).shape
    (1, 4)
    """
    model = getattr(embedder, "model", None)
    if model is None:
        return lambda texts, batch_size: embedder.embed(texts)
    return lambda texts, batch_size: model.encode(
        texts, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False
    )


def machine(**extra: Any) -> dict[str, Any]:
    """Cores, torch threads and the 1-minute load average when called."""
    import torch

    return {
        "cpus": len(os.sched_getaffinity(0)),
        "torch_threads": int(torch.get_num_threads()),
        "load_1min": round(os.getloadavg()[0], 2),
        **extra,
    }


def describe(embedder: Embedder) -> str:
    """``ClassName (name, N intra-op threads)`` of an embedder, for the JSON."""
    threads = getattr(embedder, "threads", None)
    suffix = f", {threads} intra-op threads" if threads else ""
    return f"{type(embedder).__name__} ({embedder.name}{suffix})"


def bench_parser(
    prog: str, description: str | None, *, single_turns: int, scale: Sequence[int]
) -> argparse.ArgumentParser:
    """The options both benchmarks take: --data, --turns, --single-turns, --rounds, --scale."""
    parser = argparse.ArgumentParser(
        prog=prog, description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", required=True, help="segmentation JSONL to take turns from")
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--single-turns", type=int, default=single_turns)
    parser.add_argument(
        "--rounds", type=int, default=6, help="alternating baseline/measured rounds (default 6)"
    )
    parser.add_argument("--scale", type=int, nargs="+", default=list(scale))
    return parser


def run_cli(
    parser: argparse.ArgumentParser,
    argv: Sequence[str] | None,
    run: Callable[[argparse.Namespace], dict[str, Any]],
) -> int:
    """Parse ``argv``, ``run`` it (a ``ValueError`` is a usage error), print and write the JSON."""
    parser.add_argument("--json", help="also write the result here")
    args = parser.parse_args(argv)
    try:
        result = run(args)
    except ValueError as exc:
        parser.error(str(exc))
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")
    return 0
