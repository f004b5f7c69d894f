"""episeg: episodic memory for AI agents.

Segment a live turn stream into episodes, score salience once per episode,
store per user in Chroma, recall with a recency + importance + similarity
rerank reinforced by use.

>>> import episeg
>>> episeg.Turn(actor="user", text="hello", ts=0).actor
<Actor.USER: 'user'>
"""

from episeg.config import EpisegConfig, JudgeGate
from episeg.errors import (
    BackendUnavailableError,
    ConfigError,
    EpisegError,
    JournalError,
    JudgeError,
    ScoringError,
    StoreError,
    StoreUnavailableError,
    TenantError,
    TurnValidationError,
)
from episeg.interfaces.transcript import iter_turns, read_transcript, write_transcript
from episeg.memory import Memory
from episeg.segmentation import ALL_SIGNALS, Segmenter, Step
from episeg.types import Actor, Decision, Episode, Salience, Turn, TurnType, Verdict

__version__ = "0.1.0"

__all__ = [
    "ALL_SIGNALS",
    "Actor",
    "BackendUnavailableError",
    "ConfigError",
    "Decision",
    "EpisegConfig",
    "EpisegError",
    "Episode",
    "JournalError",
    "JudgeError",
    "JudgeGate",
    "Memory",
    "Salience",
    "ScoringError",
    "Segmenter",
    "Step",
    "StoreError",
    "StoreUnavailableError",
    "TenantError",
    "Turn",
    "TurnType",
    "TurnValidationError",
    "Verdict",
    "iter_turns",
    "read_transcript",
    "write_transcript",
]
