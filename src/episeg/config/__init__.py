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

from episeg.config.episeg_config import EpisegConfig
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
from episeg.types import JudgeGate

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
    "StoreConfig",
    "WindowConfig",
]
