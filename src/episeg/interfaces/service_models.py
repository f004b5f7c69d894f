"""The HTTP service's request and answer models (pydantic), and its documented errors.

Split from :mod:`episeg.interfaces.service`, which holds the routes. The
OpenAPI schema is built from these (``tests/interfaces/test_service.py``
checks its paths).

>>> TurnIn(actor="user", text="hi").session, ClosedOut(accepted=1, closed=[]).duplicates
('default', [])
"""

# No `from __future__ import annotations`: pydantic reads the annotations at runtime.
from typing import Annotated, Any, Literal

from fastapi import Path, Query
from pydantic import BaseModel, ConfigDict, Field, field_validator

from episeg.errors import MetadataError
from episeg.store.usermeta import validate_metadata
from episeg.types.episode import MAX_EPISODE_ID

__all__ = [
    "ERRORS",
    "MAX_BATCH",
    "READ_ERRORS",
    "ClosedOut",
    "ConflictOut",
    "EpisodeIdPath",
    "EpisodeIdQuery",
    "EpisodeOut",
    "EpisodesOut",
    "ErrorOut",
    "FlushIn",
    "MessageIn",
    "MessagesIn",
    "RecallHitOut",
    "RecallIn",
    "RecallOut",
    "SalienceOut",
    "TurnIn",
    "TurnOut",
    "VerdictOut",
]

EpisodeIdQuery = Annotated[str, Query(alias="id", min_length=1, max_length=MAX_EPISODE_ID)]
"""An episode id as ``?id=``: any id an episode may have ("a/b", "." and ".." too)."""
EpisodeIdPath = Annotated[str, Path(min_length=1, max_length=MAX_EPISODE_ID)]
"""An episode id in the path: the older routes, for ids a URL path can carry."""

MAX_BATCH = 1000
_Name = Annotated[str, Field(min_length=1, max_length=256)]
"""A session or message id a turn sent over HTTP may carry."""
_AnySession = Annotated[str, Field(min_length=1)]
"""A session to read or close: any name a turn may carry (MCP, the CLI and the library
take longer ones than HTTP does)."""


class TurnIn(BaseModel):
    """One turn. user may be omitted (it is the key's tenant); ts defaults to now."""

    model_config = ConfigDict(extra="forbid")
    actor: Literal["user", "assistant", "tool", "system"]
    text: str
    # strict: JSON true or "12" is not a time (F20); NaN/Infinity are refused (F9)
    ts: Annotated[float, Field(strict=True, allow_inf_nan=False)] | None = None
    type: (
        Literal[
            "user-question",
            "user-correction",
            "assistant-answer",
            "tool-call",
            "tool-error",
            "tool-success",
            "system-event",
        ]
        | None
    ) = None
    id: _Name | None = None
    user: _Name | None = None
    session: _Name = "default"


class MessageIn(BaseModel):
    """A chat message, OpenAI / mem0 / Anthropic style; other keys (name, ...) are ignored,
    except user and session, which may only repeat the request's (403 / 422 otherwise).

    OpenAI tool_calls and Anthropic tool_use / tool_result content parts are
    kept as the turn's text (see episeg.interfaces.messages); content may be
    null for a message that only calls tools.
    """

    model_config = ConfigDict(extra="ignore")
    role: Literal["user", "assistant", "system", "developer", "tool", "function"]
    content: str | list[dict[str, Any]] | None = None
    tool_calls: list[dict[str, Any]] | None = None
    ts: Annotated[float, Field(strict=True, allow_inf_nan=False)] | None = None
    id: _Name | None = None
    user: str | None = None
    session: str | None = None


class MessagesIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    messages: Annotated[list[MessageIn], Field(min_length=1, max_length=MAX_BATCH)]
    session: _Name = "default"


class FlushIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    session: _AnySession | None = None


MetadataValue = (
    Annotated[bool, Field(strict=True)]
    | Annotated[int, Field(strict=True)]
    | Annotated[float, Field(strict=True, allow_inf_nan=False)]
    | Annotated[str, Field(strict=True)]
)
"""A user metadata value (episeg.store.usermeta): JSON true/false, an integer, a finite number
or a string; the order makes 1 an int and 1.0 a float."""


