"""The sections of :class:`~episeg.interfaces.settings.EpisegSettings`: one model each.

Values are read as ``--set`` reads them: a switch is ``true`` or ``false`` (not
``"yes"`` nor 1), a count an integer (not 1.0); an environment variable's text is read
as JSON first.

>>> ForgettingSettings(initial_days=7).initial_days
7.0
>>> RecallSettings(warm_cache="true").warm_cache
True
"""

from __future__ import annotations

import json
import logging
import os
from typing import Annotated, Literal, Self

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, Strict, model_validator

from episeg.errors import ConfigError

__all__ = [
    "ForgettingSettings",
    "JudgeSettings",
    "LLMSettings",
    "Number",
    "RecallSettings",
    "ScorerSettings",
    "StoreSettings",
]

log = logging.getLogger("episeg.settings")


def _as_json(value: object) -> object:
    """A text value read as JSON, as ``--set`` reads one (``"true"``, ``"256"``); else as is."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


# A bool, int or number setting is what --set, HTTP and MCP accept: JSON's true/false
# and numbers (from an environment variable: their text), not "yes", 1 for true, 1.0 for 1.
Bool = Annotated[bool, Strict(), BeforeValidator(_as_json)]
Int = Annotated[int, Strict(), BeforeValidator(_as_json)]
Number = Annotated[float, Strict(), BeforeValidator(_as_json)]


class LLMSettings(BaseModel):
    """Which model judges (or scores) and how to reach it."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: str
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = Field(
        default=None, description="environment variable holding the API key"
    )
    timeout: Number = Field(default=10.0, gt=0, le=600)

    @model_validator(mode="after")
    def _needs_model(self) -> Self:
        if self.kind == "openai" and not self.model:
            raise ValueError("kind 'openai' needs a model")
        given = [
            n for n in ("model", "base_url", "api_key_env", "timeout") if n in self.model_fields_set
        ]
        if self.kind not in ("anthropic", "openai") and given:  # no LLM asked
            if "kind" not in self.model_fields_set:  # the offline default: kind forgotten?
                raise ValueError(
                    f"{given} configure an LLM, but no kind names one (the default "
                    f"{self.kind!r} asks none): set kind"
                )
            log.warning("kind %r asks no LLM: %s are not used", self.kind, given)
        return self

    def api_key(self) -> str | None:
        """The key in ``api_key_env`` (``None``: the SDK reads its own, e.g. ANTHROPIC_API_KEY)."""
        if self.api_key_env is None:
            return None
        key = os.environ.get(self.api_key_env)
        if not key:
            raise ConfigError(f"environment variable {self.api_key_env} (api_key_env) is not set")
        return key


class JudgeSettings(LLMSettings):
    kind: Literal["local", "anthropic", "openai", "none"] = "local"


class ScorerSettings(LLMSettings):
    kind: Literal["anchored", "anthropic", "openai", "none"] = "anchored"


class RecallSettings(BaseModel):
    """``[recall]``: the episode cache and the budget (:class:`~episeg.config.RecallConfig`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    warm_cache: Bool = False
    cache_episodes: Int = Field(default=256, ge=0)
    count_summaries: Bool = False


class StoreSettings(BaseModel):
    """``[store]``: how the tenants' collections are made (:class:`~episeg.config.StoreConfig`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    sync_threshold: Int = Field(default=1, ge=1)


class ForgettingSettings(BaseModel):
    """``[forgetting]``: how fast unconfirmed episodes fade (``ForgettingConfig``).

    Retention is ``exp(-t / S)`` with ``t`` the days since the episode closed, by its own
    turn times; ``S`` starts at ``initial_days * (1 + salience_boost * (score - 1) / 9)``
    and grows by ``growth_days`` with each confirmed use; ``maintain --archive`` archives
    below ``archive_floor``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    initial_days: Number = Field(default=1.0, gt=0, le=36500)
    salience_boost: Number = Field(default=9.0, ge=0, le=1000)
    growth_days: Number = Field(default=1.0, ge=0, le=36500)
    archive_floor: Number = Field(default=0.05, ge=0, le=1)
