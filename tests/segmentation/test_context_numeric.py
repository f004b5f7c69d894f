"""A turn then its exact opposite leaves a squared norm a rounding error below 0 (F148).

``math.sqrt`` of it raised ``ValueError: math domain error`` in 39 of 2,000 random
cases; a vector that sums to nothing is a zero vector (distance 1.0).
"""

from __future__ import annotations

import numpy as np

from episeg.segmentation.features import EpisodeContext, TurnView, boundary_features


def test_a_turn_and_its_opposite_then_a_candidate_gives_finite_features() -> None:
    rng = np.random.default_rng(0)
    for _ in range(300):
        v = rng.normal(size=384).astype(np.float32)
        v = (v / np.linalg.norm(v)).astype(np.float64)
        context = EpisodeContext()
        context.commit(TurnView.make(v, "user", None, "some words"))
        context.commit(TurnView.make(-v, "user", None, "other words"))
        candidate = TurnView.make(rng.normal(size=384), "user", None, "a candidate")
        x, *_ = boundary_features(context, [candidate], lookahead=0, roles_known=True)
        assert np.isfinite(x).all()
