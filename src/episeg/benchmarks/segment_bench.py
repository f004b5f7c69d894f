"""Segmentation speed against the physical limit: raw MiniLM encode throughput.

Every figure is measured in the same run on the same machine and reported as
a ratio to its baseline; the throughput pairs are timed on the same blocks of
turns in alternating rounds (baseline first, then measured first), so the
machine's drift during the run does not favour either side:

* streaming turns/s (``Segmenter.observe``) / one-at-a-time encode turns/s;
* batch turns/s (``Segmenter.segment``) / batched encode turns/s (batches of 32);
* per-turn overhead of signals + combiner in microseconds, measured with the
  embeddings precomputed, at 10^3, 10^4 and 10^5 turns (linear growth means
  a flat microseconds-per-turn column); and on the streaming turns, the same
  work in a tight loop against each turn timed right after a real encode
  (``segmenter_after_encode``: what streaming pays with cold caches, ~3x the
  tight loop on the 2-core machine);
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

import resource
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from episeg.benchmarks.timing import (
    alternate,
    bench_parser,
    check_sizes,
    describe,
    load_texts,
    machine,
    raw_encoder,
    run_cli,
)
from episeg.config import EpisegConfig
from episeg.defaults import default_embedder
from episeg.embedders import CachingEmbedder
from episeg.segmentation.segmenter import Segmenter
from episeg.types import Actor, Turn
from episeg.typing import Embedder

__all__ = ["overhead_after_encode", "overhead_per_turn", "run_segment_bench"]


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


def overhead_per_turn(
    texts: Sequence[str], *, embedder: Embedder, n_turns: int, config: EpisegConfig | None = None
) -> dict[str, Any]:
    """Time the segmenter alone (embeddings precomputed) over ``n_turns`` turns."""
    limit = (config or EpisegConfig()).embedding.max_chars
    cached = CachingEmbedder(embedder)
    cached.prefetch(t[:limit] for t in texts)  # the segmenter finds every vector cached
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


def overhead_after_encode(
    turns: Sequence[Turn], *, embedder: Embedder, config: EpisegConfig | None = None
) -> dict[str, Any]:
    """The segmenter alone (vectors precomputed) on ``turns``: in a tight loop and after encodes.

    Streaming runs the segmenter's work just after an encode, with caches cold;
    :func:`overhead_per_turn` times it in a tight loop. This times both on the
    same turns (their own sessions), the second with a real ``embed`` of each
    turn's text just before its ``observe`` (the encode itself is not counted).

    >>> from episeg.testing import HashingEmbedder
    >>> from episeg.types import Turn
    >>> turns = [Turn(actor="user", text=t, ts=float(i)) for i, t in enumerate(["a b", "c d"])]
    >>> row = overhead_after_encode(turns, embedder=HashingEmbedder())
    >>> row["turns"], row["us_per_turn_tight"] > 0, row["us_per_turn_after_encode"] > 0
    (2, True, True)
    """
    limit = (config or EpisegConfig()).embedding.max_chars
    cached = CachingEmbedder(embedder)
    cached.prefetch(t.text[:limit] for t in turns)
    tight = Segmenter(embedder=cached, config=config)
    start = time.perf_counter()
    for turn in turns:
        tight.observe(turn)
    tight_s = time.perf_counter() - start
    after = Segmenter(embedder=cached, config=config)
    after_s = 0.0
    for turn in turns:
        embedder.embed([turn.text[:limit]])
        start = time.perf_counter()
        after.observe(turn)
        after_s += time.perf_counter() - start
    return {
        "turns": len(turns),
        "us_per_turn_tight": round(tight_s / len(turns) * 1e6, 2),
        "us_per_turn_after_encode": round(after_s / len(turns) * 1e6, 2),
        "episodes": [tight.stats["episodes"], after.stats["episodes"]],  # the same work twice
    }


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
    check_sizes(rounds=rounds, single_turns=single_turns, turns=n_turns)
    embedder = embedder if embedder is not None else default_embedder()
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
    after_encode = overhead_after_encode(turns[:single_turns], embedder=embedder)
    return {
        "machine": machine(),
        "embedder": describe(embedder),
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
        "segmenter_after_encode": after_encode,
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = bench_parser(
        "episeg bench segment", __doc__, single_turns=500, scale=(1_000, 10_000, 100_000)
    )
    return run_cli(
        parser,
        argv,
        lambda args: run_segment_bench(
            args.data,
            n_turns=args.turns,
            single_turns=args.single_turns,
            scale=args.scale,
            rounds=args.rounds,
        ),
    )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
