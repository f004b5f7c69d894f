"""One settings object for the CLI, the HTTP service and the MCP server (pydantic-settings).

It chooses the embedder backend, the judge (offline ``local``, ``anthropic``,
an ``openai``-compatible server such as Ollama or vLLM, or ``none``) and the
salience scorer (offline ``anchored``, ``anthropic``, ``openai`` or ``none``),
so the LLM judges are reachable from every interface, not only from Python.
Sources, highest first: environment variables (``EPISEG_`` prefix, ``__``
between levels), then a TOML file (``$EPISEG_CONFIG``, else ``./episeg.toml``
if present), then the defaults (the offline stack). API keys never sit in the
file: ``api_key_env`` names the environment variable that holds the key.
Values are read as ``--set`` reads them: a switch is ``true`` or ``false``
(not ``"yes"`` nor 1), a count an integer (not 1.0); an environment
variable's text is read as JSON first. A file that is not UTF-8 TOML is a
``ConfigError`` naming it (exit 2), like an invalid value.

.. code-block:: toml

    embedding_backend = "onnx"          # or "torch"
    idle_timeout = 1800                 # seconds; 0: open episodes wait for a flush
    [recall]
    warm_cache = false                  # true: keep each tenant's episodes decoded in memory
    cache_episodes = 256                # per tenant (docs/DEPLOYMENT.md, large tenants)
    count_summaries = false             # true: max_words also counts summaries and dates
    [forgetting]
    initial_days = 1.0                  # strength of an unconfirmed episode (R = exp(-t/S))
    salience_boost = 9.0                # salience n starts at n days (0: salience plays no part)
    archive_floor = 0.05                # maintain --archive: below this retention
    [store]
    sync_threshold = 1                  # writes per vector-index persist (docs/DEPLOYMENT.md)
    [judge]
    kind = "openai"                     # local | anthropic | openai | none
    model = "llama3.1"
    base_url = "http://127.0.0.1:11434/v1"
    [scorer]
    kind = "anchored"                   # anchored | anthropic | openai | none

>>> EpisegSettings().judge.kind, EpisegSettings().scorer.kind
('local', 'anchored')
>>> try:
...     EpisegSettings(judge={"kind": "openai"})
... except ValidationError as err:
...     print(err.errors()[0]["msg"])
Value error, kind 'openai' needs a model
"""

from __future__ import annotations

import logging
import os
import tomllib
from pathlib import Path
from typing import Any

from pydantic import (
    Field,
    ValidationError,
)
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from episeg.config import (
    EmbeddingConfig,
    EpisegConfig,
    ForgettingConfig,
    IntakeConfig,
    RecallConfig,
    StoreConfig,
)
from episeg.defaults import DEFAULT, Default
from episeg.errors import ConfigError
from episeg.interfaces.settings_sections import (
    ForgettingSettings,
    JudgeSettings,
    LLMSettings,
    Number,
    RecallSettings,
    ScorerSettings,
    StoreSettings,
)
from episeg.types import EmbedderBackend
from episeg.typing import Judge, SalienceScorer

__all__ = ["EpisegSettings", "LLMSettings", "load_settings"]

CONFIG_ENV = "EPISEG_CONFIG"
log = logging.getLogger("episeg.settings")
DEFAULT_FILE = "episeg.toml"


