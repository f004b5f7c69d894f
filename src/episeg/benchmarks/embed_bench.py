"""ONNX Runtime against torch encoding the same MiniLM: turns/s and equality, one run.

Both encoders are loaded in one process and timed on the same blocks of turns
in alternating rounds (torch first in even rounds, ONNX first in odd ones),
so drift of a shared machine's speed hits both alike:

* one turn at a time: torch ``SentenceTransformer.encode([text])`` against
  :meth:`OnnxMiniLMEmbedder.embed([text]) <episeg.embedders.OnnxMiniLMEmbedder.embed>`;
* batches of 32: ``encode(texts, batch_size=32)`` against ``embed(texts)``
  (the ONNX embedder batches 32 at a time too);
* equality: the cosine of the two vectors of every distinct text (min and mean).

Then, unless ``--no-segment``, the segmentation benchmark
(:mod:`episeg.benchmarks.segment_bench`) runs with the ONNX embedder, so one
command gives the encoder comparison and the segmenter's ratios to the ONNX
encode: ``python -m episeg.benchmarks.embed_bench --data PATH.jsonl --json out.json``.

>>> from episeg.testing import HashingEmbedder
>>> row = compare_encoders(["alpha", "beta", "gamma", "delta"], single_turns=2, rounds=2,
...                        baseline=HashingEmbedder(), measured=HashingEmbedder())
>>> row["min_cosine"], row["texts"], sorted(row["single"])
(1.0, 4, ['baseline_tps', 'measured_tps', 'ratio', 'round_ratios'])
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from episeg.benchmarks.segment_bench import run_segment_bench
from episeg.benchmarks.timing import (
    alternate,
    bench_parser,
    check_sizes,
    load_texts,
    machine,
    raw_encoder,
    run_cli,
)
from episeg.config import EpisegConfig
from episeg.typing import Embedder

__all__ = ["compare_encoders", "run_embed_bench"]


def compare_encoders(
    texts: Sequence[str],
    *,
    single_turns: int,
    rounds: int,
    baseline: Embedder,
    measured: Embedder,
) -> dict[str, Any]:
    """Time ``baseline`` and ``measured`` one text at a time and in one call per block.

    ``baseline`` may expose ``model`` (a ``SentenceTransformer``); it is then
    timed through ``model.encode`` directly, the raw torch path.
    """
    check_sizes(rounds=rounds, single_turns=single_turns, turns=len(texts))
    raw = raw_encoder(baseline)
    baseline.embed(list(texts[:64]))  # warm-up: first calls allocate
    measured.embed(list(texts[:64]))
    single = alternate(
        texts[:single_turns],
        rounds,
        baseline=lambda block: [raw([text], 1) for text in block],
        measured=lambda block: [measured.embed([text]) for text in block],
    )
    batch = alternate(
        texts,
        rounds,
        baseline=lambda block: raw(list(block), 32),
        measured=lambda block: measured.embed(list(block)),
    )
    unique = list(dict.fromkeys(texts))
    cosines = (baseline.embed(unique) * measured.embed(unique)).sum(axis=1)
    return {
        "texts": len(texts),
        "single": single,
        "batch32": batch,
        "min_cosine": round(float(cosines.min()), 8),
        "mean_cosine": round(float(cosines.mean()), 8),
        "distinct_texts_compared": len(unique),
    }


def run_embed_bench(
    data: str | Path,
    *,
    n_turns: int = 2000,
    single_turns: int = 600,
    rounds: int = 6,
    scale: Sequence[int] = (1_000, 10_000),
    segment: bool = True,
) -> dict[str, Any]:
    """torch :class:`~episeg.embedders.MiniLMEmbedder` (baseline) against ONNX (measured),
    then (``segment``) the segmentation benchmark with the ONNX embedder."""
    check_sizes(rounds=rounds, single_turns=single_turns, turns=n_turns)
    from episeg.embedders import MiniLMEmbedder, OnnxMiniLMEmbedder

    limit = EpisegConfig().embedding.max_chars  # what the segmenter embeds
    texts = [text[:limit] for _, _, text in load_texts(data, n_turns)]
    onnx = OnnxMiniLMEmbedder.default()
    out: dict[str, Any] = {"machine": machine(onnx_threads=onnx.threads)}
    out["encoders"] = compare_encoders(
        texts,
        single_turns=single_turns,
        rounds=rounds,
        baseline=MiniLMEmbedder.default(),
        measured=onnx,
    )
    if segment:
        out["segmentation"] = run_segment_bench(
            data,
            n_turns=n_turns,
            single_turns=single_turns,
            scale=scale,
            rounds=rounds,
            embedder=onnx,
        )
    out["load_1min_after"] = round(os.getloadavg()[0], 2)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = bench_parser(
        "python -m episeg.benchmarks.embed_bench", __doc__, single_turns=600, scale=(1_000, 10_000)
    )
    parser.add_argument("--no-segment", action="store_true", help="only compare the encoders")
    return run_cli(
        parser,
        argv,
        lambda args: run_embed_bench(
            args.data,
            n_turns=args.turns,
            single_turns=args.single_turns,
            rounds=args.rounds,
            scale=args.scale,
            segment=not args.no_segment,
        ),
    )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
