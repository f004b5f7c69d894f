"""Durability: nothing accepted is lost to a crash or a store outage.

``journal`` commits every accepted turn (SQLite, WAL) with the judge's answer
the segmenter recorded on it (a replay never asks again), ``outbox`` writes closed
episodes and keeps failed writes for a retry, ``recovery`` replays the journal at
start-up, ``sessions`` keeps each tenant's live state behind its own lock and drops
idle sessions (the journal rebuilds them), ``ids`` makes episode ids unique across
processes sharing one store.
"""

from episeg.durability.journal import Journal, JournaledSession
from episeg.durability.outbox import PendingWriter
from episeg.durability.recovery import RecoveryReport, recover, replay
from episeg.durability.sessions import SessionPool

__all__ = [
    "Journal",
    "JournaledSession",
    "PendingWriter",
    "RecoveryReport",
    "SessionPool",
    "recover",
    "replay",
]
