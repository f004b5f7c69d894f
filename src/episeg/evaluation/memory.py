"""``episeg eval memory``: evidence recall on LoCoMo at a matched word budget.

For each conversation: a :class:`~episeg.memory.Memory` with every default in
a temporary folder (one tenant per conversation, the clock set to one hour
after the conversation's last turn), its turns fed in order with their real
times (:mod:`episeg.evaluation.locomo`), a flush at each session end. Each
question of categories 1-4 is then recalled with ``Memory.recall(user,
question, k=50, max_words=B)`` for each budget ``B``.

**Evidence recall at B words**: what a method returns is concatenated in rank
order and cut at the last whole turn that fits B words (``packing="cut"``, the
LoCoMo README's rule and the default), or with ``packing="fill"`` a turn that
does not fit is skipped and later, shorter ones may still fill the budget (the
rule of every figure before 2026-12-07). The rule is the same for every method.
``Memory.recall(max_words=B)`` packs by "fill" itself; under "cut" the row "hits in
episode order, cut" also scores ``Memory.recall(k=50)`` without ``max_words``, cut:
its hits best first, each hit's turns in conversation order (not episeg's turn
ranking, which ``max_words`` packs).
Words = whitespace-separated tokens of the returned turn texts
(``"Speaker: text [shares a photo: caption]"``); summaries and dates that a
hit carries are not counted. A question's score is the share of its evidence
turns inside; the table gives the mean over questions with a bootstrap 95%
interval (questions resampled).

Baselines, in the same run with the same embedder (the turn vectors the
memory computed while segmenting): single turns ranked by cosine; 5-turn
chunks and whole sessions ranked by the cosine of their mean turn vector;
whole episodes of the same segmentation ranked by their stored vector; BM25
over turns; reciprocal rank fusion (k = 60) of BM25 and cosine over turns
(the same tokenizer as the memory's: bm25s, English stop words, Snowball).

Also reported: recall@k (units: a hit for episeg, a turn/chunk/session for
the baselines, no budget), all-found rate, words returned, per category,
recall latency, an ablation of the rerank terms, and the offline salience
scorer's AUC for "episode holds evidence" with episode length controlled.

Run ``python -m episeg.evaluation.memory --json out.json --markdown out.md``.
"""

from __future__ import annotations

import json
import logging
import math
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from episeg.config.overrides import config_with
from episeg.errors import EpisegError
from episeg.evaluation.locomo import default_locomo_file, load_locomo
from episeg.evaluation.memory_baselines import baselines, build_corpus, ingest
from episeg.evaluation.memory_cli import memory_parser
from episeg.evaluation.memory_report import format_markdown
from episeg.evaluation.memory_scores import (
    BUDGETS,
    PACKINGS,
    RECALL_AT,
    MethodScores,
    auc,
    bootstrap_ci,
    evidence_recall,
    pack,
    paired,
    salience_report,
)
from episeg.evaluation.provenance import provenance

__all__ = [
    "BUDGETS",
    "MethodScores",
    "auc",
    "bootstrap_ci",
    "evidence_recall",
    "format_markdown",
    "main",
    "pack",
    "run_memory_eval",
]

log = logging.getLogger(__name__)

HIT_LIMIT = 50


def _fixed(now: float) -> Callable[[], float]:
    def clock() -> float:
        return now

    return clock


def _hit_ids(hits: Sequence[Any]) -> list[str]:
    return [turn.id or "" for hit in hits for turn in hit.turns]


ABLATION = (
    # label, (recency, importance, relevance) weights, reinforcement weight, confirm use
    ("relevance only (default)", (0.0, 0.0, 1.0), 0.0, False),
    ("+ recency 0.1", (0.1, 0.0, 1.0), 0.0, False),
    ("+ recency 1", (1.0, 0.0, 1.0), 0.0, False),
    ("+ importance 0.1", (0.0, 0.1, 1.0), 0.0, False),
    ("+ importance 1", (0.0, 1.0, 1.0), 0.0, False),
    ("+ reinforcement 1, in sequence, no use confirmed", (0.0, 0.0, 1.0), 1.0, False),
    ("+ reinforcement 0.1, in sequence, use confirmed", (0.0, 0.0, 1.0), 0.1, True),
    ("+ reinforcement 1, in sequence, use confirmed", (0.0, 0.0, 1.0), 1.0, True),
)
"""Rerank variants of the ablation. Relevance is in [0, 1] (1 = first in every list);
recency, importance and reinforcement are in [0, 1] before their weight. "Use
confirmed" simulates an agent that confirms, after each question, the hits whose
returned turns held evidence (``confirm_used``); the store's recall state is reset
before each such variant."""


