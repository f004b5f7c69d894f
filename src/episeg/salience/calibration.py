"""Calibration report over a batch of saliences: is the 1-10 scale used, or clustered?

The seed's warning: unanchored ratings pile up at 6-8 and the importance term
stops informing recall. ``share_6_8`` and the histogram show it at a glance.

>>> from episeg.salience import calibration_report
>>> from episeg.types import Salience
>>> items = [Salience.scored(s, scorer="x") for s in (1, 2, 7, 7, 10)]
>>> report = calibration_report([*items, Salience.unscored("timeout", scorer="x")])
>>> report.histogram, report.mean, report.share_6_8, report.share_unscored
((1, 1, 0, 0, 0, 0, 2, 0, 0, 1), 5.4, 0.4, 0.16666666666666666)
>>> print(report.render().splitlines()[0])
salience calibration: 6 episodes, 5 scored, 1 unscored
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from episeg.types import Salience

__all__ = ["CalibrationReport", "calibration_report"]

CLUSTER_WARNING_SHARE = 0.6


@dataclass(frozen=True)
class CalibrationReport:
    """Summary of a batch of saliences.

    ``histogram[i]`` counts score ``i + 1``; ``mean``/``std`` (population) are
    over scored episodes and ``None`` when none is scored; shares are of all
    episodes for ``share_unscored`` and of scored ones for ``share_6_8``.
    """

    total: int
    scored: int
    histogram: tuple[int, ...]
    mean: float | None
    std: float | None
    share_6_8: float
    share_unscored: float

    @property
    def clustered(self) -> bool:
        """More than 60% of scored episodes in 6-8: the anchors are not doing their job."""
        return self.scored > 0 and self.share_6_8 > CLUSTER_WARNING_SHARE

    def to_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "scored": self.scored,
            "histogram": list(self.histogram),
            "mean": self.mean,
            "std": self.std,
            "share_6_8": self.share_6_8,
            "share_unscored": self.share_unscored,
            "clustered": self.clustered,
        }

    def render(self, *, width: int = 40) -> str:
        """A text report with one bar per score, for the CLI."""
        if width < 1:
            raise ValueError(f"width must be >= 1, got {width}")
        lines = [
            f"salience calibration: {self.total} episodes, {self.scored} scored, "
            f"{self.total - self.scored} unscored"
        ]
        peak = max(self.histogram) or 1
        for score, count in enumerate(self.histogram, start=1):
            bar = "#" * round(width * count / peak)
            lines.append(f"{score:>3} | {bar:<{width}} {count}")
        if self.mean is not None and self.std is not None:
            lines.append(
                f"mean {self.mean:.2f}  std {self.std:.2f}  "
                f"share in 6-8 {self.share_6_8:.0%}  unscored {self.share_unscored:.0%}"
            )
        if self.clustered:
            lines.append("warning: scores cluster at 6-8; check the anchor set")
        return "\n".join(lines)


def calibration_report(saliences: Iterable[Salience]) -> CalibrationReport:
    """Histogram 1-10, mean, std, share in 6-8 and share unscored of ``saliences``."""
    items = list(saliences)
    scores = [s.score for s in items if s.score is not None]
    histogram = [0] * 10
    for value in scores:
        histogram[value - 1] += 1
    mean = std = None
    if scores:
        mean = sum(scores) / len(scores)
        std = math.sqrt(sum((v - mean) ** 2 for v in scores) / len(scores))
    return CalibrationReport(
        total=len(items),
        scored=len(scores),
        histogram=tuple(histogram),
        mean=mean,
        std=std,
        share_6_8=(sum(histogram[5:8]) / len(scores)) if scores else 0.0,
        share_unscored=(len(items) - len(scores)) / len(items) if items else 0.0,
    )
