"""Durability: nothing accepted is lost to a crash or a store outage.

``journal`` commits every accepted turn (SQLite, WAL) with the judge's answer
the segmenter recorded on it (a replay never asks again), ``outbox`` writes closed episodes
and keeps failed writes for a retry, ``recovery`` replays the journal at start-up.
"""

from episeg.durability.journal import Journal, JournaledSession
from episeg.durability.outbox import PendingWriter
from episeg.durability.recovery import RecoveryReport, recover, replay

__all__ = [
    "Journal",
    "JournaledSession",
    "JudgeTap",
    "PendingWriter",
    "RecoveryReport",
    "recover",
    "replay",
]
