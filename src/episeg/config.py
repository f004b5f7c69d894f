"""The one frozen configuration object, composed of sections with documented defaults.

Each section is named after what it configures and its fields are named like
that component's constructor keywords, so ``SemanticConfig(threshold=0.7)``
feeds ``SemanticShift(threshold=0.7)``. Bounds live here only: every section
checks its own fields once, on construction, and the components validate
their keywords through the same section.

>>> cfg = EpisegConfig()
>>> cfg.window.max_turns, cfg.judge.every, cfg.drift.min_turns
(64, 4, 2)
>>> EpisegConfig(semantic=SemanticConfig(threshold=2.5))
Traceback (most recent call last):
...
episeg.errors.ConfigError: semantic.threshold must be in (0, 2], got 2.5
>>> cfg.with_overrides(**{"judge.gate": "periodic", "semantic.threshold": 0.7}).judge.gate
<JudgeGate.PERIODIC: 'periodic'>
>>> WindowConfig(max_turns=8).kwargs()
{'max_turns': 8, 'max_seconds': 3600.0, 'hard_factor': 1.5}
>>> cfg.with_overrides(semantic_threshold=0.7)
Traceback (most recent call last):
...
episeg.errors.ConfigError: unknown config field 'semantic_threshold'; valid: ...
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

from episeg.errors import ConfigError
from episeg.types import Actor, EmbedderBackend, JudgeGate, SignalName

__all__ = [
    "CombinerConfig",
    "DriftConfig",
    "EmbeddingConfig",
    "EpisegConfig",
    "ForgettingConfig",
    "IntakeConfig",
    "JudgeConfig",
    "JudgeGate",
    "PolicyConfig",
    "RecallConfig",
    "SalienceConfig",
    "SemanticConfig",
    "WindowConfig",
]


def _fail(section: str, name: str, rule: str, value: object) -> ConfigError:
    return ConfigError(f"{section}.{name} must be {rule}, got {value!r}")


def _int(section: str, name: str, value: object, *, low: int = 1) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        rule = "a positive integer" if low == 1 else f"an integer >= {low}"
        raise _fail(section, name, rule, value)


def _num(
    section: str,
    name: str,
    value: Any,
    low: float,
    high: float = float("inf"),
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> None:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if ok:
        ok = (value > low if low_open else value >= low) and (
            value < high if high_open else value <= high
        )
    if not ok:
        if high == float("inf"):
            rule = f"{'>' if low_open else '>='} {low:g}"
        else:
            rule = f"in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
        raise _fail(section, name, rule, value)


def _triple(section: str, name: str, value: Any) -> tuple[float, float, float]:
    try:
        triple = tuple(float(v) for v in value)
    except (TypeError, ValueError):
        triple = ()
    if len(triple) != 3 or any(not v >= 0 for v in triple):
        raise _fail(section, name, "3 non-negative numbers", value)
    return triple[0], triple[1], triple[2]


class _Section:
    """What every section shares: its name and its fields as constructor keywords."""

    section: ClassVar[str]

    def kwargs(self) -> dict[str, Any]:
        """The fields as keyword arguments for the component this section configures."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}  # type: ignore[arg-type]


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
        Periodic check cadence in turns (0 disables it); used when ``gate`` is
        periodic or both.
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


_DEFAULT_WEIGHTS: dict[str, float] = {
    SignalName.SEMANTIC: 1.0,
    SignalName.DRIFT: 0.6,
    SignalName.STRUCTURAL: 1.0,
}
_ACTORS = tuple(a.value for a in Actor)


