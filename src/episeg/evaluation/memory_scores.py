"""Scores of the memory evaluation: budget packing, evidence recall, intervals, AUC.

:class:`MethodScores` collects one method's per-question figures and
summarises them; :func:`paired` compares episeg with each baseline on the
same questions; :func:`salience_report` is the salience scorer's AUC for
"episode holds evidence", with episode length controlled.

>>> s = MethodScores("m")
>>> s.add(1, ["a"], {200: ["a", "b"]}, {"a": 3, "b": 4}, None)
>>> s.summary(rounds=10, seed=0)["recall@200w"], s.words[200]
(1.0, [7])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from episeg.evaluation.locomo import CATEGORY_NAMES

__all__ = [
    "BUDGETS",
    "RECALL_AT",
    "MethodScores",
    "auc",
    "bootstrap_ci",
    "evidence_recall",
    "pack",
    "paired",
    "salience_report",
]

BUDGETS = (200, 500, 1000)
RECALL_AT = (1, 5, 10)


def pack(ranked: Sequence[str], words: dict[str, int], budget: int) -> list[str]:
    """Turn ids of ``ranked`` kept under ``budget`` words: a turn that does not fit is
    skipped, later ones may still fit; a repeated id is kept once.

    >>> pack(["a", "b", "c"], {"a": 3, "b": 9, "c": 2}, 6)
    ['a', 'c']
    """
    return _within(ranked, words, budget, skip_misfits=True)


def cut(ranked: Sequence[str], words: dict[str, int], budget: int) -> list[str]:
    """Turn ids of ``ranked`` up to the last whole turn that fits ``budget`` words.

    The LoCoMo README's rule: the returned turns are concatenated in rank order
    and cut where the next turn no longer fits (a repeated id counts once).

    >>> cut(["a", "b", "c"], {"a": 3, "b": 9, "c": 2}, 6)
    ['a']
    """
    return _within(ranked, words, budget, skip_misfits=False)


def _within(
    ranked: Sequence[str], words: dict[str, int], budget: int, *, skip_misfits: bool
) -> list[str]:
    out: list[str] = []
    seen: set[str] = set()
    used = 0
    for turn_id in ranked:
        if turn_id in seen:
            continue
        if used + words[turn_id] > budget:
            if skip_misfits:
                continue
            break
        seen.add(turn_id)
        out.append(turn_id)
        used += words[turn_id]
    return out


PACKINGS = {"cut": cut, "fill": pack}
"""How a method's ranked turns become its answer at a budget: the README's ``cut``
(stop at the first turn that does not fit) or ``fill`` (skip it, later ones may fit)."""


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


def paired(
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


def salience_report(rows: list[tuple[float, int, int, int]]) -> dict[str, Any]:
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
