"""The whole configuration: :class:`EpisegConfig`, one field per section.

>>> cfg = EpisegConfig(window={"max_turns": 8})
>>> cfg.window.max_turns, cfg.with_overrides(**{"policy.weights.drift": 0}).policy.weights["drift"]
(8, 0.0)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from episeg.config.memory import (
    EmbeddingConfig,
    ForgettingConfig,
    RecallConfig,
    SalienceConfig,
    StoreConfig,
)
from episeg.config.segmentation import (
    CombinerConfig,
    DriftConfig,
    IntakeConfig,
    JudgeConfig,
    PolicyConfig,
    SemanticConfig,
    WindowConfig,
)
from episeg.errors import ConfigError

__all__ = ["EpisegConfig"]


@dataclass(frozen=True, kw_only=True)
class EpisegConfig:
    """Every tunable of episeg, one section per component, each validated on construction.

    Sections (see each class for its fields and defaults): ``window``
    (:class:`WindowConfig`), ``semantic`` (:class:`SemanticConfig`), ``drift``
    (:class:`DriftConfig`), ``judge`` (:class:`JudgeConfig`), ``policy``
    (:class:`PolicyConfig`), ``combiner`` (:class:`CombinerConfig`), ``intake``
    (:class:`IntakeConfig`), ``embedding`` (:class:`EmbeddingConfig`), ``salience``
    (:class:`SalienceConfig`), ``recall`` (:class:`RecallConfig`), ``forgetting``
    (:class:`ForgettingConfig`), ``store`` (:class:`StoreConfig`).
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
    store: StoreConfig = field(default_factory=StoreConfig)

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
                    current = getattr(getattr(self, section), name)
                if not isinstance(current, Mapping):
                    raise ConfigError(
                        f"config override {key!r}: {section}.{name} is not a mapping, "
                        f"so it has no entry {entry!r}"
                    )
                value = {**current, entry: value}
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
    "store": StoreConfig,
}


def _section(name: str, base: Any, fields: Mapping[str, Any]) -> Any:
    cls = _SECTIONS[name]
    _known_fields(name, cls, fields)
    if isinstance(base, Mapping):
        _known_fields(name, cls, base)
        base = cls(**base)
    elif not dataclasses.is_dataclass(base) or isinstance(base, type):
        base = cls()
    return dataclasses.replace(base, **fields)


def _known_fields(name: str, cls: type, fields: Mapping[str, Any]) -> None:
    """Raise :class:`ConfigError` for a key of ``fields`` that is no field of section ``name``."""
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(map(str, fields)) - known)
    if unknown:
        valid = ", ".join(f"{name}.{k}" for k in sorted(known))
        raise ConfigError(f"unknown config field(s) {unknown} in {name}; valid: {valid}")