@dataclass(frozen=True, kw_only=True)
class PolicyConfig(_Section):
    """The combiner, :class:`~episeg.segmentation.policy.BoundaryPolicy`.

    weights : Mapping[SignalName | str, float], default semantic 1.0, drift 0.6, structural 1.0
        Weight of each hint signal (a signal not named weighs 0).
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
            weights[SignalName.parse(name)] = float(weight)
        object.__setattr__(self, "weights", MappingProxyType(weights))
        _num(self.section, "boundary_evidence", self.boundary_evidence, 0.0, low_open=True)
        _num(self.section, "ambiguity_floor", self.ambiguity_floor, 0.0)
        if self.ambiguity_floor > self.boundary_evidence:
            raise ConfigError("policy.ambiguity_floor must not exceed policy.boundary_evidence")
        actors = self.hint_actors
        if isinstance(actors, str) or not set(actors) <= set(_ACTORS):
            raise _fail(self.section, "hint_actors", f"a tuple drawn from {_ACTORS}", actors)
        object.__setattr__(self, "hint_actors", tuple(actors))


_COMBINERS = ("auto", "learned", "layered")


@dataclass(frozen=True, kw_only=True)
class CombinerConfig(_Section):
    """Which combiner decides boundaries (:class:`~episeg.segmentation.learned.LearnedPolicy`).

    kind : str, default "auto"
        ``learned``: the boundary model trained by ``episeg train segmenter``
        decides after the authoritative rulings (marker, system-event, window);
        it needs the embedder it was trained on (all-MiniLM-L6-v2, 384 dims).
        ``layered``: the hand-set :class:`~episeg.segmentation.policy.BoundaryPolicy`
        (``policy`` section), kept for comparison. ``auto``: ``learned`` when
        the segmenter's embedder is the model's, else ``layered`` (a test
        double such as the hashing embedder), logged once.
    weights : str or None, default None
        A weights file written by the trainer; ``None``: the shipped agent
        model; ``"chat"``: the shipped open-domain chat model.
    threshold : float or None, default None
        Decision threshold on the model's logit (``None``: the model's own).
    band : float or None, default None
        Half-width of the uncertain band around the threshold where a
        configured judge is asked (``None``: the model's own).
    min_turns : int or None, default None
        Segment-length prior: the model cuts only an episode holding this many
        turns (``None``: the model's own; 2 for the agent model).
    roles_known : bool, default True
        ``False`` when speaker labels carry no meaning: the model's role
        features are then off (set ``policy.hint_actors`` to all four too).
    """

    section: ClassVar[str] = "combiner"
    kind: str = "auto"
    weights: str | None = None
    threshold: float | None = None
    band: float | None = None
    min_turns: int | None = None
    roles_known: bool = True

    def __post_init__(self) -> None:
        if self.kind not in _COMBINERS:
            raise _fail(self.section, "kind", f"one of {', '.join(_COMBINERS)}", self.kind)
        if self.weights is not None and not isinstance(self.weights, str):
            raise _fail(self.section, "weights", "a path or 'chat'", self.weights)
        if self.threshold is not None:
            _num(self.section, "threshold", self.threshold, float("-inf"))
        if self.band is not None:
            _num(self.section, "band", self.band, 0.0)
        if self.min_turns is not None:
            _int(self.section, "min_turns", self.min_turns)
        if not isinstance(self.roles_known, bool):
            raise _fail(self.section, "roles_known", "a bool", self.roles_known)


@dataclass(frozen=True, kw_only=True)
class IntakeConfig(_Section):
    """Turn intake, :meth:`~episeg.segmentation.intake.SessionIntake.accept`.

    max_turn_chars : int, default 100_000
        Longer turn texts are refused with a ``TurnValidationError``.
    """

    section: ClassVar[str] = "intake"
    max_turn_chars: int = 100_000

    def __post_init__(self) -> None:
        _int(self.section, "max_turn_chars", self.max_turn_chars)


@dataclass(frozen=True, kw_only=True)
class EmbeddingConfig(_Section):
    """How turns are embedded by the bundled MiniLM (:func:`~episeg.defaults.default_embedder`).

    backend : EmbedderBackend, default "onnx"
        ``onnx``: :class:`~episeg.embedders.OnnxMiniLMEmbedder` (ONNX Runtime,
        graph exported from the packaged weights at first use and cached under
        ``$EPISEG_CACHE_DIR`` or ``~/.cache/episeg``); ``torch``:
        :class:`~episeg.embedders.MiniLMEmbedder` (sentence-transformers).
        Same vectors within 1e-5 cosine.
    threads : int or None, default None
        Intra-op threads of one encode. ``None``: ``min(2, usable cores)`` for
        onnx, torch's own default for torch. More threads than cores, or
        several processes each taking all cores, slowed encoding several-fold.
    max_chars : int, default 2000
        Only this many leading characters of a turn are embedded (MiniLM reads
        256 word pieces at most); the whole text is stored.
    batch_size : int, default 32
        Batch size for batch segmentation and episode embedding.

    >>> EmbeddingConfig(backend="torch").backend
    <EmbedderBackend.TORCH: 'torch'>
    """

    section: ClassVar[str] = "embedding"
    backend: EmbedderBackend = EmbedderBackend.ONNX
    threads: int | None = None
    max_chars: int = 2000
    batch_size: int = 32

    def __post_init__(self) -> None:
        object.__setattr__(self, "backend", EmbedderBackend.parse(self.backend))
        if self.threads is not None:
            _int(self.section, "threads", self.threads)
        _int(self.section, "max_chars", self.max_chars)
        _int(self.section, "batch_size", self.batch_size)


@dataclass(frozen=True, kw_only=True)
class SalienceConfig(_Section):
    """The salience scorers (:class:`~episeg.salience.AnchoredOfflineScorer`, LLM scorers).

    anchors : str, default "general"
        Anchor set: general, coding, sre (checked by the scorer that loads it).
    """

    section: ClassVar[str] = "salience"
    anchors: str = "general"

    def __post_init__(self) -> None:
        if not isinstance(self.anchors, str) or not self.anchors:
            raise _fail(self.section, "anchors", "an anchor set name", self.anchors)


@dataclass(frozen=True, kw_only=True)
class RecallConfig(_Section):
    """Recall: :class:`~episeg.recall.hierarchical.HierarchicalRecaller` (what
    :class:`~episeg.memory.Memory` uses) and the older episode-level
    :class:`~episeg.recall.Recaller` / :func:`~episeg.recall.rerank`.

    Defaults measured on the LoCoMo dev conversations (docs/RESULTS.md).

    weights : tuple[float, float, float], default (0.0, 0.0, 1.0)
        Weights of (recency, importance, relevance). Relevance is the fused
        rank score scaled to [0, 1]; recency and importance are in [0, 1] too.
        Recency and importance are 0 because every non-zero weight lowered
        evidence recall on LoCoMo; they still break ties.
    rrf_k : int, default 60
        Reciprocal rank fusion constant: a list's item at rank r adds 1 / (k + 1 + r).
    turn_candidates : int, default 200
        Turns read from each turn-level list (dense and lexical).
    episode_candidates : int, default 20
        Episodes read from the episode-level lexical list (0 switches it off).
    min_similarity : float, default 0.2
        A turn whose cosine to the query is below this is not a dense match;
        a query with no dense and no lexical match returns nothing.
    reinforcement_weight : float, default 0.0
        Weight of the MemoryBank retention ``exp(-t / S)`` of an episode whose
        use was confirmed (``S`` grows with each confirmation); a never-confirmed
        episode gets 0, so this is not a second recency term.
    recency_base : float, default 0.995
        Recency = recency_base ** hours since the episode closed or was last confirmed.
    min_span : tuple[float, float, float], default (0.1, 0.3, 0.2)
        Older :func:`~episeg.recall.rerank` only: smallest raw range each term
        (recency, importance, similarity) is min-max stretched over.
    candidates : int, default 50
        Older :class:`~episeg.recall.Recaller` only: nearest episodes fetched
        before its rerank (at least ``k``).
    """

    section: ClassVar[str] = "recall"
    weights: tuple[float, float, float] = (0.0, 0.0, 1.0)
    rrf_k: int = 60
    turn_candidates: int = 200
    episode_candidates: int = 20
    min_similarity: float = 0.2
    reinforcement_weight: float = 0.0
    recency_base: float = 0.995
    min_span: tuple[float, float, float] = (0.1, 0.3, 0.2)
    candidates: int = 50

    def __post_init__(self) -> None:
        object.__setattr__(self, "weights", _triple(self.section, "weights", self.weights))
        object.__setattr__(self, "min_span", _triple(self.section, "min_span", self.min_span))
        _int(self.section, "rrf_k", self.rrf_k, low=0)
        _int(self.section, "turn_candidates", self.turn_candidates)
        _int(self.section, "episode_candidates", self.episode_candidates, low=0)
        _num(self.section, "min_similarity", self.min_similarity, -1.0, 1.0)
        _num(self.section, "reinforcement_weight", self.reinforcement_weight, 0.0)
        _num(self.section, "recency_base", self.recency_base, 0.0, 1.0, low_open=True)
        _int(self.section, "candidates", self.candidates)


@dataclass(frozen=True, kw_only=True)
class ForgettingConfig(_Section):
    """MemoryBank-style strength and the maintenance pass (:mod:`episeg.recall.forgetting`).

    initial_days : float, default 1.0
        Strength S of a never-recalled episode, in days (> 0).
    growth_days : float, default 1.0
        Added to S on each recall (R = exp(-t / S), t in days).
    archive_floor : float, default 0.05
        ``maintain(archive=True)`` archives episodes whose retention R falls below.
    """

    section: ClassVar[str] = "forgetting"
    initial_days: float = 1.0
    growth_days: float = 1.0
    archive_floor: float = 0.05

    def __post_init__(self) -> None:
        _num(self.section, "initial_days", self.initial_days, 0.0, low_open=True)
        _num(self.section, "growth_days", self.growth_days, 0.0)
        _num(self.section, "archive_floor", self.archive_floor, 0.0, 1.0)


@dataclass(frozen=True, kw_only=True)
class EpisegConfig:
    """Every tunable of episeg, one section per component, each validated on construction.

    Sections (see each class for its fields and defaults): ``window``
    (:class:`WindowConfig`), ``semantic`` (:class:`SemanticConfig`), ``drift``
    (:class:`DriftConfig`), ``judge`` (:class:`JudgeConfig`), ``policy``
    (:class:`PolicyConfig`), ``combiner`` (:class:`CombinerConfig`), ``intake``
    (:class:`IntakeConfig`), ``embedding`` (:class:`EmbeddingConfig`), ``salience``
    (:class:`SalienceConfig`), ``recall`` (:class:`RecallConfig`), ``forgetting``
    (:class:`ForgettingConfig`).
    """

    window: WindowConfig = field(default_factory=WindowConfig)
    semantic: SemanticConfig = field(default_factory=SemanticConfig)
    drift: DriftConfig = field(default_factory=DriftConfig)
    judge: JudgeConfig = field(default_factory=JudgeConfig)
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    combiner: CombinerConfig = field(default_factory=CombinerConfig)
    intake: IntakeConfig = field(default_factory=IntakeConfig)
    embedding: EmbeddingConfig = field(default_factory=EmbeddingConfig)
    salience: SalienceConfig = field(default_factory=SalienceConfig)
    recall: RecallConfig = field(default_factory=RecallConfig)
    forgetting: ForgettingConfig = field(default_factory=ForgettingConfig)

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            expected = _SECTIONS[f.name]
            if isinstance(value, Mapping):
                value = _section(f.name, {}, value)
                object.__setattr__(self, f.name, value)
            if not isinstance(value, expected):
                raise ConfigError(f"{f.name} must be a {expected.__name__}, got {value!r}")

    @staticmethod
    def field_names() -> list[str]:
        """Every section-qualified field name ``with_overrides`` accepts."""
        return [
            f"{name}.{f.name}" for name, cls in _SECTIONS.items() for f in dataclasses.fields(cls)
        ]

    def with_overrides(self, **changes: Any) -> EpisegConfig:
        """A copy with ``changes`` applied, validated like the constructor.

        Keys are section-qualified field names (``"semantic.threshold"``), a
        mapping's entry (``"policy.weights.drift"``) or a whole section
        (``semantic=SemanticConfig(...)`` or a mapping of its fields).
        """
        per_section: dict[str, dict[str, Any]] = {}
        whole: dict[str, Any] = {}
        valid = set(self.field_names())
        for key, value in changes.items():
            section, _, rest = key.partition(".")
            if not rest and section in _SECTIONS:
                whole[section] = value
                continue
            name, _, entry = rest.partition(".")
            if f"{section}.{name}" not in valid:
                raise ConfigError(
                    f"unknown config field {key!r}; valid: {', '.join(sorted(valid))}"
                )
            if entry:
                current = per_section.get(section, {}).get(name)
                if current is None:
                    current = dict(getattr(getattr(self, section), name))
                current[entry] = value
                value = current
            per_section.setdefault(section, {})[name] = value
        replaced = dict(whole)
        for section, fields in per_section.items():
            base = whole.get(section, getattr(self, section))
            replaced[section] = _section(section, base, fields)
        return dataclasses.replace(self, **replaced)


_SECTIONS: dict[str, type] = {
    "window": WindowConfig,
    "semantic": SemanticConfig,
    "drift": DriftConfig,
    "judge": JudgeConfig,
    "policy": PolicyConfig,
    "combiner": CombinerConfig,
    "intake": IntakeConfig,
    "embedding": EmbeddingConfig,
    "salience": SalienceConfig,
    "recall": RecallConfig,
    "forgetting": ForgettingConfig,
}


def _section(name: str, base: Any, fields: Mapping[str, Any]) -> Any:
    cls = _SECTIONS[name]
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(fields) - known)
    if unknown:
        valid = ", ".join(f"{name}.{k}" for k in sorted(known))
        raise ConfigError(f"unknown config field(s) {unknown} in {name}; valid: {valid}")
    if isinstance(base, Mapping):
        base = cls(**base)
    elif not dataclasses.is_dataclass(base) or isinstance(base, type):
        base = cls()
    return dataclasses.replace(base, **fields)
