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
from episeg.types import SignalName
from episeg.typing import Judge, Signal

__all__ = ["ALL_SIGNALS", "CHEAP_ORDER", "build_prediction", "build_signals"]

ALL_SIGNALS: frozenset[SignalName] = frozenset(SignalName) - {SignalName.COMBINER}
"""The six signal names a :class:`~episeg.segmentation.Segmenter` can enable."""
CHEAP_ORDER = (
    SignalName.MARKER,
    SignalName.STRUCTURAL,
    SignalName.WINDOW,
    SignalName.SEMANTIC,
    SignalName.DRIFT,
)


def build_signals(config: EpisegConfig, enabled: Set[str]) -> dict[str, Signal]:
    """Fresh cheap signals (all but prediction) named in ``enabled``, in cost order."""
    makers: dict[SignalName, Callable[[], Signal]] = {
        SignalName.MARKER: AgentMarker,
        SignalName.STRUCTURAL: StructuralTurnType,
        SignalName.WINDOW: lambda: FixedWindow(**config.window.kwargs()),
        SignalName.SEMANTIC: lambda: SemanticShift(**config.semantic.kwargs()),
        SignalName.DRIFT: lambda: GradualDrift(**config.drift.kwargs()),
    }
    return {name.value: makers[name]() for name in CHEAP_ORDER if name in enabled}


def build_prediction(
    config: EpisegConfig, *, judge: Judge | None, enabled: Set[str]
) -> PredictionError | None:
    """The gated prediction-error signal, or ``None`` when it is off or has no judge.

    The periodic cadence applies only when ``judge.gate`` is periodic or both.
    """
    if SignalName.PREDICTION not in enabled or judge is None:
        return None
    periodic = config.judge.gate in (JudgeGate.PERIODIC, JudgeGate.BOTH)
    return PredictionError(judge, every=config.judge.every if periodic else 0)
