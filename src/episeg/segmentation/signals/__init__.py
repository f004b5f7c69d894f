"""The five boundary signals, each a small class with ``update(turn) -> Verdict``.

Cheapest first: :class:`AgentMarker` (5), :class:`StructuralTurnType` (4, with the
user's announced topic pivot, :func:`topic_pivot`),
:class:`FixedWindow` (1), :class:`SemanticShift` and :class:`GradualDrift` (2),
:class:`PredictionError` (3, judge-backed and gated).
"""

from episeg.segmentation.signals.drift import GradualDrift
from episeg.segmentation.signals.factory import ALL_SIGNALS, build_prediction, build_signals
from episeg.segmentation.signals.marker import AgentMarker, scan_markers
from episeg.segmentation.signals.prediction import PredictionError
from episeg.segmentation.signals.semantic import SemanticShift
from episeg.segmentation.signals.structural import (
    PIVOT_PHRASES,
    PIVOT_REASON,
    StructuralTurnType,
    infer_turn_type,
    topic_pivot,
)
from episeg.segmentation.signals.window import FixedWindow

__all__ = [
    "ALL_SIGNALS",
    "PIVOT_PHRASES",
    "PIVOT_REASON",
    "AgentMarker",
    "FixedWindow",
    "GradualDrift",
    "PredictionError",
    "SemanticShift",
    "StructuralTurnType",
    "build_prediction",
    "build_signals",
    "infer_turn_type",
    "scan_markers",
    "topic_pivot",
]
