"""Recall: rank a tenant's episodes for a query, reinforce what is used, decay the rest.

``rerank`` holds :class:`Recaller` (recency + importance + similarity) and
``forgetting`` the MemoryBank-style strength curve and the maintenance pass.
"""

from episeg.recall.forgetting import (
    MaintenanceReport,
    age_days,
    decayed_strength,
    maintain,
    reinforce,
    retention,
)
from episeg.recall.rerank import Clock, Recaller, feedback, rerank

__all__ = [
    "Clock",
    "MaintenanceReport",
    "Recaller",
    "age_days",
    "decayed_strength",
    "feedback",
    "maintain",
    "reinforce",
    "rerank",
    "retention",
]
