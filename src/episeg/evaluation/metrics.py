"""Segmentation metrics: Pk, WindowDiff and boundary precision / recall / F1.

Conventions
-----------
A segmentation of ``n`` turns is a sorted list of *boundaries*: indices ``i``
(``0 < i < n``) of turns that open a new segment, so the segments are
``[0, b1), [b1, b2), ..., [bk, n)``. Equivalently, a list of segment lengths
("masses", segeval's format) summing to ``n``.

Pk (Beeferman, Berger & Lafferty 1999) probes every pair of turns ``(i, i + k)``
for ``i = 0 .. n - k - 1`` and counts the pairs where reference and hypothesis
disagree on "same segment or not". WindowDiff (Pevzner & Hearst 2002) counts the
same probes where the *number* of boundaries between ``i`` and ``i + k`` differs.
Both divide by the ``n - k`` probes; lower is better. These are exactly
``segeval.pk`` / ``segeval.window_diff`` on masses with an explicit
``window_size=k`` and ``nltk.metrics.segmentation.pk/windowdiff`` on the
``n - 1`` inter-turn gaps (``"1"`` where a turn opens a segment).

Window ``k`` = half the mean *reference* segment length of that dialogue,
rounded with Python's :func:`round` (half to even, as segeval and nltk do:
2.5 -> 2, 3.5 -> 4), and at least ``min_window`` (default 1; segeval's own
default floor is 2). A dialogue without reference boundaries has one segment
of ``n`` turns, so ``k = round(n / 2)`` and Pk counts every hypothesised
boundary that splits turns ``k`` apart. A dialogue of one turn admits only one
segmentation and scores 0.0. Corpus figures average per-dialogue scores.

>>> pk([3], [2], n=6), window_diff([3], [2], n=6)  # k = round(3 / 2) = 2
(0.5, 0.5)
>>> boundary_prf([2, 5, 9], [2, 6, 8], tolerance=0)
PRF(precision=0.3333333333333333, recall=0.3333333333333333, f1=0.3333333333333333)
>>> boundary_prf([2, 5, 9], [2, 6, 8], tolerance=1).f1
1.0
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from episeg.errors import EpisegError

__all__ = [
    "PRF",
    "SegmentationError",
    "boundaries_to_masses",
    "boundary_matches",
    "boundary_prf",
    "masses_to_boundaries",
    "pk",
    "prf_from_counts",
    "window_diff",
    "window_size",
]


class SegmentationError(EpisegError, ValueError):
    """A boundary list or mass list does not describe a segmentation of ``n`` turns."""


@dataclass(frozen=True, slots=True)
class PRF:
    """Precision, recall and F1 (0.0 where undefined, see :func:`prf_from_counts`)."""

    precision: float
    recall: float
    f1: float


def check_boundaries(boundaries: Sequence[int], n: int) -> list[int]:
    """Return ``boundaries`` as a list after checking they are sorted, unique, in ``(0, n)``."""
    if n < 1:
        raise SegmentationError(f"a segmentation needs at least one turn, got n={n}")
    out = [int(b) for b in boundaries]
    for prev, cur in itertools.pairwise(out):
        if cur <= prev:
            raise SegmentationError(f"boundaries must be sorted and unique, got {out}")
    if out and not (out[0] > 0 and out[-1] < n):
        raise SegmentationError(f"boundaries must lie in 1..{n - 1} for n={n}, got {out}")
    return out


def boundaries_to_masses(boundaries: Sequence[int], n: int) -> list[int]:
    """Segment lengths of the segmentation of ``n`` turns.

    >>> boundaries_to_masses([2, 5], 7)
    [2, 3, 2]
    """
    cuts = [0, *check_boundaries(boundaries, n), n]
    return [b - a for a, b in itertools.pairwise(cuts)]


def masses_to_boundaries(masses: Sequence[int]) -> list[int]:
    """Boundaries from segment lengths (the inverse of :func:`boundaries_to_masses`).

    >>> masses_to_boundaries([2, 3, 2])
    [2, 5]
    """
    if not masses or any(int(m) < 1 for m in masses):
        raise SegmentationError(f"masses must be positive integers, got {list(masses)}")
    out: list[int] = []
    total = 0
    for mass in masses[:-1]:
        total += int(mass)
        out.append(total)
    return out


def window_size(reference: Sequence[int], n: int, *, min_window: int = 1) -> int:
    """Half the mean reference segment length, rounded half to even, at least ``min_window``.

    >>> window_size([4], 8), window_size([], 5), window_size([1, 2], 3)
    (2, 2, 1)
    """
    segments = len(check_boundaries(reference, n)) + 1
    return max(min_window, round(n / segments / 2))


def _labels(boundaries: Sequence[int], n: int) -> list[int]:
    """Segment number of every turn."""
    labels = [0] * n
    for b in boundaries:
        for i in range(b, n):
            labels[i] += 1
    return labels


def _probe(
    reference: Sequence[int],
    hypothesis: Sequence[int],
    n: int,
    k: int | None,
    min_window: int,
    *,
    count: bool,
) -> float:
    ref = check_boundaries(reference, n)
    hyp = check_boundaries(hypothesis, n)
    if k is None:
        k = window_size(ref, n, min_window=min_window)
    if k < 1:
        raise SegmentationError(f"window k must be >= 1, got {k}")
    probes = n - k
    if probes <= 0:
        return 0.0
    ref_lab, hyp_lab = _labels(ref, n), _labels(hyp, n)
    errors = 0
    for i in range(probes):
        r = ref_lab[i + k] - ref_lab[i]
        h = hyp_lab[i + k] - hyp_lab[i]
        errors += (r != h) if count else ((r == 0) != (h == 0))
    return errors / probes


def pk(
    reference: Sequence[int],
    hypothesis: Sequence[int],
    *,
    n: int,
    k: int | None = None,
    min_window: int = 1,
) -> float:
    """Pk of ``hypothesis`` against ``reference`` (boundary lists over ``n`` turns).

    >>> pk([2, 4], [2, 4], n=6), pk([2, 4], [], n=6)
    (0.0, 0.4)
    """
    return _probe(reference, hypothesis, n, k, min_window, count=False)


def window_diff(
    reference: Sequence[int],
    hypothesis: Sequence[int],
    *,
    n: int,
    k: int | None = None,
    min_window: int = 1,
) -> float:
    """WindowDiff of ``hypothesis`` against ``reference`` (boundary lists over ``n`` turns).

    >>> window_diff([3], [2, 3], n=6)
    0.5
    """
    return _probe(reference, hypothesis, n, k, min_window, count=True)


def boundary_matches(
    reference: Sequence[int], hypothesis: Sequence[int], *, tolerance: int = 0
) -> int:
    """Size of a maximum one-to-one matching of hypothesised to reference boundaries.

    A hypothesis boundary ``h`` may match a reference boundary ``r`` with
    ``|h - r| <= tolerance``; each side is matched at most once. Greedy over the
    sorted lists (each hypothesis takes the leftmost free reference within reach)
    is optimal for this interval structure.

    >>> boundary_matches([3, 4], [3, 3, 4], tolerance=1)
    2
    """
    if tolerance < 0:
        raise ValueError(f"tolerance must be >= 0, got {tolerance}")
    ref = sorted(reference)
    j = matched = 0
    for h in sorted(hypothesis):
        while j < len(ref) and ref[j] < h - tolerance:
            j += 1
        if j < len(ref) and ref[j] <= h + tolerance:
            matched += 1
            j += 1
    return matched


def prf_from_counts(matched: int, hypothesised: int, reference: int) -> PRF:
    """P = matched / hypothesised, R = matched / reference, F1 their harmonic mean.

    An empty denominator gives 0.0 (so "no boundary" scores P = R = F1 = 0).

    >>> prf_from_counts(1, 2, 4)
    PRF(precision=0.5, recall=0.25, f1=0.3333333333333333)
    """
    p = matched / hypothesised if hypothesised else 0.0
    r = matched / reference if reference else 0.0
    f1 = 2 * p * r / (p + r) if p + r > 0 else 0.0
    return PRF(precision=p, recall=r, f1=f1)


def boundary_prf(reference: Sequence[int], hypothesis: Sequence[int], *, tolerance: int = 0) -> PRF:
    """Boundary P / R / F1 for one dialogue (see :func:`boundary_matches`)."""
    matched = boundary_matches(reference, hypothesis, tolerance=tolerance)
    return prf_from_counts(matched, len(hypothesis), len(reference))
