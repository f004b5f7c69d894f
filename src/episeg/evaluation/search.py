"""Grid search: evaluate a configuration at every grid point, best by Pk (lower is better).

Ties in Pk go to WindowDiff, then to the earlier grid point.

>>> from episeg.evaluation.datasets import Dialogue
>>> from episeg.evaluation.baselines import make_baseline
>>> from episeg.types import Turn
>>> turns = [Turn(actor="user", text=str(i), ts=30.0 * i) for i in range(12)]
>>> gold = [Dialogue(id="d", source="demo", turns=turns, boundaries=[3, 6, 9])]
>>> best = grid_search(gold, lambda p: make_baseline("even", every=p["every"]),
...                    {"every": [2, 3, 4]}, name="even")
>>> best.best, best.best_result.pk
({'every': 3}, 0.0)
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from episeg.errors import ConfigError
from episeg.evaluation.baselines import SegmentFn
from episeg.evaluation.datasets import Dialogue
from episeg.evaluation.results import EvalResult, evaluate

__all__ = ["TuneResult", "grid_search"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class TuneResult:
    """Every grid point's result and the best one by (Pk, WindowDiff)."""

    name: str
    best: dict[str, Any]
    best_result: EvalResult
    trials: list[tuple[dict[str, Any], EvalResult]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "best": self.best,
            "best_result": self.best_result.to_dict(),
            "trials": [{"params": p, **r.to_dict()} for p, r in self.trials],
        }


def grid_search(
    dialogues: Sequence[Dialogue],
    factory: Callable[[dict[str, Any]], SegmentFn],
    grid: Mapping[str, Sequence[Any]],
    *,
    name: str,
    dataset: str = "",
) -> TuneResult:
    """Evaluate ``factory(params)`` at every point of ``grid`` on ``dialogues``."""
    if not grid or any(len(v) == 0 for v in grid.values()):
        raise ConfigError(f"grid must name at least one value per key, got {dict(grid)}")
    keys = list(grid)
    trials: list[tuple[dict[str, Any], EvalResult]] = []
    for values in itertools.product(*(grid[k] for k in keys)):
        params = dict(zip(keys, values, strict=True))
        label = f"{name}[{', '.join(f'{k}={v}' for k, v in params.items())}]"
        result = evaluate(dialogues, factory(params), label, dataset=dataset)
        log.info("%s: Pk %.4f WD %.4f", label, result.pk, result.window_diff)
        trials.append((params, result))
    best_params, best = min(trials, key=lambda t: (t[1].pk, t[1].window_diff))
    return TuneResult(name=name, best=best_params, best_result=best, trials=trials)
