"""A running mean of unit vectors with optional recency decay (shared by signals 2).

>>> import numpy as np
>>> mean = RunningMean(decay=0.5)
>>> mean.distance(np.array([1.0, 0.0]))  # empty: no evidence
0.0
>>> mean.add(np.array([1.0, 0.0])); mean.add(np.array([0.0, 1.0]))
>>> round(mean.distance(np.array([0.0, 1.0])), 4)
0.2929
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["RunningMean"]


class RunningMean:
    """Exponentially decayed mean (``decay`` = weight kept by the old mean).

    ``decay=None`` keeps the plain cumulative mean. The mean only ever holds
    turns added *before* the one being measured.
    """

    def __init__(self, *, decay: float | None) -> None:
        if decay is not None and not 0.0 <= decay < 1.0:
            raise ValueError(f"decay must be in [0, 1) or None, got {decay}")
        self._decay = decay
        self._mean: np.ndarray | None = None
        self.count = 0

    def add(self, vector: np.ndarray) -> None:
        vector = np.asarray(vector, dtype=np.float64)
        self.count += 1
        if self._mean is None:
            self._mean = vector.copy()
        elif self._decay is None:
            self._mean += (vector - self._mean) / self.count
        else:  # in place, the same arithmetic as decay * mean + (1 - decay) * vector
            self._mean *= self._decay
            self._mean += (1.0 - self._decay) * vector

    def distance(self, vector: np.ndarray) -> float:
        """Cosine distance of ``vector`` to the mean, 0.0 while empty."""
        if self._mean is None:
            return 0.0
        # sqrt(x . x) in x's own dtype is what np.linalg.norm computes for a 1-d vector.
        norm = math.sqrt(float(self._mean @ self._mean)) * float(np.sqrt(vector.dot(vector)))
        if norm == 0.0:
            return 1.0
        # Rounded so that float noise between batched and single embeddings
        # cannot flip a threshold comparison by a last-bit difference.
        return round(1.0 - float(np.dot(self._mean, vector)) / norm, 6)

    def clear(self) -> None:
        self._mean = None
        self.count = 0
