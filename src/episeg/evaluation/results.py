"""Score one segmentation configuration on one dialogue set.

:func:`evaluate` calls ``segment_fn(turns) -> (boundaries, stats)`` once per
dialogue (``stats`` may carry ``judge_calls`` and ``embed_calls``) and returns
an :class:`EvalResult`: Pk and WindowDiff averaged over dialogues (window ``k``
from each dialogue's reference, see :mod:`episeg.evaluation.metrics`), boundary
precision / recall / F1 pooled over all dialogues (exact and within
``tolerance`` turns), both published protocols and the boundary ratio
(:mod:`episeg.evaluation.protocols`: ``pk_a`` ... ``score_a``, ``pk_b``,
``wd_b``, ``f1_b``, ``boundary_ratio``), cost per 1,000 turns and the seconds
spent inside ``segment_fn``.

>>> from episeg.evaluation.datasets import Dialogue
>>> from episeg.types import Turn
>>> turns = [Turn(actor="user", text=str(i), ts=30.0 * i) for i in range(6)]
>>> gold = [Dialogue(id="d", source="demo", turns=turns, boundaries=[3])]
>>> r = evaluate(gold, lambda ts: ([3], {"judge_calls": 2}), "perfect")
>>> r.pk, r.window_diff, r.f1, r.judge_calls_per_1k_turns
(0.0, 0.0, 1.0, 333.3333333333333)
>>> r.pk_a, r.score_a, r.pk_b, r.boundary_ratio
(0.0, 1.0, 0.0, 1.0)
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from episeg.evaluation.baselines import SegmentFn
from episeg.evaluation.datasets import Dialogue
from episeg.evaluation.metrics import (
    SegmentationError,
    boundary_matches,
    check_boundaries,
    pk,
    prf_from_counts,
    window_diff,
)
from episeg.evaluation.protocols import score_protocols

__all__ = ["EvalResult", "evaluate"]


@dataclass(frozen=True, slots=True)
class EvalResult:
    """Scores of one configuration on one dialogue set (lower Pk / WindowDiff is better)."""

    name: str
    dataset: str
    dialogues: int
    turns: int
    pk: float
    window_diff: float
    precision: float
    recall: float
    f1: float
    f1_tolerant: float
    tolerance: int
    hyp_boundaries: int
    ref_boundaries: int
    judge_calls_per_1k_turns: float
    embed_calls_per_1k_turns: float
    seconds: float
    pk_a: float = float("nan")
    wd_a: float = float("nan")
    f1_a: float = float("nan")
    score_a: float = float("nan")
    pk_b: float = float("nan")
    wd_b: float = float("nan")
    f1_b: float = float("nan")
    boundary_ratio: float = float("nan")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def evaluate(
    dialogues: Sequence[Dialogue],
    segment_fn: SegmentFn,
    name: str,
    *,
    dataset: str = "",
    tolerance: int = 1,
    min_window: int = 1,
) -> EvalResult:
    """Score ``segment_fn`` on ``dialogues``; invalid output raises :class:`SegmentationError`."""
    if not dialogues:
        raise SegmentationError(f"{name}: no dialogues to evaluate")
    pks: list[float] = []
    wds: list[float] = []
    exact = tolerant = hyp_total = ref_total = turns = 0
    judge = embed = 0.0
    seconds = 0.0
    hyps: list[list[int]] = []
    for d in dialogues:
        start = time.perf_counter()
        raw, stats = segment_fn(d.turns)
        seconds += time.perf_counter() - start
        try:
            hyp = check_boundaries(raw, len(d))
        except SegmentationError as exc:
            raise SegmentationError(f"{name} on dialogue {d.id}: {exc}") from None
        n = len(d)
        hyps.append(hyp)
        pks.append(pk(d.boundaries, hyp, n=n, min_window=min_window))
        wds.append(window_diff(d.boundaries, hyp, n=n, min_window=min_window))
        exact += boundary_matches(d.boundaries, hyp, tolerance=0)
        tolerant += boundary_matches(d.boundaries, hyp, tolerance=tolerance)
        hyp_total += len(hyp)
        ref_total += len(d.boundaries)
        turns += n
        judge += float(stats.get("judge_calls", 0))
        embed += float(stats.get("embed_calls", 0))
    prf = prf_from_counts(exact, hyp_total, ref_total)
    both = score_protocols([d.boundaries for d in dialogues], hyps, [len(d) for d in dialogues])
    return EvalResult(
        name=name,
        dataset=dataset,
        dialogues=len(dialogues),
        turns=turns,
        pk=sum(pks) / len(pks),
        window_diff=sum(wds) / len(wds),
        precision=prf.precision,
        recall=prf.recall,
        f1=prf.f1,
        f1_tolerant=prf_from_counts(tolerant, hyp_total, ref_total).f1,
        tolerance=tolerance,
        hyp_boundaries=hyp_total,
        ref_boundaries=ref_total,
        judge_calls_per_1k_turns=1000.0 * judge / turns,
        embed_calls_per_1k_turns=1000.0 * embed / turns,
        seconds=seconds,
        pk_a=both.pk_a,
        wd_a=both.wd_a,
        f1_a=both.f1_a,
        score_a=both.score_a,
        pk_b=both.pk_b,
        wd_b=both.wd_b,
        f1_b=both.f1_b,
        boundary_ratio=both.boundary_ratio,
    )
