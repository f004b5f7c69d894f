"""``episeg eval memory``: evidence recall on LoCoMo at a matched word budget.

For each conversation: a :class:`~episeg.memory.Memory` with every default in
a temporary folder (one tenant per conversation, the clock set to one hour
after the conversation's last turn), its turns fed in order with their real
times (:mod:`episeg.evaluation.locomo`), a flush at each session end. Each
question of categories 1-4 is then recalled with ``Memory.recall(user,
question, k=50, max_words=B)`` for each budget ``B``.

**Evidence recall at B words**: what a method returns is concatenated in rank
order and cut at the last whole turn that fits B words, where a turn that
does not fit is skipped and later, shorter ones may still fill the budget
(the same rule for every method; ``Memory.recall`` applies it itself).
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

import argparse
import json
import logging
import math
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from episeg.evaluation.locomo import (
    CATEGORY_NAMES,
    Conversation,
    default_locomo_file,
    load_locomo,
)

__all__ = [
    "BUDGETS",
    "MethodScores",
    "auc",
    "bootstrap_ci",
    "evidence_recall",
    "main",
    "pack",
    "run_memory_eval",
]

log = logging.getLogger(__name__)

BUDGETS = (200, 500, 1000)
RECALL_AT = (1, 5, 10)
RRF_K = 60
HIT_LIMIT = 50


def pack(ranked: Sequence[str], words: dict[str, int], budget: int) -> list[str]:
    """Turn ids of ``ranked`` kept under ``budget`` words: a turn that does not fit is
    skipped, later ones may still fit; a repeated id is kept once.

    >>> pack(["a", "b", "c"], {"a": 3, "b": 9, "c": 2}, 6)
    ['a', 'c']
    """
    out: list[str] = []
    seen: set[str] = set()
    used = 0
    for turn_id in ranked:
        if turn_id in seen:
            continue
        w = words[turn_id]
        if used + w > budget:
            continue
        seen.add(turn_id)
        out.append(turn_id)
        used += w
    return out


def evidence_recall(returned: Sequence[str], evidence: Sequence[str]) -> float:
    """Share of ``evidence`` turn ids inside ``returned``.

    >>> evidence_recall(["D1:1", "D1:2"], ["D1:2", "D2:5"])
    0.5
    """
    got = set(returned)
    return sum(e in got for e in evidence) / len(evidence)


def bootstrap_ci(
    values: Sequence[float], *, rounds: int = 1000, seed: int = 0
) -> tuple[float, float]:
    """Percentile 95% interval of the mean, resampling ``values`` with replacement.

    >>> bootstrap_ci([1.0, 1.0, 1.0])
    (1.0, 1.0)
    """
    x = np.asarray(values, dtype=np.float64)
    if x.size == 0:
        return (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, x.size, size=(rounds, x.size))].mean(axis=1)
    return (float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975)))


def auc(scores: Sequence[float], labels: Sequence[int]) -> float | None:
    """Area under the ROC curve (ties count half); ``None`` without both classes.

    >>> auc([3, 2, 1], [1, 0, 0]), auc([1, 1], [1, 0])
    (1.0, 0.5)
    """
    s, y = np.asarray(scores, dtype=np.float64), np.asarray(labels)
    pos, neg = s[y == 1], s[y == 0]
    if pos.size == 0 or neg.size == 0:
        return None
    greater = (pos[:, None] > neg[None, :]).sum()
    ties = (pos[:, None] == neg[None, :]).sum()
    return float((greater + 0.5 * ties) / (pos.size * neg.size))


@dataclass
class MethodScores:
    """Per-question figures of one method (lists aligned with the question order)."""

    name: str
    recall: dict[int, list[float]] = field(default_factory=dict)
    words: dict[int, list[int]] = field(default_factory=dict)
    at_k: dict[int, list[float]] = field(default_factory=dict)
    categories: list[int] = field(default_factory=list)

    def add(
        self,
        category: int,
        evidence: Sequence[str],
        by_budget: dict[int, list[str]],
        words: dict[str, int],
        units: Sequence[Sequence[str]] | None,
    ) -> None:
        self.categories.append(category)
        for budget, returned in by_budget.items():
            self.recall.setdefault(budget, []).append(evidence_recall(returned, evidence))
            self.words.setdefault(budget, []).append(sum(words[t] for t in returned))
        if units is not None:
            for k in RECALL_AT:
                flat = [t for unit in units[:k] for t in unit]
                self.at_k.setdefault(k, []).append(evidence_recall(flat, evidence))

    def summary(self, *, rounds: int, seed: int) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "questions": len(self.categories)}
        cats = np.asarray(self.categories)
        for budget, values in sorted(self.recall.items()):
            v = np.asarray(values)
            lo, hi = bootstrap_ci(values, rounds=rounds, seed=seed)
            out[f"recall@{budget}w"] = float(v.mean())
            out[f"recall@{budget}w_ci"] = [lo, hi]
            out[f"all_found@{budget}w"] = float((v >= 1.0 - 1e-9).mean())
            out[f"words@{budget}w"] = float(np.mean(self.words[budget]))
            out[f"by_category@{budget}w"] = {
                CATEGORY_NAMES[c]: float(v[cats == c].mean()) for c in sorted(set(self.categories))
            }
        for k, values in sorted(self.at_k.items()):
            out[f"recall@{k}"] = float(np.mean(values))
        return out


# -- baselines over the turn vectors --------------------------------------------------
@dataclass
class _Corpus:
    ids: list[str]
    vectors: np.ndarray
    sessions: np.ndarray
    words: dict[str, int]
    episodes: list[list[int]]
    episode_vectors: np.ndarray
    bm25: Any


def _units_by_mean(corpus: _Corpus, groups: list[list[int]], q: np.ndarray) -> list[list[str]]:
    means = np.stack([corpus.vectors[g].mean(axis=0) for g in groups])
    means /= np.linalg.norm(means, axis=1, keepdims=True)
    order = np.argsort(-(means @ q), kind="stable")
    return [[corpus.ids[i] for i in groups[u]] for u in order]


def _session_groups(corpus: _Corpus, size: int | None) -> list[list[int]]:
    groups: list[list[int]] = []
    for s in dict.fromkeys(corpus.sessions.tolist()):
        rows = np.flatnonzero(corpus.sessions == s).tolist()
        step = size or len(rows)
        groups.extend(rows[i : i + step] for i in range(0, len(rows), step))
    return groups


def _rrf(orders: Sequence[np.ndarray], n: int) -> np.ndarray:
    score = np.zeros(n)
    for order in orders:
        score[order] += 1.0 / (RRF_K + 1 + np.arange(order.size))
    return np.argsort(-score, kind="stable")


def _baselines(corpus: _Corpus, q: np.ndarray, text: str) -> dict[str, list[list[str]]]:
    from episeg.recall.lexical import tokenize

    cos = corpus.vectors @ q
    dense = np.argsort(-cos, kind="stable")
    tokens = tokenize([text])[0]
    lex_scores = np.asarray(corpus.bm25.get_scores(tokens)) if tokens else np.zeros(len(corpus.ids))
    lex = np.argsort(-lex_scores, kind="stable")
    lex = lex[lex_scores[lex] > 0]
    ep_order = np.argsort(-(corpus.episode_vectors @ q), kind="stable")
    return {
        "single turns (cosine)": [[corpus.ids[i]] for i in dense],
        "5-turn chunks (cosine)": _units_by_mean(corpus, _session_groups(corpus, 5), q),
        "whole sessions (cosine)": _units_by_mean(corpus, _session_groups(corpus, None), q),
        "whole episodes (cosine)": [[corpus.ids[i] for i in corpus.episodes[e]] for e in ep_order],
        "BM25 over turns": [[corpus.ids[i]] for i in lex],
        "BM25 + cosine RRF over turns": [
            [corpus.ids[i]] for i in _rrf([dense, lex], len(corpus.ids))
        ],
    }


# -- the run --------------------------------------------------------------------------
def _ingest(memory: Any, conv: Conversation) -> list[Any]:
    from episeg.types import Actor, Turn

    stored: list[Any] = []
    session = None
    for t in conv.turns:
        if session is not None and t.session != session:
            stored += memory.flush(conv.id, f"session_{session}")
        session = t.session
        turn = Turn(
            actor=Actor.parse(t.actor),
            text=t.text,
            ts=t.ts,
            id=t.id,
            user=conv.id,
            session=f"session_{t.session}",
        )
        stored += memory.observe(turn)
    stored += memory.flush(conv.id)
    return stored


def _corpus(conv: Conversation, episodes: list[Any], embed: Callable[[list[str]], Any]) -> _Corpus:
    import bm25s

    from episeg.recall.lexical import tokenize

    ids = [t.id for t in conv.turns]
    row = {i: n for n, i in enumerate(ids)}
    vectors = np.zeros((len(ids), 0), dtype=np.float32)
    by_id: dict[str, np.ndarray] = {}
    for ep in episodes:
        if ep.turn_embeddings is not None:
            for turn, vec in zip(ep.turns, ep.turn_embeddings, strict=True):
                by_id[turn.id] = np.asarray(vec, dtype=np.float32)
    missing = [i for i in ids if i not in by_id]
    if missing:
        texts = {t.id: t.text for t in conv.turns}
        for i, vec in zip(missing, embed([texts[i] for i in missing]), strict=True):
            by_id[i] = np.asarray(vec, dtype=np.float32)
    vectors = np.stack([by_id[i] for i in ids])
    groups = [[row[t.id] for t in ep.turns if t.id in row] for ep in episodes]
    ep_vecs = np.stack([np.asarray(ep.embedding, dtype=np.float32) for ep in episodes])
    bm25 = bm25s.BM25()
    bm25.index(tokenize([t.text for t in conv.turns]), show_progress=False)
    return _Corpus(
        ids=ids,
        vectors=vectors,
        sessions=np.asarray([t.session for t in conv.turns]),
        words={t.id: len(t.text.split()) for t in conv.turns},
        episodes=groups,
        episode_vectors=ep_vecs,
        bm25=bm25,
    )


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
) -> dict[str, Any]:
    """Run the evaluation (see the module docstring); returns a JSON-ready dict."""
    from episeg.memory import Memory

    convs, defects = load_locomo(data)
    convs = convs[:limit_conversations]
    methods: dict[str, MethodScores] = {}
    ablations: dict[str, MethodScores] = {}
    latencies: list[float] = []
    salience_rows: list[tuple[float, int, int, int]] = []
    ingest_seconds = 0.0
    n_turns = 0
    root = Path(tempfile.mkdtemp(prefix="episeg-eval-memory-", dir=workdir))
    for conv in convs:
        clock_now = conv.end + 3600.0
        memory = Memory(path=root / conv.id, clock=_fixed(clock_now))
        t0 = time.perf_counter()
        episodes = _ingest(memory, conv)
        ingest_seconds += time.perf_counter() - t0
        n_turns += len(conv.turns)
        corpus = _corpus(conv, episodes, memory.embedder.embed)
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
        name = "episeg Memory.recall (defaults)"
        for q, qv in zip(questions, qvecs, strict=True):
            by_budget = {}
            for budget in budgets:
                t1 = time.perf_counter()
                hits = memory.recall(conv.id, q.text, k=HIT_LIMIT, max_words=budget)
                latencies.append(time.perf_counter() - t1)
                by_budget[budget] = pack(_hit_ids(hits), corpus.words, budget)
            unit_hits = memory.recall(conv.id, q.text, k=max(RECALL_AT))
            units = [[t.id or "" for t in h.turns] for h in unit_hits]
            methods.setdefault(name, MethodScores(name)).add(
                q.category, q.evidence, by_budget, corpus.words, units
            )
            for label, ranked in _baselines(corpus, qv, q.text).items():
                flat = [t for unit in ranked for t in unit]
                methods.setdefault(label, MethodScores(label)).add(
                    q.category,
                    q.evidence,
                    {b: pack(flat, corpus.words, b) for b in budgets},
                    corpus.words,
                    ranked,
                )
        if ablation:
            base = memory.recaller(conv.id)
            for label, weights, reinf, confirm in ABLATION:
                if confirm:
                    memory.store(conv.id).update(episodes)  # recall state back to unused
                config = memory.config.with_overrides(
                    **{"recall.weights": weights, "recall.reinforcement_weight": reinf}
                )
                recaller = type(base)(
                    base.store, memory.embedder, config=config, clock=_fixed(clock_now)
                )
                scores = ablations.setdefault(label, MethodScores(label))
                for q, qv in zip(questions, qvecs, strict=True):
                    by_budget = {}
                    for budget in budgets:
                        hits = recaller.recall(qv, HIT_LIMIT, text=q.text, max_words=budget)
                        by_budget[budget] = pack(_hit_ids(hits), corpus.words, budget)
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
        "conversations": [c.id for c in convs],
        "questions": len(next(iter(methods.values())).categories) if methods else 0,
        "turns": n_turns,
        "budgets": list(budgets),
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
        "paired_vs_baselines": _paired(methods, budgets, rounds=rounds, seed=seed),
        "ablation": [a.summary(rounds=rounds, seed=seed) for a in ablations.values()],
        "salience": _salience_report(salience_rows),
    }


def _paired(
    methods: dict[str, MethodScores], budgets: Sequence[int], *, rounds: int, seed: int
) -> dict[str, Any]:
    """Bootstrap interval of (episeg - baseline) per budget, questions paired."""
    names = list(methods)
    if not names:
        return {}
    ours = methods[names[0]]
    out: dict[str, Any] = {}
    for name in names[1:]:
        row = {}
        for b in budgets:
            diff = np.asarray(ours.recall[b]) - np.asarray(methods[name].recall[b])
            lo, hi = bootstrap_ci(diff.tolist(), rounds=rounds, seed=seed)
            row[f"{b}w"] = {"mean": float(diff.mean()), "ci": [lo, hi]}
        out[name] = row
    return out


def _salience_report(rows: list[tuple[float, int, int, int]]) -> dict[str, Any]:
    if not rows:
        return {}
    score, turns, words, label = (np.asarray(x) for x in zip(*rows, strict=True))
    scored = ~np.isnan(score)
    score, turns, words, label = score[scored], turns[scored], words[scored], label[scored]
    edges = np.quantile(turns, [0.2, 0.4, 0.6, 0.8])
    bins = np.digitize(turns, edges)
    per_bin = []
    pooled_num = pooled_den = 0.0
    for b in np.unique(bins):
        m = bins == b
        a = auc(score[m].tolist(), label[m].tolist())
        pos = int(label[m].sum())
        per_bin.append(
            {
                "turns": [int(turns[m].min()), int(turns[m].max())],
                "episodes": int(m.sum()),
                "with_evidence": pos,
                "auc": a,
            }
        )
        if a is not None:
            weight = pos * (int(m.sum()) - pos)
            pooled_num += a * weight
            pooled_den += weight
    return {
        "episodes": int(label.size),
        "with_evidence": int(label.sum()),
        "auc_salience": auc(score.tolist(), label.tolist()),
        "auc_turn_count": auc(turns.tolist(), label.tolist()),
        "auc_words": auc(words.tolist(), label.tolist()),
        "auc_salience_within_length_bins": pooled_num / pooled_den if pooled_den else None,
        "length_bins": per_bin,
        "score_histogram": {
            str(int(s)): int((score == s).sum()) for s in sorted(set(score.tolist()))
        },
    }


def format_markdown(result: dict[str, Any]) -> str:
    """The result as markdown tables (methods x budgets with 95% intervals, ablation)."""
    budgets = result["budgets"]
    head = "| method | " + " | ".join(f"{b} words" for b in budgets)
    head += " | " + " | ".join(f"all found @{b}" for b in budgets)
    head += " | " + " | ".join(f"recall@{k}" for k in RECALL_AT) + " |"
    lines = [head, "|" + "---|" * (1 + 2 * len(budgets) + len(RECALL_AT))]
    for m in result["methods"]:
        cells = [_with_ci(m, b) for b in budgets]
        cells += [f"{m[f'all_found@{b}w']:.3f}" for b in budgets]
        cells += [f"{m.get(f'recall@{k}', math.nan):.3f}" for k in RECALL_AT]
        name = f"**{m['name']}**" if m["name"].startswith("episeg") else m["name"]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("Words returned (mean) and evidence recall per category:")
    lines.append("")
    cats = list(result["methods"][0][f"by_category@{budgets[0]}w"]) if result["methods"] else []
    lines.append(
        "| method | "
        + " | ".join(f"words @{b}" for b in budgets)
        + " | "
        + " | ".join(f"{c} @{budgets[1] if len(budgets) > 1 else budgets[0]}" for c in cats)
        + " |"
    )
    lines.append("|" + "---|" * (1 + len(budgets) + len(cats)))
    mid = budgets[1] if len(budgets) > 1 else budgets[0]
    for m in result["methods"]:
        cells = [f"{m[f'words@{b}w']:.0f}" for b in budgets]
        cells += [f"{m[f'by_category@{mid}w'][c]:.3f}" for c in cats]
        lines.append(f"| {m['name']} | " + " | ".join(cells) + " |")
    if result["ablation"]:
        lines += [
            "",
            "Ablation (the same recall with a rerank term added at the weight shown):",
            "",
        ]
        lines.append("| variant | " + " | ".join(f"{b} words" for b in budgets) + " |")
        lines.append("|" + "---|" * (1 + len(budgets)))
        for a in result["ablation"]:
            cells = [_with_ci(a, b) for b in budgets]
            lines.append(f"| {a['name']} | " + " | ".join(cells) + " |")
    lat = result["recall_latency_ms"]
    lines += [
        "",
        f"Recall latency ({lat['calls']} calls, {lat['what']}): "
        f"p50 {lat['p50']:.1f} ms, p99 {lat['p99']:.1f} ms.",
    ]
    sal = result["salience"]
    if sal:
        lines.append(
            f"Salience AUC for 'episode holds evidence' ({sal['episodes']} episodes, "
            f"{sal['with_evidence']} with evidence): raw {_fmt(sal['auc_salience'])}, "
            f"turn count alone {_fmt(sal['auc_turn_count'])}, within length bins "
            f"{_fmt(sal['auc_salience_within_length_bins'])}."
        )
    d = result["evidence_defects"]
    lines.append(
        f"Evidence ids: {d['ids']} read, {d['normalised']} normalised, "
        f"{d['dropped_malformed']} unreadable and {d['dropped_outside_conversation']} "
        f"outside their conversation dropped; {d['questions_without_evidence']} questions "
        "left without evidence skipped."
    )
    return "\n".join(lines) + "\n"


def _with_ci(row: dict[str, Any], budget: int) -> str:
    lo, hi = row[f"recall@{budget}w_ci"]
    return f"{row[f'recall@{budget}w']:.3f} [{lo:.3f}, {hi:.3f}]"


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _parser() -> argparse.ArgumentParser:
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
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap rounds (default 1000)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", type=Path, default=None, help="write the results as JSON here")
    p.add_argument("--markdown", type=Path, default=None, help="write the tables here")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; prints the markdown tables."""
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    logging.getLogger("episeg.evaluation").setLevel(logging.INFO)
    data = default_locomo_file(args.data)
    if not data.is_file():
        print(f"episeg eval memory: no LoCoMo file at {data}")
        return 2
    if any(b < 1 for b in args.budgets):
        _parser().error("budgets must be >= 1")
    result = run_memory_eval(
        data,
        budgets=args.budgets,
        limit_conversations=args.conversations,
        limit_questions=args.questions,
        ablation=not args.no_ablation,
        rounds=args.bootstrap,
        seed=args.seed,
    )
    text = format_markdown(result)
    print(text, end="")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    if args.markdown:
        args.markdown.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
