"""The string enums of episeg; each ``parse`` accepts a member or its value, any case.

A bad value raises an :class:`~episeg.errors.InvalidEnumValue` naming the
valid ones (a turn field's enum: an :class:`~episeg.errors.InvalidTurnEnum`,
also a ``TurnValidationError``; a configuration enum: an
:class:`~episeg.errors.InvalidConfigEnum`).

>>> JudgeGate.parse(" Periodic "), Decision.parse("new")
(<JudgeGate.PERIODIC: 'periodic'>, <Decision.BOUNDARY: 'boundary'>)
>>> TurnType.parse("tool-crash")
Traceback (most recent call last):
...
episeg.errors.InvalidTurnEnum: unknown turn type 'tool-crash'; valid: user-question, ...
"""

from __future__ import annotations

from enum import StrEnum
from typing import TypeVar

from episeg.errors import InvalidConfigEnum, InvalidEnumValue, InvalidTurnEnum

__all__ = ["Actor", "Decision", "EmbedderBackend", "JudgeGate", "SignalName", "TurnType"]

_E = TypeVar("_E", bound="_ParsableEnum")


class _ParsableEnum(StrEnum):
    """A string enum whose :meth:`parse` names the valid values on error."""

    @classmethod
    def parse(cls: type[_E], value: object) -> _E:
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            try:
                return cls(value.strip().lower())
            except ValueError:
                pass
        valid = tuple(member.value for member in cls)
        raise cls._error()(f"unknown {cls._label()} {value!r}", value=value, valid=valid)

    @classmethod
    def _label(cls) -> str:
        return cls.__name__.lower()

    @classmethod
    def _error(cls) -> type[InvalidEnumValue]:
        """The error :meth:`parse` raises (a turn field's enum: a ``TurnValidationError``)."""
        return InvalidEnumValue

    def __str__(self) -> str:
        return str(self.value)


class Actor(_ParsableEnum):
    """Who produced a turn."""

    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    SYSTEM = "system"

    @classmethod
    def _error(cls) -> type[InvalidEnumValue]:
        return InvalidTurnEnum


class TurnType(_ParsableEnum):
    """Structural turn types emitted by an agent harness (seed signal 4)."""

    USER_QUESTION = "user-question"
    USER_CORRECTION = "user-correction"
    ASSISTANT_ANSWER = "assistant-answer"
    TOOL_CALL = "tool-call"
    TOOL_ERROR = "tool-error"
    TOOL_SUCCESS = "tool-success"
    SYSTEM_EVENT = "system-event"

    @classmethod
    def _label(cls) -> str:
        return "turn type"

    @classmethod
    def _error(cls) -> type[InvalidEnumValue]:
        return InvalidTurnEnum


class SignalName(_ParsableEnum):
    """The names of the five boundary signals (drift is signal 2's cumulative half).

    ``COMBINER`` names the combiner's own verdict. :attr:`Verdict.signal` holds
    the plain string value.
    """

    MARKER = "marker"
    STRUCTURAL = "structural"
    WINDOW = "window"
    SEMANTIC = "semantic"
    DRIFT = "drift"
    PREDICTION = "prediction"
    COMBINER = "combiner"

    @classmethod
    def _label(cls) -> str:
        return "signal"

    @classmethod
    def _error(cls) -> type[InvalidEnumValue]:
        return InvalidConfigEnum


class JudgeGate(_ParsableEnum):
    """When the prediction-error judge is consulted (``EpisegConfig.judge.gate``).

    ``ambiguous``: only when the cheap signals' combined evidence falls in the
    ambiguity band; ``periodic``: every ``judge.every`` turns (the seed's
    cadence); ``both``: either; ``never``: the judge is not asked.
    """

    AMBIGUOUS = "ambiguous"
    PERIODIC = "periodic"
    BOTH = "both"
    NEVER = "never"

    @classmethod
    def _label(cls) -> str:
        return "judge_gate"

    @classmethod
    def _error(cls) -> type[InvalidEnumValue]:
        return InvalidConfigEnum


class EmbedderBackend(_ParsableEnum):
    """Which runtime runs the bundled MiniLM (``EpisegConfig.embedding.backend``).

    ``onnx``: ONNX Runtime on a graph exported once from the packaged weights
    and cached (:class:`~episeg.embedders.OnnxMiniLMEmbedder`; ~3x torch's
    speed one turn at a time on a 2-core CPU); ``torch``: sentence-transformers
    (:class:`~episeg.embedders.MiniLMEmbedder`). The vectors agree within
    1e-5 cosine.

    >>> EmbedderBackend.parse("TORCH"), str(EmbedderBackend.ONNX)
    (<EmbedderBackend.TORCH: 'torch'>, 'onnx')
    """

    ONNX = "onnx"
    TORCH = "torch"

    @classmethod
    def _label(cls) -> str:
        return "embedding backend"

    @classmethod
    def _error(cls) -> type[InvalidEnumValue]:
        return InvalidConfigEnum


class Decision(_ParsableEnum):
    """What a signal (or the combiner) says about the turn it just saw.

    ``BOUNDARY`` and ``SUB_EPISODE`` mean the turn *opens* a new episode; the
    previous episode ends with the turn before it.
    """

    CONTINUE = "continue"
    BOUNDARY = "boundary"
    SUB_EPISODE = "sub-episode"
    ABSTAIN = "abstain"

    @classmethod
    def _missing_(cls, value: object) -> Decision | None:
        # "new" is the seed's word for a boundary in judge answers.
        return cls.BOUNDARY if value == "new" else None

    @property
    def opens_episode(self) -> bool:
        return self in (Decision.BOUNDARY, Decision.SUB_EPISODE)
