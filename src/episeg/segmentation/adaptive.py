"""The learned combiner's relative rule: a turn whose logit stands out in its own episode.

:class:`AdaptiveThreshold` is read from a weights file's ``meta["adaptive"]``
(``episeg train segmenter`` writes it) and used by
:class:`~episeg.segmentation.learned.LearnedPolicy`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["AdaptiveThreshold"]


@dataclass(frozen=True)
class AdaptiveThreshold:
    """A turn also opens an episode when its logit stands out in its own episode.

    It fires when the logit is at least ``mean + g * std`` of the last
    ``window`` logits scored in the open episode (at least ``min_scores`` of
    them) and at least ``floor``. Only the open episode's scores count, so a
    session resumed from its checkpoint rebuilds the same history.

    >>> rule = AdaptiveThreshold(g=2.0, window=20, min_scores=3, floor=-1.25)
    >>> rule.fires(-1.0, [-3.0, -3.2, -2.8]), rule.fires(-1.0, [-3.0, -1.2])
    (True, False)
    """

    g: float
    window: int = 20
    min_scores: int = 3
    floor: float = -math.inf

    @classmethod
    def from_meta(
        cls, spec: Mapping[str, Any] | None, shift: float = 0.0
    ) -> AdaptiveThreshold | None:
        """The rule a weights file's ``meta["adaptive"]`` names (``None``: no rule).

        ``shift`` moves its floor (a configured threshold this far from the file's).
        """
        if not spec:
            return None
        return cls(
            g=float(spec["g"]),
            window=int(spec.get("window", 20)),
            min_scores=int(spec.get("min_scores", 3)),
            floor=float(spec.get("floor", -math.inf)) + shift,
        )

    def cut_at(self, scores: Sequence[float]) -> float | None:
        """The logit above which the rule fires after ``scores`` (``None``: too few)."""
        recent = np.asarray(list(scores)[-self.window :], dtype=np.float64)
        if len(recent) < self.min_scores:
            return None
        return max(float(recent.mean() + self.g * recent.std()), self.floor)

    def fires(self, logit: float, scores: Sequence[float]) -> bool:
        cut = self.cut_at(scores)
        return cut is not None and logit >= cut
