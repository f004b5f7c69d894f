"""The two published scoring protocols for dialogue topic segmentation, and the boundary ratio.

Their numbers are not comparable without saying which one was used:

**Protocol A** (the SuperDialseg authors' code, ``metrics/segmentation.py``):
a dialogue of ``n`` turns becomes ``n`` labels, ``1`` on the *last* turn of
every segment but the final one; Pk and WindowDiff are nltk's on those labels
with ``k = max(2, round(n / segments / 2))``; F1 is scikit-learn's binary F1 on
the same labels (``zero_division=0``, so a dialogue without gold or predicted
boundaries scores 0); all three are averaged over dialogues, and
``Score = 0.5 F1 + 0.25 (1 - Pk) + 0.25 (1 - WD)``.

**Protocol B** (the Def-DTS code): ``segeval.pk`` / ``segeval.window_diff`` on
segment masses with segeval's default window (half the mean reference
segment length), averaged over dialogues; F1 pooled over all turns of the set.

**Boundary ratio**: predicted boundaries over gold boundaries, which exposes
the over- and under-segmentation that Pk alone rewards.

>>> a = protocol_a([3], [3], 6)
>>> a.pk, a.window_diff, a.f1
(0.0, 0.0, 1.0)
>>> round(protocol_a([3], [], 6).pk, 3)  # k = 2; 2 of 5 windows see the boundary
0.4
>>> s = score_protocols([[3]], [[2, 4]], [6])
>>> round(s.boundary_ratio, 1), round(s.f1_b, 3)
(2.0, 0.0)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from episeg.evaluation.metrics import boundaries_to_masses, check_boundaries

__all__ = ["DialogueScore", "ProtocolScores", "protocol_a", "protocol_b", "score_protocols"]


@dataclass(frozen=True, slots=True)
class DialogueScore:
    """Pk, WindowDiff and F1 of one dialogue under one protocol."""

    pk: float
    window_diff: float
    f1: float


@dataclass(frozen=True, slots=True)
class ProtocolScores:
    """Both protocols over one set (A: per-dialogue means; B: segeval means, pooled F1)."""

    pk_a: float
    wd_a: float
    f1_a: float
    score_a: float
    pk_b: float
    wd_b: float
    f1_b: float
    boundary_ratio: float
    hyp_boundaries: int
    ref_boundaries: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _end_labels(boundaries: Sequence[int], n: int) -> list[int]:
    labels = [0] * n
    for b in boundaries:
        labels[b - 1] = 1
    return labels


def _windows(ref: list[int], hyp: list[int], k: int, *, count: bool) -> float:
    probes = len(ref) - k + 1
    if probes <= 0:
        return 0.0
    errors = 0
    r, h = sum(ref[:k]), sum(hyp[:k])
    for i in range(probes):
        if i:
            r += ref[i + k - 1] - ref[i - 1]
            h += hyp[i + k - 1] - hyp[i - 1]
        errors += (r != h) if count else ((r > 0) != (h > 0))
    return errors / probes


def _f1(tp: int, hyp: int, ref: int) -> float:
    p = tp / hyp if hyp else 0.0
    r = tp / ref if ref else 0.0
    return 2 * p * r / (p + r) if p + r else 0.0


def protocol_a(reference: Sequence[int], hypothesis: Sequence[int], n: int) -> DialogueScore:
    """One dialogue under protocol A (see the module docstring)."""
    ref_b, hyp_b = check_boundaries(reference, n), check_boundaries(hypothesis, n)
    ref, hyp = _end_labels(ref_b, n), _end_labels(hyp_b, n)
    k = max(2, round(n / (len(ref_b) + 1) / 2))
    tp = len(set(ref_b) & set(hyp_b))
    return DialogueScore(
        _windows(ref, hyp, k, count=False),
        _windows(ref, hyp, k, count=True),
        _f1(tp, len(hyp_b), len(ref_b)),
    )


def protocol_b(reference: Sequence[int], hypothesis: Sequence[int], n: int) -> DialogueScore:
    """One dialogue under protocol B's segeval Pk / WindowDiff (F1 is pooled by the set)."""
    import segeval
    from segeval.util import SegmentationMetricError

    ref, hyp = boundaries_to_masses(reference, n), boundaries_to_masses(hypothesis, n)
    if n < 2:
        return DialogueScore(0.0, 0.0, 0.0)
    tp = len(set(reference) & set(hypothesis))
    try:
        pk = float(segeval.pk(hyp, ref))
        wd = float(segeval.window_diff(hyp, ref))
    except (ZeroDivisionError, ArithmeticError, SegmentationMetricError):  # no window fits
        pk = wd = 0.0
    return DialogueScore(pk, wd, _f1(tp, len(hypothesis), len(reference)))


def score_protocols(
    references: Sequence[Sequence[int]], hypotheses: Sequence[Sequence[int]], ns: Sequence[int]
) -> ProtocolScores:
    """Both protocols and the boundary ratio over a set of dialogues."""
    if not ns or not (len(references) == len(hypotheses) == len(ns)):
        raise ValueError("score_protocols needs as many references, hypotheses and lengths")
    a = [protocol_a(r, h, n) for r, h, n in zip(references, hypotheses, ns, strict=True)]
    b = [protocol_b(r, h, n) for r, h, n in zip(references, hypotheses, ns, strict=True)]
    hyp_total = sum(len(h) for h in hypotheses)
    ref_total = sum(len(r) for r in references)
    tp = sum(len(set(r) & set(h)) for r, h in zip(references, hypotheses, strict=True))
    pk_a = sum(s.pk for s in a) / len(a)
    wd_a = sum(s.window_diff for s in a) / len(a)
    f1_a = sum(s.f1 for s in a) / len(a)
    return ProtocolScores(
        pk_a=pk_a,
        wd_a=wd_a,
        f1_a=f1_a,
        score_a=0.5 * f1_a + 0.25 * (1 - pk_a) + 0.25 * (1 - wd_a),
        pk_b=sum(s.pk for s in b) / len(b),
        wd_b=sum(s.window_diff for s in b) / len(b),
        f1_b=_f1(tp, hyp_total, ref_total),
        boundary_ratio=hyp_total / ref_total if ref_total else float("inf") if hyp_total else 1.0,
        hyp_boundaries=hyp_total,
        ref_boundaries=ref_total,
    )