def checked_metadata(value: dict[str, Any] | None) -> dict[str, Any] | None:
    """Pydantic-side check of user metadata: a :class:`MetadataError` becomes a 422."""
    if value is None:
        return None
    try:
        return validate_metadata(value)
    except MetadataError as exc:
        raise ValueError(str(exc)) from None


class RecallIn(BaseModel):
    """A recall: query, at most k episodes, and optionally a word budget across all
    hits, a time range (seconds since the epoch) or one session, whole episodes
    (expand), turns of context around each match and neighbouring episodes."""

    model_config = ConfigDict(extra="forbid")
    query: Annotated[str, Field(min_length=1, max_length=10_000)]
    # strict: JSON true, "3" or 2.0 is no count (as over MCP)
    k: Annotated[int, Field(strict=True, ge=1, le=50)] = 5
    max_words: Annotated[int, Field(strict=True, ge=1, le=100_000)] | None = None
    since: Annotated[float, Field(strict=True, allow_inf_nan=False)] | None = None
    until: Annotated[float, Field(strict=True, allow_inf_nan=False)] | None = None
    session: _AnySession | None = None
    expand: Literal["turns", "episode"] = "turns"
    context: Annotated[int, Field(strict=True, ge=0, le=10)] = 0
    neighbours: Annotated[int, Field(strict=True, ge=0, le=10)] = 0
    metadata: dict[str, MetadataValue] | None = Field(
        None, description="keep episodes whose user metadata holds every key with this value"
    )
    min_score: Annotated[float, Field(strict=True, allow_inf_nan=False)] | None = Field(
        None, description="hits scoring below this are not returned"
    )

    _metadata = field_validator("metadata")(checked_metadata)


class SalienceOut(BaseModel):
    score: int | None
    normalized: float | None
    scorer: str
    reason: str
    by_user: bool = False


class VerdictOut(BaseModel):
    signal: str
    decision: str
    score: float
    reason: str
    authoritative: bool


class TurnOut(BaseModel):
    actor: str
    text: str
    ts: float
    type: str | None = None
    id: str | None = None
    user: str
    session: str


class EpisodeOut(BaseModel):
    id: str
    user: str
    session: str
    summary: str
    opened_at: float
    closed_at: float
    start: str
    end: str
    turn_count: int
    first_turn_id: str | None
    last_turn_id: str | None
    salience: SalienceOut | None
    parent_id: str | None
    boundary_reasons: list[str]
    boundary_verdicts: list[VerdictOut]
    recall_count: int
    last_accessed: float | None
    strength: float
    archived: bool
    pinned: bool = False
    metadata: dict[str, MetadataValue] = Field(default_factory=dict)
    turns: list[TurnOut]


class ClosedOut(BaseModel):
    accepted: int
    closed: list[EpisodeOut]
    duplicates: list[str] = Field(
        default_factory=list, description="ids of sent turns skipped as already recorded"
    )


class EpisodesOut(BaseModel):
    episodes: list[EpisodeOut]


class RecallHitOut(BaseModel):
    score: float
    recency: float
    importance: float
    similarity: float
    raw_similarity: float
    importance_imputed: bool
    episode: EpisodeOut
    episode_id: str
    start: str
    end: str
    summary: str
    reinforcement: float
    lexical: bool
    words: int
    turn_ids: list[str]
    turns: list[TurnOut]
    neighbours_before: list[str]
    neighbours_after: list[str]
    open: bool = Field(
        False, description="a segment not yet closed (its id is the one it will be stored under)"
    )


class RecallOut(BaseModel):
    results: list[RecallHitOut]


class ErrorOut(BaseModel):
    detail: str


class ConflictOut(BaseModel):
    detail: str
    turn_id: str = Field(description="the id already recorded with other content")


ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut, "description": what}
    for code, what in (
        (400, "refused by episeg (its message says why)"),
        (401, "missing or unknown API key"),
        (403, "turn names another tenant"),
        (413, "request body too large"),
        (429, "this tenant has too many requests in flight (see Retry-After)"),
        (503, "episode store unreachable, or the journal cannot write (see Retry-After)"),
    )
}
ERRORS[409] = {
    "model": ConflictOut,
    "description": "a turn id already recorded with other content; nothing was accepted",
}
READ_ERRORS = {code: v for code, v in ERRORS.items() if code not in (403, 409)}
