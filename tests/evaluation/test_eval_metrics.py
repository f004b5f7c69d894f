"""Pk, WindowDiff and boundary F1: hand-computed cases and agreement with segeval and nltk."""

from __future__ import annotations

import pytest
import segeval
from hypothesis import given, settings
from hypothesis import strategies as st

from episeg.evaluation.metrics import (
    SegmentationError,
    boundaries_to_masses,
    boundary_matches,
    boundary_prf,
    masses_to_boundaries,
    pk,
    window_diff,
    window_size,
)
from tests.property_budget import examples


def nltk_pk(ref: str, hyp: str, k: int) -> float:
    """nltk's Pk, imported on first use (importing nltk costs ~1.5 s of every collection)."""
    from nltk.metrics.segmentation import pk

    return float(pk(ref, hyp, k=k))


def nltk_windowdiff(ref: str, hyp: str, k: int) -> float:
    """nltk's WindowDiff, imported on first use."""
    from nltk.metrics.segmentation import windowdiff

    return float(windowdiff(ref, hyp, k))


@st.composite
def segmentation_pair(draw: st.DrawFn) -> tuple[int, list[int], list[int]]:
    n = draw(st.integers(min_value=2, max_value=60))
    gaps = st.lists(st.integers(min_value=1, max_value=n - 1), unique=True, max_size=n - 1)
    return n, sorted(draw(gaps)), sorted(draw(gaps))


def _gap_string(boundaries: list[int], n: int) -> str:
    """nltk's format: one character per inter-turn gap, '1' where a turn opens a segment."""
    return "".join("1" if i in boundaries else "0" for i in range(1, n))


class TestHandComputed:
    def test_perfect_and_empty(self) -> None:
        assert pk([2, 5], [2, 5], n=8) == 0.0
        assert window_diff([2, 5], [2, 5], n=8) == 0.0

    def test_missed_boundary(self) -> None:
        # n=6, ref [3]: k = round(3 / 2) = 2; probes (0,2)..(3,5): 4 probes.
        # Ref crosses a boundary for i = 1, 2; hypothesis [] never does -> 2 / 4.
        assert pk([3], [], n=6) == 0.5
        assert window_diff([3], [], n=6) == 0.5

    def test_near_miss_costs_less_than_a_miss(self) -> None:
        # hyp [2]: probes i=0 (ref 0, hyp 1) and i=2 (ref 1, hyp 0) disagree -> 2 / 4.
        assert pk([3], [2], n=6) == 0.5
        # n=20, ref [10]: k = 5. A miss errs on 5 probes, a near miss by one turn on 2.
        assert pk([10], [], n=20) == 5 / 15
        assert pk([10], [9], n=20) == 2 / 15

    def test_windowdiff_counts_extra_boundaries_pk_does_not(self) -> None:
        # Two hyp boundaries inside one window where ref has one: Pk agrees, WD does not.
        assert pk([3], [2, 3], n=6) == 0.25
        assert window_diff([3], [2, 3], n=6) == 0.5

    def test_window_size_rounds_half_to_even_with_floor(self) -> None:
        assert window_size([5], 10) == 2  # mean 5 -> 2.5 -> 2
        assert window_size([7], 14) == 4  # mean 7 -> 3.5 -> 4
        assert window_size([1, 2, 3], 4) == 1  # mean 1 -> 0.5 -> 0 -> floor 1
        assert window_size([], 9) == 4  # one segment: round(9 / 2)

    def test_one_turn_dialogue_scores_zero(self) -> None:
        assert pk([], [], n=1) == 0.0
        assert window_diff([], [], n=1) == 0.0

    def test_masses_round_trip(self) -> None:
        assert boundaries_to_masses([2, 5], 7) == [2, 3, 2]
        assert masses_to_boundaries([2, 3, 2]) == [2, 5]

    @pytest.mark.parametrize("bad", [[3, 2], [2, 2], [0, 3], [3, 7]])
    def test_invalid_boundaries_raise(self, bad: list[int]) -> None:
        with pytest.raises(SegmentationError):
            pk(bad, [], n=7)


class TestBoundaryF1:
    def test_exact_and_tolerant(self) -> None:
        prf = boundary_prf([4, 8], [4, 9, 12], tolerance=0)
        assert (prf.precision, prf.recall) == (1 / 3, 1 / 2)
        tol = boundary_prf([4, 8], [4, 9, 12], tolerance=1)
        assert (tol.precision, tol.recall) == (2 / 3, 1.0)
        assert tol.f1 == pytest.approx(0.8)

    def test_each_gold_matched_at_most_once(self) -> None:
        assert boundary_matches([5], [4, 5, 6], tolerance=1) == 1
        assert boundary_matches([4, 5], [5], tolerance=1) == 1

    def test_greedy_finds_maximum_matching(self) -> None:
        # hyp 5 could take gold 4 or 6; hyp 7 only 6: both must match.
        assert boundary_matches([4, 6], [5, 7], tolerance=1) == 2

    def test_empty_hypothesis_scores_zero(self) -> None:
        assert boundary_prf([3], [], tolerance=1).f1 == 0.0


class TestAgainstReferenceImplementations:
    @settings(max_examples=examples(200), deadline=None)
    @given(segmentation_pair())
    def test_pk_equals_segeval_with_explicit_window(
        self, case: tuple[int, list[int], list[int]]
    ) -> None:
        n, ref, hyp = case
        k = window_size(ref, n)
        expected = float(
            segeval.pk(boundaries_to_masses(hyp, n), boundaries_to_masses(ref, n), window_size=k)
        )
        assert pk(ref, hyp, n=n) == pytest.approx(expected, abs=1e-12)

    @settings(max_examples=examples(200), deadline=None)
    @given(segmentation_pair())
    def test_windowdiff_equals_segeval(self, case: tuple[int, list[int], list[int]]) -> None:
        n, ref, hyp = case
        k = window_size(ref, n)
        expected = float(
            segeval.window_diff(
                boundaries_to_masses(hyp, n), boundaries_to_masses(ref, n), window_size=k
            )
        )
        assert window_diff(ref, hyp, n=n) == pytest.approx(expected, abs=1e-12)

    @settings(max_examples=examples(200), deadline=None)
    @given(segmentation_pair())
    def test_equal_to_nltk_over_gaps(self, case: tuple[int, list[int], list[int]]) -> None:
        n, ref, hyp = case
        k = window_size(ref, n)
        r, h = _gap_string(ref, n), _gap_string(hyp, n)
        assert pk(ref, hyp, n=n) == pytest.approx(nltk_pk(r, h, k), abs=1e-12)
        assert window_diff(ref, hyp, n=n) == pytest.approx(nltk_windowdiff(r, h, k), abs=1e-12)

    @settings(max_examples=examples(150), deadline=None)
    @given(segmentation_pair())
    def test_segeval_default_window_is_ours_with_floor_two(
        self, case: tuple[int, list[int], list[int]]
    ) -> None:
        # segeval's default window uses the same rounding but never goes below 2.
        n, ref, hyp = case
        masses_ref, masses_hyp = boundaries_to_masses(ref, n), boundaries_to_masses(hyp, n)
        assert window_size(ref, n, min_window=2) == segeval.compute_window_size(masses_ref)
        assert pk(ref, hyp, n=n, min_window=2) == pytest.approx(
            float(segeval.pk(masses_hyp, masses_ref)), abs=1e-12
        )
