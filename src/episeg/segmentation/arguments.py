"""What a bare :class:`~episeg.segmentation.segmenter.Segmenter` refuses up front, or warns of.

:class:`~episeg.memory.Memory` checks its callers' arguments before they reach
its segmenters; these are the same checks for code that drives a segmenter
directly, so a wrong argument gets a typed error naming it, never an
``AttributeError`` from deep in the intake, a ``KeyError`` or an empty answer.

>>> check_turn({"actor": "user", "text": "hi", "ts": 1.0}, "observe")
Traceback (most recent call last):
...
episeg.errors.TurnValidationError: observe takes an episeg.types.Turn, got dict
>>> check_turns("deploy prod", "segment")
Traceback (most recent call last):
...
episeg.errors.TurnValidationError: segment takes an iterable of episeg.types.Turn, got str
>>> check_names(optional=True, user=5)
Traceback (most recent call last):
...
episeg.errors.ArgumentError: user must be a string or None, got int
>>> chosen_signals("window", has_judge=False)
Traceback (most recent call last):
...
episeg.errors.ConfigError: signals must be a collection of signal names, got the string 'window' ...
>>> sorted(chosen_signals(["window", "marker"], has_judge=False))
[<SignalName.MARKER: 'marker'>, <SignalName.WINDOW: 'window'>]

So a :class:`~episeg.segmentation.segmenter.Segmenter` answers:

>>> from episeg.segmentation.segmenter import Segmenter
>>> from episeg.testing import HashingEmbedder
>>> seg = Segmenter(embedder=HashingEmbedder())
>>> seg.observe(None)
Traceback (most recent call last):
...
episeg.errors.TurnValidationError: observe takes an episeg.types.Turn, got NoneType
>>> seg.checkpoint("default", "no-such-session")
Traceback (most recent call last):
...
episeg.errors.ArgumentError: checkpoint: no session ('default', 'no-such-session') in this ...
>>> seg.flush(user=5)
Traceback (most recent call last):
...
episeg.errors.ArgumentError: user must be a string or None, got int
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import TypeVar

import numpy as np

from episeg.config import EpisegConfig
from episeg.errors import ArgumentError, ConfigError, EmbeddingError, TurnValidationError
from episeg.segmentation.checkpoint import SessionCheckpoint
from episeg.segmentation.signals.factory import ALL_SIGNALS
from episeg.types import SignalName, Turn

__all__ = [
    "check_names",
    "check_replay",
    "check_turn",
    "check_turns",
    "chosen_signals",
    "known_session",
    "warn_ignored_settings",
]

log = logging.getLogger(__name__)

_S = TypeVar("_S")


def check_turn(turn: object, call: str, *, index: int | None = None) -> Turn:
    """``turn`` if it is a :class:`~episeg.types.Turn` (``index``: its place in ``call``'s list)."""
    if not isinstance(turn, Turn):
        what = f"{call} takes" if index is None else f"{call}: turn {index} must be"
        raise TurnValidationError(f"{what} an episeg.types.Turn, got {type(turn).__name__}")
    return turn


def check_turns(turns: object, call: str) -> list[Turn]:
    """``turns`` as a list, if it is an iterable of :class:`~episeg.types.Turn` (not a string)."""
    if isinstance(turns, str | bytes | Turn | Mapping) or not isinstance(turns, Iterable):
        raise TurnValidationError(
            f"{call} takes an iterable of episeg.types.Turn, got {type(turns).__name__}"
        )
    listed = list(turns)
    for n, turn in enumerate(listed):
        check_turn(turn, call, index=n)
    return listed


def check_names(*, optional: bool = False, **names: object) -> None:
    """Refuse a user or session name that is not a string (nor ``None`` if ``optional``)."""
    for name, value in names.items():
        if not isinstance(value, str) and not (optional and value is None):
            rule = "a string or None" if optional else "a string"
            raise ArgumentError(f"{name} must be {rule}, got {type(value).__name__}")


def known_session(
    sessions: Mapping[tuple[str, str], _S], user: object, session: object, call: str
) -> _S:
    """The state of (``user``, ``session``) in ``sessions``; an ``ArgumentError`` if unknown."""
    check_names(user=user, session=session)
    key = (str(user), str(session))
    if key not in sessions:
        raise ArgumentError(
            f"{call}: no session {key!r} in this segmenter "
            "(observe one of its turns, or resume it, first)"
        )
    return sessions[key]


def check_vectors(vectors: object, texts: int, dim: int | None) -> np.ndarray:
    """The embedder's answer for ``texts`` texts as a float array, or :class:`EmbeddingError`.

    One finite row per text, all of ``dim`` numbers when the segmenter has seen vectors
    before (a NaN vector would otherwise be accepted, then refused when its episode is
    recorded, every time, and the episode could never be closed).
    """
    try:  # no float copy: this runs on every turn, and the step converts once itself
        array = np.asarray(vectors)
    except (TypeError, ValueError) as exc:
        raise EmbeddingError(f"the embedder returned no array of numbers: {exc}") from None
    if array.dtype.kind not in "fiu":
        raise EmbeddingError(f"the embedder returned no array of numbers: dtype {array.dtype}")
    if array.ndim != 2 or array.shape[0] != texts or array.shape[1] < 1:
        raise EmbeddingError(f"the embedder returned shape {array.shape} for {texts} text(s)")
    if dim is not None and array.shape[1] != dim:
        raise EmbeddingError(
            f"the embedder returned {array.shape[1]} numbers per text; this segmenter's "
            f"sessions hold vectors of {dim} (was the embedder changed under open sessions?)"
        )
    if not np.isfinite(array).all():
        raise EmbeddingError("the embedder returned a vector with NaN or infinite values")
    return array


def check_replay(
    checkpoint: object, turns: object
) -> tuple[SessionCheckpoint, list[tuple[Turn, np.ndarray]]]:
    """``resume``'s checkpoint and its (turn, embedding) pairs, each checked."""
    if not isinstance(checkpoint, SessionCheckpoint):
        raise ArgumentError(
            f"resume takes a SessionCheckpoint (from Segmenter.checkpoint), "
            f"got {type(checkpoint).__name__}"
        )
    if isinstance(turns, str | bytes | Mapping) or not isinstance(turns, Sequence):
        raise ArgumentError(
            f"resume takes a sequence of (Turn, embedding) pairs, got {turns!r:.80}"
        )
    pairs = []
    for n, pair in enumerate(turns):
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise ArgumentError(
                f"resume: item {n} must be a (Turn, embedding) pair, got {pair!r:.80}"
            )
        turn = check_turn(pair[0], "resume", index=n)
        if (turn.user, turn.session) != (checkpoint.user, checkpoint.session):
            raise ArgumentError(
                f"resume: item {n} is a turn of user {turn.user!r}, session {turn.session!r}; "
                f"the checkpoint is of {checkpoint.user!r}, {checkpoint.session!r}"
            )
        pairs.append((turn, pair[1]))
    return checkpoint, pairs


def chosen_signals(signals: Iterable[str] | None, *, has_judge: bool) -> frozenset[SignalName]:
    """The signals a segmenter runs: ``signals``, or all that are possible (``None``)."""
    if signals is None:
        return ALL_SIGNALS if has_judge else ALL_SIGNALS - {SignalName.PREDICTION}
    if isinstance(signals, str | bytes):
        raise ConfigError(
            f"signals must be a collection of signal names, got the string {signals!r} "
            f"(for one signal write signals={{{signals!r}}})"
        )
    chosen = frozenset(signals)
    unknown = sorted(str(s) for s in chosen - ALL_SIGNALS)
    if unknown:
        valid = ", ".join(sorted(s.value for s in ALL_SIGNALS))
        raise ConfigError(f"unknown signal(s) {unknown}; valid: {valid}")
    if SignalName.PREDICTION in chosen and not has_judge:
        raise ConfigError("the 'prediction' signal needs a judge (pass judge=...)")
    return frozenset(SignalName.parse(s) for s in chosen)


def warn_ignored_settings(config: EpisegConfig, *, learned: bool) -> None:
    """Log a warning naming each learned-only ``combiner`` setting the layered policy ignores.

    ``combiner.kind="layered"`` refuses those settings itself, except
    ``roles_known=False`` (see :class:`~episeg.config.CombinerConfig`); ``auto``
    falls back to the layered policy with an embedder the model was not trained on.
    """
    ignored = () if learned else config.combiner.learned_only()
    if ignored:
        log.warning(
            "combiner.kind %r: the layered policy decides boundaries, so %s is ignored",
            config.combiner.kind,
            ", ".join(f"combiner.{n}" for n in ignored),
        )
