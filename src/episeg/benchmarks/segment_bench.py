"""Segmentation speed against the physical limit: raw MiniLM encode throughput.

Every figure is measured in the same run on the same machine and reported as
a ratio to its baseline; the throughput pairs are timed on the same blocks of
turns in alternating rounds (baseline first, then measured first), so the
machine's drift during the run does not favour either side:

* streaming turns/s (``Segmenter.observe``) / one-at-a-time encode turns/s;
* batch turns/s (``Segmenter.segment``) / batched encode turns/s (batches of 32);
* per-turn overhead of signals + combiner in microseconds, measured with the
  embeddings precomputed, at 10^3, 10^4 and 10^5 turns (linear growth means
  a flat microseconds-per-turn column);
* peak resident memory of the process.

The encoder is the configured default (:func:`episeg.defaults.default_embedder`)
and the raw encode is that encoder without the
segmenter: ``SentenceTransformer.encode`` for torch, ``embed`` for ONNX
(see :func:`raw_encoder`). :mod:`episeg.benchmarks.embed_bench` compares the
two encoders and then runs this benchmark, in one command.

Run: ``python -m episeg.benchmarks.segment_bench --data PATH.jsonl --json out.json``.

>>> from episeg.testing import HashingEmbedder
>>> texts = ["auth jwt", "deploy prod", "retry log"] * 4
>>> row = overhead_per_turn(texts, embedder=HashingEmbedder(), n_turns=30)
>>> row["turns"], row["us_per_turn"] > 0
(30, True)
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from episeg.config import EpisegConfig
from episeg.defaults import default_embedder
from episeg.segmentation.segmenter import Segmenter
from episeg.types import Actor, Turn
from episeg.typing import Embedder

__all__ = [
    "CachedEmbedder",
    "alternate",
    "load_texts",
    "overhead_per_turn",
    "raw_encoder",
    "run_segment_bench",
]

T = TypeVar("T")


class CachedEmbedder:
    """Returns precomputed vectors by text, so only the segmenter's own work is timed."""

    name = "cached"

    def __init__(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        self._table = {t: v for t, v in zip(texts, vectors, strict=True)}
        self._dim = int(vectors.shape[1])

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self._table[t] for t in texts]) if texts else np.zeros((0, self._dim))


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


def _turns(rows: Sequence[tuple[str, str, str]], n_turns: int) -> list[Turn]:
    out = []
    for i in range(n_turns):
        dialogue, speaker, text = rows[i % len(rows)]
        lap = i // len(rows)
        out.append(
            Turn(
                actor=Actor.USER if speaker == "user" else Actor.ASSISTANT,
                text=text,
                ts=float(i),
                session=f"{dialogue}#{lap}",
                user="bench",
            )
        )
    return out


def _rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else float("inf")


def overhead_per_turn(
    texts: Sequence[str], *, embedder: Embedder, n_turns: int, config: EpisegConfig | None = None
) -> dict[str, Any]:
    """Time the segmenter alone (embeddings precomputed) over ``n_turns`` turns."""
    unique = list(dict.fromkeys(texts))
    cached = CachedEmbedder(unique, embedder.embed(unique))
    rows = [("d", "user" if i % 2 == 0 else "agent", t) for i, t in enumerate(texts)]
    turns = _turns(rows, n_turns)
    segmenter = Segmenter(embedder=cached, config=config)
    start = time.perf_counter()
    for turn in turns:
        segmenter.observe(turn)
    segmenter.flush()
    seconds = time.perf_counter() - start
    return {
        "turns": n_turns,
        "seconds": round(seconds, 4),
        "us_per_turn": round(seconds / n_turns * 1e6, 2),
        "episodes": segmenter.stats["episodes"],
    }


