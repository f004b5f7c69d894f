"""Core data types: :class:`Turn`, :class:`Verdict`, :class:`Episode`, :class:`Salience`.

Enums accept a member or its string value and name the valid values on error:

>>> from episeg.types import Actor, Turn, TurnType
>>> Actor.parse("assistant")
<Actor.ASSISTANT: 'assistant'>
>>> Actor.parse("robot")
Traceback (most recent call last):
...
episeg.errors.InvalidTurnEnum: unknown actor 'robot'; valid: user, assistant, tool, system
>>> SignalName.parse("semantic"), isinstance(SignalName.SEMANTIC, str)
(<SignalName.SEMANTIC: 'semantic'>, True)
>>> t = Turn(actor="user", text="why is auth returning 401?", ts=0.0)
>>> t.actor, t.type
(<Actor.USER: 'user'>, None)
"""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from episeg.errors import InvalidConfigEnum, InvalidEnumValue, InvalidTurnEnum, TurnValidationError

__all__ = [
    "MAX_TS",
    "Actor",
    "Decision",
    "EmbedderBackend",
    "Episode",
    "JudgeAnswer",
    "JudgeGate",
    "ObservedTurn",
    "Salience",
    "ScoredEpisode",
    "SignalName",
    "Turn",
    "TurnType",
    "Verdict",
    "iso_time",
]

_E = TypeVar("_E", bound="_ParsableEnum")
MAX_TS = 1e11
"""Largest ``|Turn.ts|`` accepted: seconds up to the year 5138 (milliseconds exceed it)."""
_FORBIDDEN_IN_NAMES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


def _is_utf8(text: str) -> bool:
    """Whether ``text`` encodes to UTF-8 (no lone surrogates, e.g. from ``surrogateescape``)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _check_name(name: str, value: str | None) -> None:
    """Refuse control, format and surrogate characters in a session or turn id.

    Ids are joined with ``\\x1f`` into episode ids, and SQLite and Chroma
    store UTF-8 only, so such characters could make two episodes share an id
    or leave a journal transaction half done.
    """
    if value is None:
        return
    for ch in value:
        if unicodedata.category(ch) in _FORBIDDEN_IN_NAMES:
            raise TurnValidationError(
                f"{name} {value!r} contains {ch!r}: control, format and surrogate "
                "characters are not allowed in ids"
            )


def iso_time(ts: float) -> str:
    """Seconds since the epoch as an ISO 8601 UTC date-time, to the second.

    A time outside the calendar's range (years 1-9999) is written as the raw
    number of seconds instead.

    >>> iso_time(1683554160.0), iso_time(1e300)
    ('2023-05-08T13:56:00Z', '1e+300s')
    """
    try:
        return datetime.fromtimestamp(round(ts), tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, ValueError, OSError):
        return f"{ts!r}s"


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


@dataclass(frozen=True, slots=True)
class Turn:
    """One conversation turn, as the harness hands it over.

    ``ts`` is seconds since the epoch (any monotonic clock works as long as
    one session uses one clock). ``id`` makes ingestion idempotent; the
    segmenter assigns ``"<session>:<seq>"`` when it is absent.
    """

    actor: Actor
    text: str
    ts: float
    type: TurnType | None = None
    id: str | None = None
    user: str = "default"
    session: str = "default"

    if TYPE_CHECKING:  # the constructor takes enum values as strings too (parsed below)

        def __init__(
            self,
            actor: Actor | str,
            text: str,
            ts: float,
            type: TurnType | str | None = None,
            id: str | None = None,
            user: str = "default",
            session: str = "default",
        ) -> None: ...

    def __post_init__(self) -> None:
        object.__setattr__(self, "actor", Actor.parse(self.actor))
        if self.type is not None:
            object.__setattr__(self, "type", TurnType.parse(self.type))
        if not isinstance(self.text, str):
            raise TurnValidationError(f"text must be a string, got {type(self.text).__name__}")
        if isinstance(self.ts, bool) or not isinstance(self.ts, int | float):
            raise TurnValidationError(f"ts must be a number, got {type(self.ts).__name__}")
        try:
            ts = float(self.ts)
        except OverflowError:
            raise TurnValidationError("ts is too large to be a time in seconds") from None
        if not math.isfinite(ts):
            raise TurnValidationError(f"ts must be finite, got {self.ts!r}")
        if abs(ts) > MAX_TS:
            raise TurnValidationError(
                f"ts {self.ts!r} is not a time in seconds (|ts| <= {MAX_TS:.0e}, year 5138; "
                "milliseconds by mistake?)"
            )
        object.__setattr__(self, "ts", ts)
        for name in ("user", "session"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise TurnValidationError(f"{name} must be a non-empty string, got {value!r}")
        if self.id is not None and (not isinstance(self.id, str) or not self.id):
            raise TurnValidationError(f"id must be a non-empty string, got {self.id!r}")
        for name in ("session", "id"):
            _check_name(name, getattr(self, name))
        if not _is_utf8(self.text):
            raise TurnValidationError(
                "text contains a lone surrogate (undecodable input?); it cannot be stored as UTF-8"
            )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict that :meth:`from_dict` reads back."""
        out: dict[str, Any] = {"actor": self.actor.value, "text": self.text, "ts": self.ts}
        if self.type is not None:
            out["type"] = self.type.value
        if self.id is not None:
            out["id"] = self.id
        out["user"] = self.user
        out["session"] = self.session
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Turn:
        """Build a turn from a dict, rejecting unknown keys and missing fields."""
        allowed = {"actor", "text", "ts", "type", "id", "user", "session"}
        unknown = sorted(set(data) - allowed)
        if unknown:
            raise TurnValidationError(f"unknown field(s) {unknown}; valid: {sorted(allowed)}")
        for required in ("actor", "text", "ts"):
            if required not in data:
                raise TurnValidationError(f"missing required field {required!r}")
        return cls(**data)


