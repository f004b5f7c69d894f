"""Building a session's signals from the config, cheapest first.

>>> from episeg.config import EpisegConfig
>>> list(build_signals(EpisegConfig(), ALL_SIGNALS))
['marker', 'structural', 'window', 'semantic', 'drift']
>>> factory = SignalFactory(EpisegConfig(), {"window", "drift"})
>>> [type(s).__name__ for s in factory.build().values()]
['FixedWindow', 'GradualDrift']
>>> build_prediction(EpisegConfig(), judge=None, enabled=ALL_SIGNALS) is None
True
"""

from __future__ import annotations

from collections.abc import Callable, Set
from typing import Any

from episeg.config import EpisegConfig, JudgeGate
from episeg.segmentation.signals.drift import GradualDrift
from episeg.segmentation.signals.marker import AgentMarker
from episeg.segmentation.signals.prediction import PredictionError
from episeg.segmentation.signals.semantic import SemanticShift
from episeg.segmentation.signals.structural import StructuralTurnType
from episeg.segmentation.signals.window import FixedWindow
from episeg.types import SignalName
from episeg.typing import Judge, Signal

__all__ = ["ALL_SIGNALS", "CHEAP_ORDER", "SignalFactory", "build_prediction", "build_signals"]

ALL_SIGNALS: frozenset[SignalName] = frozenset(SignalName) - {SignalName.COMBINER}
"""The six signal names a :class:`~episeg.segmentation.Segmenter` can enable."""
CHEAP_ORDER = (
    SignalName.MARKER,
    SignalName.STRUCTURAL,
    SignalName.WINDOW,
    SignalName.SEMANTIC,
    SignalName.DRIFT,
)


class SignalFactory:
    """Builds a session's fresh cheap signals; the config is read once, not per session.

    Reading a section's keyword arguments walks ``dataclasses.fields``; a
    segmenter opens a session per conversation, so that walk is done here, once.
    """

    def __init__(self, config: EpisegConfig, enabled: Set[str]) -> None:
        window: dict[str, Any] = config.window.kwargs()
        semantic: dict[str, Any] = config.semantic.kwargs()
        drift: dict[str, Any] = config.drift.kwargs()
        makers: dict[SignalName, Callable[[], Signal]] = {
            SignalName.MARKER: AgentMarker,
            SignalName.STRUCTURAL: StructuralTurnType,
            SignalName.WINDOW: lambda: FixedWindow(**window),
            SignalName.SEMANTIC: lambda: SemanticShift(**semantic),
            SignalName.DRIFT: lambda: GradualDrift(**drift),
        }
        self._makers = [(n.value, makers[n]) for n in CHEAP_ORDER if n in enabled]

    def build(self) -> dict[str, Signal]:
        """Fresh signals named in ``enabled``, in cost order."""
        return {name: make() for name, make in self._makers}


def build_signals(config: EpisegConfig, enabled: Set[str]) -> dict[str, Signal]:
    """Fresh cheap signals (all but prediction) named in ``enabled``, in cost order."""
    return SignalFactory(config, enabled).build()


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