def alternate(
    items: Sequence[T],
    rounds: int,
    *,
    baseline: Callable[[Sequence[T]], object],
    measured: Callable[[Sequence[T]], object],
) -> dict[str, Any]:
    """Time ``baseline`` and ``measured`` on the same blocks of items, alternating which
    goes first each round, so drift of the machine's speed hits both alike.

    >>> res = alternate([Turn(actor="user", text="x", ts=0.0)] * 4, 2,
    ...                 baseline=lambda b: None, measured=lambda b: None)
    >>> len(res["round_ratios"]), res["baseline_tps"] > 0
    (2, True)
    """
    spent = {"baseline": 0.0, "measured": 0.0}
    ratios = []
    for number, block in enumerate(_blocks(items, rounds)):
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


def _blocks(items: Sequence[T], rounds: int) -> list[Sequence[T]]:
    size = -(-len(items) // rounds)
    return [items[i : i + size] for i in range(0, len(items), size)]


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


def run_segment_bench(
    data: str | Path,
    *,
    n_turns: int = 2000,
    single_turns: int = 500,
    scale: Sequence[int] = (1_000, 10_000, 100_000),
    rounds: int = 6,
    embedder: Embedder | None = None,
) -> dict[str, Any]:
    """Measure everything listed in the module docstring; returns a JSON-ready dict.

    ``embedder``: default :func:`~episeg.defaults.default_embedder`.
    """
    if rounds < 1 or single_turns < rounds or n_turns < rounds:
        raise ValueError(
            f"need rounds >= 1 and at least one turn per round, got rounds={rounds}, "
            f"single_turns={single_turns}, n_turns={n_turns}"
        )
    embedder = embedder or default_embedder()
    encode = raw_encoder(embedder)
    rows = load_texts(data, n_turns)
    texts = [text for _, _, text in rows]
    turns = _turns(rows, len(rows))
    encode(texts[:64], 32)  # warm-up
    limit = EpisegConfig().embedding.max_chars  # the segmenter embeds text[:limit]: so does raw

    streaming = Segmenter(embedder=embedder)
    single = alternate(
        turns[:single_turns],
        rounds,
        baseline=lambda block: [encode([t.text[:limit]], 1) for t in block],
        measured=lambda block: [streaming.observe(t) for t in block],
    )
    streaming.flush()
    batch = alternate(
        turns,
        rounds,
        baseline=lambda block: encode([t.text[:limit] for t in block], 32),
        measured=lambda block: Segmenter(embedder=embedder).segment(block),
    )

    scaling = [overhead_per_turn(texts, embedder=embedder, n_turns=n) for n in scale]
    return {
        "machine": {"cpus": _cpus(), "torch_threads": _torch_threads()},
        "embedder": _describe(embedder),
        "turns": len(turns),
        "single_turns": single_turns,
        "rounds": rounds,
        "raw_encode_single_tps": single["baseline_tps"],
        "raw_encode_batch32_tps": batch["baseline_tps"],
        "streaming_tps": single["measured_tps"],
        "batch_tps": batch["measured_tps"],
        "streaming_ratio_to_single_encode": single["ratio"],
        "batch_ratio_to_batched_encode": batch["ratio"],
        "streaming_round_ratios": single["round_ratios"],
        "batch_round_ratios": batch["round_ratios"],
        "scaling": scaling,
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def _cpus() -> int:
    import os

    return len(os.sched_getaffinity(0))


def _torch_threads() -> int:
    import torch

    return int(torch.get_num_threads())


def _describe(embedder: Embedder) -> str:
    threads = getattr(embedder, "threads", None)
    suffix = f", {threads} intra-op threads" if threads else ""
    return f"{type(embedder).__name__} ({embedder.name}{suffix})"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="episeg bench segment",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--data", required=True, help="segmentation JSONL to take turns from")
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--single-turns", type=int, default=500)
    parser.add_argument("--scale", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument(
        "--rounds", type=int, default=6, help="alternating baseline/measured rounds (default 6)"
    )
    parser.add_argument("--json", help="also write the result here")
    args = parser.parse_args(argv)
    try:
        result = run_segment_bench(
            args.data,
            n_turns=args.turns,
            single_turns=args.single_turns,
            scale=args.scale,
            rounds=args.rounds,
        )
    except ValueError as exc:
        parser.error(str(exc))
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