@dataclass(frozen=True, slots=True)
class ObservedTurn:
    """A turn as the signals see it: cleaned text, its embedding and position.

    ``text`` has agent markers stripped; ``markers`` lists the ones found.
    """

    turn: Turn
    text: str
    embedding: np.ndarray = field(repr=False, compare=False)
    position: int
    inferred_type: TurnType
    markers: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Verdict:
    """One signal's frozen answer about one turn.

    ``score`` is the strength of the evidence in [0, 1] (1 = certain);
    ``authoritative`` verdicts are obeyed by the combiner without weighing.
    """

    signal: str
    decision: Decision
    score: float = 0.0
    reason: str = ""
    authoritative: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.signal, SignalName):  # keep the plain string value
            object.__setattr__(self, "signal", self.signal.value)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; ``score`` is exact (rounding is for display only)."""
        return {
            "signal": self.signal,
            "decision": self.decision.value,
            "score": float(self.score),
            "reason": self.reason,
            "authoritative": self.authoritative,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Verdict:
        return cls(
            signal=str(data["signal"]),
            decision=Decision.parse(data["decision"]),
            score=float(data.get("score", 0.0)),
            reason=str(data.get("reason", "")),
            authoritative=bool(data.get("authoritative", False)),
        )


@dataclass(frozen=True, slots=True)
class Salience:
    """An episode's salience: the 1-10 integer, its [0, 1] form, and provenance.

    ``score`` is ``None`` when the episode is *unscored*: the scorer failed and
    ``reason`` says why. Nothing ever defaults silently to 5.

    >>> Salience.scored(10, scorer="anchored").normalized
    1.0
    >>> Salience.unscored("judge timed out", scorer="anthropic").normalized is None
    True
    """

    score: int | None
    scorer: str
    reason: str = ""

    def __post_init__(self) -> None:
        if self.score is not None and (
            isinstance(self.score, bool)
            or not isinstance(self.score, int)
            or not 1 <= self.score <= 10
        ):
            raise ValueError(f"salience score must be an integer 1-10 or None, got {self.score!r}")

    @classmethod
    def scored(cls, score: int, *, scorer: str, reason: str = "") -> Salience:
        return cls(score=score, scorer=scorer, reason=reason)

    @classmethod
    def unscored(cls, reason: str, *, scorer: str) -> Salience:
        return cls(score=None, scorer=scorer, reason=reason)

    @property
    def is_scored(self) -> bool:
        return self.score is not None

    @property
    def normalized(self) -> float | None:
        """(score - 1) / 9, so 1 maps to 0.0 and 10 to 1.0."""
        return None if self.score is None else (self.score - 1) / 9.0


@dataclass(frozen=True, slots=True)
class Episode:
    """A closed run of turns, the unit that is scored, stored and recalled.

    ``boundary_verdicts`` are the verdicts that opened this episode (empty for
    the first episode of a session) and ``closing_verdicts`` those that closed
    it, so a mis-fire can be traced to the signal behind it. ``embedding`` is
    the normalised mean of the turn vectors and ``turn_embeddings`` (optional,
    one row per turn, not stored in the episode record) feeds the store's turn
    index; :attr:`start` / :attr:`end` give the opening and closing times as
    ISO dates.
    """

    id: str
    user: str
    session: str
    turns: tuple[Turn, ...]
    summary: str
    opened_at: float
    closed_at: float
    embedding: np.ndarray | None = field(default=None, repr=False, compare=False)
    salience: Salience | None = None
    parent_id: str | None = None
    boundary_verdicts: tuple[Verdict, ...] = ()
    closing_verdicts: tuple[Verdict, ...] = ()
    recall_count: int = 0
    last_accessed: float | None = None
    strength: float = 1.0
    archived: bool = False
    turn_embeddings: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def start(self) -> str:
        """``opened_at`` as an ISO 8601 UTC date-time (seconds precision)."""
        return iso_time(self.opened_at)

    @property
    def end(self) -> str:
        """``closed_at`` as an ISO 8601 UTC date-time (seconds precision)."""
        return iso_time(self.closed_at)

    @property
    def text(self) -> str:
        """The transcript of the episode, one ``actor: text`` line per turn."""
        return "\n".join(f"{t.actor.value}: {t.text}" for t in self.turns)

    @property
    def turn_ids(self) -> tuple[str, ...]:
        return tuple(t.id or "" for t in self.turns)


@dataclass(frozen=True, slots=True)
class JudgeAnswer:
    """A judge's structured answer: the decision and the updated one-line summary."""

    decision: Decision
    summary: str
    reason: str = ""


@dataclass(frozen=True, slots=True)
class ScoredEpisode:
    """A recalled episode with each rerank term's contribution.

    ``importance_imputed`` is True when the episode was unscored and its
    importance term used the candidates' median (see :mod:`episeg.recall.rerank`).
    """

    episode: Episode
    score: float
    recency: float
    importance: float
    similarity: float
    raw_similarity: float
    importance_imputed: bool = False