def run_memory_eval(
    data: Path,
    *,
    budgets: Sequence[int] = BUDGETS,
    limit_conversations: int | None = None,
    limit_questions: int | None = None,
    ablation: bool = True,
    rounds: int = 1000,
    seed: int = 0,
    workdir: Path | None = None,
    judge: bool = True,
    overrides: Sequence[str] = (),
    packing: str = "cut",
) -> dict[str, Any]:
    """Run the evaluation (see the module docstring); returns a JSON-ready dict.

    ``judge=False`` builds each memory with ``judge=None`` instead of ``Memory``'s
    default judge (none with real roles; the result's ``judge`` names the one built).
    ``overrides`` (``["recall.warm_cache=true", ...]``, see
    :mod:`episeg.config.overrides`) change every memory's config; the result
    records them.
    """
    from episeg.defaults import DEFAULT
    from episeg.memory import Memory

    config = config_with(overrides)  # a bad override fails here, before any work
    fit = PACKINGS[packing]
    convs, defects = load_locomo(data)
    convs = convs[:limit_conversations]
    methods: dict[str, MethodScores] = {}
    ablations: dict[str, MethodScores] = {}
    latencies: list[float] = []
    salience_rows: list[tuple[float, int, int, int]] = []
    ingest_seconds, n_turns = 0.0, 0
    built = "none"  # the judge DEFAULT resolved to (episeg.defaults.resolve_judge)
    root = Path(tempfile.mkdtemp(prefix="episeg-eval-memory-", dir=workdir))
    for conv in convs:
        clock_now = conv.end + 3600.0
        memory = Memory(
            path=root / conv.id,
            clock=_fixed(clock_now),
            judge=DEFAULT if judge else None,
            config=config,
        )
        built = memory.judge.name if memory.judge is not None else "none"
        t0 = time.perf_counter()
        episodes = ingest(memory, conv)
        ingest_seconds += time.perf_counter() - t0
        n_turns += len(conv.turns)
        corpus = build_corpus(conv, episodes, memory.embedder.embed)
        questions = list(conv.questions[:limit_questions])
        qvecs = np.asarray(memory.embedder.embed([q.text for q in questions]), dtype=np.float32)
        evidence_all = {e for q in conv.questions for e in q.evidence}
        for ep in episodes:
            salience_rows.append(
                (
                    float(ep.salience.score) if ep.salience and ep.salience.score else math.nan,
                    len(ep.turns),
                    sum(corpus.words[t.id] for t in ep.turns),
                    int(any(t.id in evidence_all for t in ep.turns)),
                )
            )
        name = "episeg Memory.recall (defaults)" if judge else "episeg Memory.recall (judge=None)"
        for q, qv in zip(questions, qvecs, strict=True):
            by_budget = {}
            for budget in budgets:
                t1 = time.perf_counter()
                hits = memory.recall(conv.id, q.text, k=HIT_LIMIT, max_words=budget)
                latencies.append(time.perf_counter() - t1)
                by_budget[budget] = fit(_hit_ids(hits), corpus.words, budget)
            unit_hits = memory.recall(conv.id, q.text, k=max(RECALL_AT))
            units = [[t.id or "" for t in h.turns] for h in unit_hits]
            methods.setdefault(name, MethodScores(name)).add(
                q.category, q.evidence, by_budget, corpus.words, units
            )
            if packing == "cut":  # episeg's hits in episode order, cut like every baseline's
                ranked_ids = _hit_ids(memory.recall(conv.id, q.text, k=HIT_LIMIT))
                cut_by = {b: fit(ranked_ids, corpus.words, b) for b in budgets}
                label = f"{name[: -len(')')]}, hits in episode order, cut)"
                methods.setdefault(label, MethodScores(label)).add(
                    q.category, q.evidence, cut_by, corpus.words, units
                )
            for label, ranked in baselines(corpus, qv, q.text).items():
                flat = [t for unit in ranked for t in unit]
                methods.setdefault(label, MethodScores(label)).add(
                    q.category,
                    q.evidence,
                    {b: fit(flat, corpus.words, b) for b in budgets},
                    corpus.words,
                    ranked,
                )
        if ablation:
            base = memory.recaller(conv.id)
            for label, weights, reinf, confirm in ABLATION:
                if confirm:
                    memory.store(conv.id).update(episodes)  # recall state back to unused
                variant = memory.config.with_overrides(
                    **{"recall.weights": weights, "recall.reinforcement_weight": reinf}
                )
                recaller = type(base)(
                    base.store, memory.embedder, config=variant, clock=_fixed(clock_now)
                )
                scores = ablations.setdefault(label, MethodScores(label))
                for q, qv in zip(questions, qvecs, strict=True):
                    by_budget = {}
                    for budget in budgets:
                        hits = recaller.recall(qv, HIT_LIMIT, text=q.text, max_words=budget)
                        by_budget[budget] = fit(_hit_ids(hits), corpus.words, budget)
                    scores.add(q.category, q.evidence, by_budget, corpus.words, None)
                    if confirm:  # simulate an agent that used the hits holding evidence
                        used = [
                            h.episode.id for h in hits if any(t.id in q.evidence for t in h.turns)
                        ]
                        recaller.confirm_used(used)
        memory.close()
        log.info("%s: %d turns, %d questions", conv.id, len(conv.turns), len(questions))
    lat = np.asarray(latencies) * 1000.0
    return {
        "data": str(data),
        "judge": f"default ({built})" if judge else "none",
        "config_overrides": list(overrides),
        "provenance": provenance(),
        "conversations": [c.id for c in convs],
        "questions": len(next(iter(methods.values())).categories) if methods else 0,
        "turns": n_turns,
        "budgets": list(budgets),
        "packing": packing,
        "hit_limit": HIT_LIMIT,
        "evidence_defects": defects.to_dict(),
        "ingest_turns_per_s": n_turns / ingest_seconds if ingest_seconds else None,
        "recall_latency_ms": {
            "p50": float(np.percentile(lat, 50)) if lat.size else None,
            "p99": float(np.percentile(lat, 99)) if lat.size else None,
            "calls": int(lat.size),
            "what": "Memory.recall(user, text, k=50, max_words=B): query embedding included",
        },
        "methods": [m.summary(rounds=rounds, seed=seed) for m in methods.values()],
        "paired_vs_baselines": paired(methods, budgets, rounds=rounds, seed=seed),
        "ablation": [a.summary(rounds=rounds, seed=seed) for a in ablations.values()],
        "salience": salience_report(salience_rows),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; prints the markdown tables."""
    args = memory_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    logging.getLogger("episeg.evaluation").setLevel(logging.INFO)
    data = default_locomo_file(args.data)
    if not data.is_file():
        print(f"episeg eval memory: no LoCoMo file at {data}")
        return 2
    if any(b < 1 for b in args.budgets):
        memory_parser().error("budgets must be >= 1")
    try:
        result = run_memory_eval(
            data,
            budgets=args.budgets,
            limit_conversations=args.conversations,
            limit_questions=args.questions,
            ablation=not args.no_ablation,
            rounds=args.bootstrap,
            seed=args.seed,
            judge=not args.no_judge,
            overrides=args.overrides,
            packing=args.packing,
        )
    except EpisegError as exc:  # a malformed LoCoMo file or --set: named, no traceback
        print(f"episeg eval memory: error: {exc}", file=sys.stderr)
        return 2
    text = format_markdown(result)
    print(text, end="")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    if args.markdown:
        args.markdown.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