class EpisegSettings(BaseSettings):
    """Judge, scorer and embedder choices; see the module docstring for the sources."""

    model_config = SettingsConfigDict(
        env_prefix="EPISEG_", env_nested_delimiter="__", extra="forbid", frozen=True
    )
    embedding_backend: EmbedderBackend = EmbedderBackend.ONNX
    judge: JudgeSettings = JudgeSettings()
    scorer: ScorerSettings = ScorerSettings()
    recall: RecallSettings = RecallSettings()
    forgetting: ForgettingSettings = ForgettingSettings()
    store: StoreSettings = StoreSettings()
    idle_timeout: Number = Field(
        default=1800.0,
        ge=0,
        le=30 * 86400,
        description="seconds without a turn before a session's open episode is closed (0: never)",
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        _refuse_unknown_sections(settings_cls)
        toml = _config_file()
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        if toml is not None:
            if not Path(toml).is_file():
                raise ConfigError(f"{CONFIG_ENV}={toml}: no such file")
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=toml))
        return tuple(sources)

    def config(self) -> EpisegConfig:
        """The :class:`EpisegConfig` these settings imply (embedder, idle timeout, recall
        cache, forgetting, the store's ``sync_threshold``)."""
        return EpisegConfig(
            embedding=EmbeddingConfig(backend=self.embedding_backend),
            intake=IntakeConfig(idle_timeout=self.idle_timeout),
            recall=RecallConfig(
                warm_cache=self.recall.warm_cache,
                cache_episodes=self.recall.cache_episodes,
                count_summaries=self.recall.count_summaries,
            ),
            forgetting=ForgettingConfig(
                initial_days=self.forgetting.initial_days,
                salience_boost=self.forgetting.salience_boost,
                growth_days=self.forgetting.growth_days,
                archive_floor=self.forgetting.archive_floor,
            ),
            store=StoreConfig(sync_threshold=self.store.sync_threshold),
        )

    def build_judge(self) -> Judge | Default | None:
        """The configured judge.

        ``local`` is ``DEFAULT``, the offline default of
        :func:`~episeg.defaults.resolve_judge`: the local judge where it helps,
        none with the roles-known boundary model.
        """
        s = self.judge
        if s.kind == "local":
            return DEFAULT
        if s.kind == "none":
            return None
        if s.kind == "anthropic":
            from episeg.judges import AnthropicJudge

            extra: dict[str, Any] = {"model": s.model} if s.model else {}
            return AnthropicJudge(
                api_key=s.api_key(), base_url=s.base_url, timeout=s.timeout, **extra
            )
        from episeg.judges import OpenAICompatibleJudge

        return OpenAICompatibleJudge(
            model=s.model or "", api_key=s.api_key(), base_url=s.base_url, timeout=s.timeout
        )

    def build_scorer(self) -> SalienceScorer | Default | None:
        """The configured salience scorer (``DEFAULT``: the offline anchored scorer)."""
        s = self.scorer
        if s.kind == "anchored":
            return DEFAULT
        if s.kind == "none":
            return None
        from episeg.judges._base import judge_retry
        from episeg.llm import AnthropicBackend, OpenAICompatibleBackend
        from episeg.salience import LLMSalienceScorer

        # scoring runs inside observe and flush: a long Retry-After leaves the episode unscored
        retry = judge_retry(None, s.timeout)
        if s.kind == "anthropic":
            extra: dict[str, Any] = {"model": s.model} if s.model else {}
            backend: Any = AnthropicBackend(
                api_key=s.api_key(), base_url=s.base_url, timeout=s.timeout, retry=retry, **extra
            )
        else:
            backend = OpenAICompatibleBackend(
                model=s.model or "",
                api_key=s.api_key(),
                base_url=s.base_url,
                timeout=s.timeout,
                retry=retry,
            )
        return LLMSalienceScorer(backend)


def _refuse_unknown_sections(settings_cls: type[BaseSettings]) -> None:
    """``EPISEG_JUDG__KIND`` (no such section) is an error; pydantic-settings ignored it. A
    one-level typo cannot be told from ``EPISEG_KEYS_FILE`` and the like: unchecked."""
    for name in sorted(os.environ):
        if not name.upper().startswith("EPISEG_") or "__" not in name:
            continue
        section = name[len("EPISEG_") :].split("__", 1)[0].lower()
        if section not in settings_cls.model_fields:
            known = ", ".join(sorted(settings_cls.model_fields))
            raise ConfigError(f"{name}: no settings section {section!r}; sections: {known}")


def _config_file() -> str | None:
    """``$EPISEG_CONFIG``, else ``./episeg.toml`` if it exists, else ``None``."""
    return os.environ.get(CONFIG_ENV) or (DEFAULT_FILE if Path(DEFAULT_FILE).is_file() else None)


def load_settings() -> EpisegSettings:
    """The settings from the environment and the TOML file; ``ConfigError`` if invalid.

    A key the file or an ``EPISEG_<SECTION>__<FIELD>`` variable does not
    define is an error too (a misspelt setting is never silently the default);
    a top-level ``EPISEG_<NAME>`` that names no setting is not read here (other
    variables share the prefix: ``EPISEG_CONFIG``, ``EPISEG_CACHE_DIR``). A file
    that is not TOML, not UTF-8 or cannot be read is a ``ConfigError`` naming it.
    """
    try:
        return EpisegSettings()
    except ValidationError as exc:
        toml = _config_file()
        where = f" (file {toml}, environment EPISEG_*)" if toml else " (environment EPISEG_*)"
        raise ConfigError(f"invalid episeg settings{where}: {exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
        raise ConfigError(
            f"cannot read the episeg settings file {_config_file()} "
            f"({type(exc).__name__}: {exc}); it must be UTF-8 TOML"
        ) from None
