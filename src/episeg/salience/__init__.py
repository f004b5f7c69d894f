"""Salience: anchored 1-10 scores, once per episode, from an LLM or offline.

>>> from episeg.salience import AnchoredOfflineScorer, LLMSalienceScorer
>>> from episeg.testing import HashingEmbedder
>>> from episeg.typing import SalienceScorer
>>> isinstance(AnchoredOfflineScorer(HashingEmbedder(), anchors="coding"), SalienceScorer)
True
"""

from episeg.salience.anchors import ANCHOR_SETS, AnchorSet, anchor_set
from episeg.salience.calibration import CalibrationReport, calibration_report
from episeg.salience.llm import LLMSalienceScorer
from episeg.salience.offline import AnchoredOfflineScorer

__all__ = [
    "ANCHOR_SETS",
    "AnchorSet",
    "AnchoredOfflineScorer",
    "CalibrationReport",
    "LLMSalienceScorer",
    "anchor_set",
    "calibration_report",
]
