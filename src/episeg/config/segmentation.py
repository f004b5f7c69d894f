"""Configuration sections of the segmenter: signals 1-3, the combiners and turn intake.

>>> WindowConfig(max_turns=8).kwargs()
{'max_turns': 8, 'max_seconds': 3600.0, 'hard_factor': 1.5}
>>> JudgeConfig(gate="periodic").gate
<JudgeGate.PERIODIC: 'periodic'>

A setting that could do nothing is refused, naming what would work instead:

>>> JudgeConfig(gate="periodic", every=0)
Traceback (most recent call last):
...
episeg.errors.ConfigError: judge.every=0 turns the periodic check off, so judge.gate 'periodic' ...
>>> PolicyConfig(weights={"window": 2.0})
Traceback (most recent call last):
...
episeg.errors.ConfigError: policy.weights.window does nothing: the window signal's cuts are ...

The ``combiner`` section (:class:`CombinerConfig`) lives in :mod:`episeg.config.combiner`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, ClassVar

from episeg.config.base import _fail, _int, _num, _Section
from episeg.config.combiner import CombinerConfig
from episeg.errors import ConfigError
from episeg.types import Actor, JudgeGate, SignalName

__all__ = [
    "CombinerConfig",
    "DriftConfig",
    "IntakeConfig",
    "JudgeConfig",
    "PolicyConfig",
    "SemanticConfig",
    "WindowConfig",
]


@dataclass(frozen=True, kw_only=True)
class WindowConfig(_Section):
    """Signal 1, :class:`~episeg.segmentation.signals.window.FixedWindow`.

    max_turns : int, default 64
        An episode reaching this many turns closes at the next user turn (so an
        exchange is not cut mid-answer) and unconditionally at ``hard_factor``
        times this many. The bound behind every other signal, set above the
        longest agent task in the agent_tau train part (61 turns): at the old
        24 it cut one agent task in two (docs/RESULTS.md).
    max_seconds : float, default 3600
        The same floor by clock time between the episode's first turn and now.
    hard_factor : float, default 1.5
        Multiplier for the unconditional cut (>= 1).
    """

    section: ClassVar[str] = "window"
    max_turns: int = 64
    max_seconds: float = 3600.0
    hard_factor: float = 1.5

    def __post_init__(self) -> None:
        _int(self.section, "max_turns", self.max_turns)
        _num(self.section, "max_seconds", self.max_seconds, 0.0, low_open=True)
        _num(self.section, "hard_factor", self.hard_factor, 1.0)


@dataclass(frozen=True, kw_only=True)
class SemanticConfig(_Section):
    """Signal 2, :class:`~episeg.segmentation.signals.semantic.SemanticShift`.

    threshold : float, default 0.65
        Cosine distance of a turn to the episode's running mean above which the
        turn is evidence of a shift (tuned for all-MiniLM-L6-v2 on dialogue
        turns; see docs/RESULTS.md).
    decay : float, default 0.6
        Weight kept by the running mean when a turn is folded in (lower reacts
        faster to recent turns), in [0, 1).
    min_turns : int, default 2
        The semantic signal abstains until the episode has this many turns.
    min_words : int, default 4
        Turns with fewer content words weigh proportionally less (short turns
        have unreliable embeddings).
    """

    section: ClassVar[str] = "semantic"
    threshold: float = 0.65
    decay: float = 0.6
    min_turns: int = 2
    min_words: int = 4

    def __post_init__(self) -> None:
        _num(self.section, "threshold", self.threshold, 0.0, 2.0, low_open=True)
        _num(self.section, "decay", self.decay, 0.0, 1.0, high_open=True)
        _int(self.section, "min_turns", self.min_turns)
        _int(self.section, "min_words", self.min_words)


@dataclass(frozen=True, kw_only=True)
class DriftConfig(_Section):
    """Signal 2b, :class:`~episeg.segmentation.signals.drift.GradualDrift` (Page-Hinkley).

    delta : float, default 0.05
        Tolerance subtracted from each distance deviation (>= 0).
    threshold : float, default 0.9
        Alarm level of the cumulative detector (> 0).
    min_turns : int, default 2
        The drift signal abstains until the episode has this many turns.
    """

    section: ClassVar[str] = "drift"
    delta: float = 0.05
    threshold: float = 0.9
    min_turns: int = 2

    def __post_init__(self) -> None:
        _num(self.section, "delta", self.delta, 0.0)
        _num(self.section, "threshold", self.threshold, 0.0, low_open=True)
        _int(self.section, "min_turns", self.min_turns)


@dataclass(frozen=True, kw_only=True)
class JudgeConfig(_Section):
    """Signal 3, :class:`~episeg.segmentation.signals.prediction.PredictionError`.

    every : int, default 4
        Periodic check cadence in turns, used when ``gate`` is periodic or
        both. 0 turns the periodic check off, so it is refused with those two
        gates (use ``never`` or ``ambiguous``: 0 with them would leave the
        gate doing nothing of what it names).
    gate : JudgeGate, default "ambiguous"
        When the judge is consulted; see :class:`~episeg.types.JudgeGate`.
    """

    section: ClassVar[str] = "judge"
    every: int = 4
    gate: JudgeGate = JudgeGate.AMBIGUOUS

    if TYPE_CHECKING:  # ``gate`` may be given as its string value (parsed below)

        def __init__(
            self, *, every: int = 4, gate: JudgeGate | str = JudgeGate.AMBIGUOUS
        ) -> None: ...

    def __post_init__(self) -> None:
        _int(self.section, "every", self.every, low=0)
        object.__setattr__(self, "gate", JudgeGate.parse(self.gate))
        if self.every == 0 and self.gate in _PERIODIC_GATES:
            instead = _PERIODIC_GATES[self.gate]
            raise ConfigError(
                f"judge.every=0 turns the periodic check off, so judge.gate "
                f"{self.gate.value!r} would act as {instead!r}; set judge.every >= 1, "
                f"or judge.gate={instead!r}"
            )


_PERIODIC_GATES = {JudgeGate.PERIODIC: "never", JudgeGate.BOTH: "ambiguous"}
"""The gates that read ``judge.every``, each with the gate it becomes when ``every`` is 0."""

_DEFAULT_WEIGHTS: dict[str, float] = {
    SignalName.SEMANTIC: 1.0,
    SignalName.DRIFT: 0.6,
    SignalName.STRUCTURAL: 1.0,
}
_NOT_WEIGHED = {
    SignalName.WINDOW: "the window signal's cuts are authoritative rulings (policy rule 1)",
    SignalName.MARKER: "the marker signal's cuts are authoritative rulings (policy rule 1)",
    SignalName.PREDICTION: "the judge decides on its own when consulted (policy rule 9)",
    SignalName.COMBINER: "'combiner' names the combiner's own verdict",
}
"""Signal names a weight would never apply to, and why (the hints are the rest)."""
_ACTORS = tuple(a.value for a in Actor)


@dataclass(frozen=True, kw_only=True)
class PolicyConfig(_Section):
    """The combiner, :class:`~episeg.segmentation.policy.BoundaryPolicy`.

    weights : Mapping[SignalName | str, float], default semantic 1.0, drift 0.6, structural 1.0
        Weight of each hint signal (a signal not named weighs 0). Only the
        hints are weighed: a weight for ``window``, ``marker``, ``prediction``
        or ``combiner`` would do nothing, so it is refused.
    boundary_evidence : float, default 1.0
        Weighted evidence at or above which the combiner declares a boundary.
    ambiguity_floor : float, default 0.5
        Evidence in [ambiguity_floor, boundary_evidence) is ambiguous: the
        judge (if gated in) decides.
    hint_actors : tuple[str, ...], default ("user", "system")
        Actors before whose turns *hint* evidence (semantic, drift, inferred
        structure, the judge) may open an episode. Authoritative signals
        (agent marker, harness system-event, window) cut anywhere. Use all
        four actors for corpora whose speaker labels carry no meaning.
    """

    section: ClassVar[str] = "policy"
    weights: Mapping[str, float] = field(default_factory=lambda: dict(_DEFAULT_WEIGHTS))
    boundary_evidence: float = 1.0
    ambiguity_floor: float = 0.5
    hint_actors: tuple[str, ...] = ("user", "system")

    def __post_init__(self) -> None:
        if not isinstance(self.weights, Mapping):
            raise _fail(self.section, "weights", "a mapping of signal name to weight", self.weights)
        weights = {}
        for name, weight in self.weights.items():
            _num(self.section, f"weights.{name}", weight, 0.0)
            signal = SignalName.parse(name)
            if signal in _NOT_WEIGHED:
                hints = ", ".join(sorted(_DEFAULT_WEIGHTS))
                raise ConfigError(
                    f"policy.weights.{signal.value} does nothing: {_NOT_WEIGHED[signal]}, "
                    f"never weighed; policy.weights takes {hints}"
                )
            weights[signal] = float(weight)
        object.__setattr__(self, "weights", MappingProxyType(weights))
        _num(self.section, "boundary_evidence", self.boundary_evidence, 0.0, low_open=True)
        _num(self.section, "ambiguity_floor", self.ambiguity_floor, 0.0)
        if self.ambiguity_floor > self.boundary_evidence:
            raise ConfigError("policy.ambiguity_floor must not exceed policy.boundary_evidence")
        actors = self.hint_actors
        if isinstance(actors, str) or not set(actors) <= set(_ACTORS):
            raise _fail(self.section, "hint_actors", f"a tuple drawn from {_ACTORS}", actors)
        object.__setattr__(self, "hint_actors", tuple(actors))


@dataclass(frozen=True, kw_only=True)
class IntakeConfig(_Section):
    """Turn intake, :meth:`~episeg.segmentation.intake.SessionIntake.accept`.

    max_turn_chars : int, default 100_000
        Longer turn texts are refused with a ``TurnValidationError``.
    idle_timeout : float, default 1800 (30 minutes)
        Seconds without a new turn after which a session's open episode is
        closed, scored and stored (:mod:`episeg.durability.idle`), counted by
        the process clock from the turn's arrival; 0 never closes. Otherwise
        in [1, 2592000] (30 days). 30 minutes is the usual inactivity cut-off
        of a session (web analytics' default): longer than the pauses inside
        one task (a build, a test run, a tool call), short enough that an
        abandoned conversation becomes recallable as an episode soon.
    """

    section: ClassVar[str] = "intake"
    max_turn_chars: int = 100_000
    idle_timeout: float = 1800.0

    def __post_init__(self) -> None:
        _int(self.section, "max_turn_chars", self.max_turn_chars)
        if self.idle_timeout is False or self.idle_timeout != 0:  # False == 0: still a bool
            _num(self.section, "idle_timeout", self.idle_timeout, 1.0, 30 * 86400.0)
