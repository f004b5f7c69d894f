"""Building a session's signals from the config, cheapest first.

>>> from episeg.config import EpisegConfig
>>> list(build_signals(EpisegConfig(), ALL_SIGNALS))
['marker', 'structural', 'window', 'semantic', 'drift']
>>> build_prediction(EpisegConfig(), judge=None, enabled=ALL_SIGNALS) is None
True
"""

from __future__ import annotations

from collections.abc import Callable, Set

from episeg.config import EpisegConfig, JudgeGate
from episeg.segmentation.signals.drift import GradualDrift
from episeg.segmentation.signals.marker import AgentMarker
from episeg.segmentation.signals.prediction import PredictionError
from episeg.segmentation.signals.semantic import SemanticShift
from episeg.segmentation.signals.structural import StructuralTurnType
from episeg.segmentation.signals.window import FixedWindow
from episeg.typing import Judge, Signal

__all__ = ["ALL_SIGNALS", "CHEAP_ORDER", "build_prediction", "build_signals"]

ALL_SIGNALS = frozenset({"marker", "structural", "window", "semantic", "drift", "prediction"})
CHEAP_ORDER = ("marker", "structural", "window", "semantic", "drift")


def build_signals(config: EpisegConfig, enabled: Set[str]) -> dict[str, Signal]:
    """Fresh cheap signals (all but prediction) named in ``enabled``, in cost order."""
    makers: dict[str, Callable[[], Signal]] = {
        "marker": AgentMarker,
        "structural": StructuralTurnType,
        "window": lambda: FixedWindow(
            max_turns=config.window_max_turns,
            max_seconds=config.window_max_seconds,
            hard_factor=config.window_hard_factor,
        ),
        "semantic": lambda: SemanticShift(
            threshold=config.semantic_threshold,
            decay=config.semantic_decay,
            min_turns=config.semantic_min_turns,
            min_words=config.semantic_min_words,
        ),
        "drift": lambda: GradualDrift(
            delta=config.drift_delta,
            threshold=config.drift_threshold,
            min_turns=config.semantic_min_turns,
        ),
    }
    return {name: makers[name]() for name in CHEAP_ORDER if name in enabled}


def build_prediction(
    config: EpisegConfig, *, judge: Judge | None, enabled: Set[str]
) -> PredictionError | None:
    """The gated prediction-error signal, or ``None`` when it is off or has no judge.

    The periodic cadence applies only when ``judge_gate`` is periodic or both.
    """
    if "prediction" not in enabled or judge is None:
        return None
    periodic = config.judge_gate in (JudgeGate.PERIODIC, JudgeGate.BOTH)
    return PredictionError(judge, every=config.judge_every if periodic else 0)
