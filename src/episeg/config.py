"""The one frozen configuration object, with documented defaults.

>>> from episeg.config import EpisegConfig
>>> cfg = EpisegConfig()
>>> cfg.window_max_turns, cfg.judge_every
(24, 4)
>>> EpisegConfig(semantic_threshold=2.5)
Traceback (most recent call last):
...
episeg.errors.ConfigError: semantic_threshold must be in (0, 2], got 2.5
>>> cfg.with_overrides(judge_gate="periodic").judge_gate
<JudgeGate.PERIODIC: 'periodic'>
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from episeg.errors import ConfigError

__all__ = ["EpisegConfig", "JudgeGate"]


class JudgeGate(StrEnum):
    """When the prediction-error judge is consulted.

    ``ambiguous``: only when the cheap signals' combined evidence falls in the
    ambiguity band; ``periodic``: every ``judge_every`` turns (the seed's
    cadence); ``both``: either; ``never``: the judge is not asked.
    """

    AMBIGUOUS = "ambiguous"
    PERIODIC = "periodic"
    BOTH = "both"
    NEVER = "never"

    @classmethod
    def parse(cls, value: object) -> JudgeGate:
        if isinstance(value, cls):
            return value
        try:
            return cls(str(value).lower())
        except ValueError:
            valid = ", ".join(m.value for m in cls)
            raise ConfigError(f"unknown judge_gate {value!r}; valid: {valid}") from None


@dataclass(frozen=True, kw_only=True)
class EpisegConfig:
    """Every tunable of episeg, keyword-only, validated on construction.

    Segmentation
    ------------
    window_max_turns : int, default 24
        Signal 1 floor: an episode reaching this many turns closes at the next
        user turn (so an exchange is not cut mid-answer) and unconditionally at
        ``window_hard_factor`` times this many.
    window_max_seconds : float, default 3600
        Signal 1 floor by clock time between the episode's first turn and now.
    window_hard_factor : float, default 1.5
        Multiplier for the unconditional cut (see ``window_max_turns``).
    semantic_threshold : float, default 0.65
        Signal 2: cosine distance of a turn to the episode's running mean above
        which the turn is evidence of a shift (tuned for all-MiniLM-L6-v2 on
        dialogue turns; see docs/RESULTS.md).
    semantic_decay : float, default 0.6
        Weight kept by the running mean when a turn is folded in (lower reacts
        faster to recent turns).
    semantic_min_turns : int, default 2
        The semantic signal abstains until the episode has this many turns.
    semantic_min_words : int, default 4
        Turns with fewer content words weigh proportionally less in the
        semantic signal (short turns have unreliable embeddings).
    drift_delta : float, default 0.05
        Page-Hinkley tolerance subtracted from each distance deviation.
    drift_threshold : float, default 0.9
        Page-Hinkley alarm level for the cumulative (gradual drift) detector.
    judge_every : int, default 4
        Periodic prediction-error check cadence in turns (0 disables it).
    judge_gate : JudgeGate, default "ambiguous"
        When the judge is consulted; see :class:`JudgeGate`.
    boundary_evidence : float, default 1.0
        Weighted evidence at or above which the combiner declares a boundary.
    ambiguity_floor : float, default 0.5
        Evidence in [ambiguity_floor, boundary_evidence) is ambiguous: the
        judge (if gated in) decides.
    semantic_weight, drift_weight, structural_weight : float
        Weights of the hint signals in the combiner (defaults 1.0, 0.6, 1.0).
    hint_actors : tuple[str, ...], default ("user", "system")
        Actors before whose turns *hint* evidence (semantic, drift, inferred
        structure, the judge) may open an episode. Authoritative signals
        (agent marker, harness system-event, window) cut anywhere. Use all
        four actors for corpora whose speaker labels carry no meaning.
    max_turn_chars : int, default 100_000
        Longer turn texts are refused with a ``TurnValidationError``.
    embed_max_chars : int, default 2000
        Only this many leading characters of a turn are embedded (MiniLM reads
        256 word pieces at most); the whole text is stored.
    embed_batch_size : int, default 32
        Batch size for batch segmentation and episode embedding.

    Salience, recall and forgetting
    -------------------------------
    salience_domain : str, default "general"
        Anchor set for the salience scorers: general, coding, sre.
    recall_weights : tuple[float, float, float], default (1.0, 1.0, 1.0)
        Weights of (recency, importance, similarity) in the rerank.
    recall_min_span : tuple[float, float, float], default (0.1, 0.3, 0.2)
        Smallest raw range each rerank term (recency, importance, similarity)
        is min-max stretched over, so near-equal values stay near-equal: 0.1
        of recency is about 21 hours, 0.3 of importance about 3 salience points.
    recency_base : float, default 0.995
        Recency = recency_base ** hours since last access (Generative Agents).
    recall_candidates : int, default 50
        Nearest neighbours fetched before the rerank (at least ``k``).
    strength_initial_days : float, default 1.0
        MemoryBank strength S of a never-recalled episode, in days.
    strength_growth_days : float, default 1.0
        Added to S on each recall (R = exp(-t / S), t in days).
    archive_floor : float, default 0.05
        ``maintain(archive=True)`` archives episodes whose retention R falls below.
    """

    window_max_turns: int = 24
    window_max_seconds: float = 3600.0
    window_hard_factor: float = 1.5
    semantic_threshold: float = 0.65
    semantic_decay: float = 0.6
    semantic_min_turns: int = 2
    semantic_min_words: int = 4
    drift_delta: float = 0.05
    drift_threshold: float = 0.9
    judge_every: int = 4
    judge_gate: JudgeGate = JudgeGate.AMBIGUOUS
    boundary_evidence: float = 1.0
    ambiguity_floor: float = 0.5
    semantic_weight: float = 1.0
    drift_weight: float = 0.6
    structural_weight: float = 1.0
    hint_actors: tuple[str, ...] = ("user", "system")
    max_turn_chars: int = 100_000
    embed_max_chars: int = 2000
    embed_batch_size: int = 32
    salience_domain: str = "general"
    recall_weights: tuple[float, float, float] = (1.0, 1.0, 1.0)
    recall_min_span: tuple[float, float, float] = (0.1, 0.3, 0.2)
    recency_base: float = 0.995
    recall_candidates: int = 50
    strength_initial_days: float = 1.0
    strength_growth_days: float = 1.0
    archive_floor: float = 0.05

    def __post_init__(self) -> None:
        object.__setattr__(self, "judge_gate", JudgeGate.parse(self.judge_gate))
        object.__setattr__(self, "recall_weights", tuple(float(w) for w in self.recall_weights))
        valid_actors = ("user", "assistant", "tool", "system")
        if isinstance(self.hint_actors, str) or not set(self.hint_actors) <= set(valid_actors):
            raise ConfigError(
                f"hint_actors must be a tuple drawn from {valid_actors}, got {self.hint_actors!r}"
            )
        object.__setattr__(self, "hint_actors", tuple(self.hint_actors))
        _positive_int(
            self,
            "window_max_turns",
            "embed_batch_size",
            "semantic_min_turns",
            "semantic_min_words",
            "max_turn_chars",
            "embed_max_chars",
            "recall_candidates",
        )
        if self.judge_every < 0:
            raise ConfigError(f"judge_every must be >= 0, got {self.judge_every}")
        _in_range(self, "semantic_threshold", 0.0, 2.0, low_open=True)
        _in_range(self, "semantic_decay", 0.0, 1.0, high_open=True)
        _in_range(self, "recency_base", 0.0, 1.0, low_open=True)
        _in_range(self, "archive_floor", 0.0, 1.0)
        for name in (
            "window_max_seconds",
            "drift_threshold",
            "boundary_evidence",
            "strength_initial_days",
        ):
            if not getattr(self, name) > 0:
                raise ConfigError(f"{name} must be > 0, got {getattr(self, name)}")
        for name in (
            "drift_delta",
            "ambiguity_floor",
            "semantic_weight",
            "drift_weight",
            "structural_weight",
            "strength_growth_days",
        ):
            if not getattr(self, name) >= 0:
                raise ConfigError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.window_hard_factor < 1.0:
            raise ConfigError(f"window_hard_factor must be >= 1, got {self.window_hard_factor}")
        if self.ambiguity_floor > self.boundary_evidence:
            raise ConfigError("ambiguity_floor must not exceed boundary_evidence")
        object.__setattr__(self, "recall_min_span", tuple(float(w) for w in self.recall_min_span))
        if len(self.recall_min_span) != 3 or any(w < 0 for w in self.recall_min_span):
            raise ConfigError(
                f"recall_min_span must be 3 non-negative numbers, got {self.recall_min_span}"
            )
        if len(self.recall_weights) != 3 or any(w < 0 for w in self.recall_weights):
            raise ConfigError(
                f"recall_weights must be 3 non-negative numbers, got {self.recall_weights}"
            )

    def with_overrides(self, **changes: Any) -> EpisegConfig:
        """A copy with ``changes`` applied (validated like the constructor)."""
        unknown = sorted(set(changes) - {f.name for f in dataclasses.fields(self)})
        if unknown:
            raise ConfigError(f"unknown config field(s) {unknown}")
        return dataclasses.replace(self, **changes)


def _positive_int(cfg: EpisegConfig, *names: str) -> None:
    for name in names:
        value = getattr(cfg, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(f"{name} must be a positive integer, got {value!r}")


def _in_range(
    cfg: EpisegConfig,
    name: str,
    low: float,
    high: float,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> None:
    value = getattr(cfg, name)
    too_low = value <= low if low_open else value < low
    too_high = value >= high if high_open else value > high
    if too_low or too_high:
        left = "(" if low_open else "["
        right = ")" if high_open else "]"
        raise ConfigError(f"{name} must be in {left}{low:g}, {high:g}{right}, got {value}")
