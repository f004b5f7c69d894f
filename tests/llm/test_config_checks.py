"""Settings that can never make a request are refused when the backend is built (review 2, L4).

Before, each was accepted and every judged turn paid for the attempts and the
backoff of a "connection error" (or a raw ``UnicodeEncodeError`` / ``OverflowError``).
"""

from __future__ import annotations

import pytest

from episeg.errors import ConfigError
from episeg.judges import AnthropicJudge, OpenAICompatibleJudge
from episeg.llm import AnthropicBackend, OpenAICompatibleBackend
from episeg.salience import LLMSalienceScorer

URL = "http://127.0.0.1:9"


@pytest.mark.parametrize(
    "key",
    ["sk-ant-123\n", " sk-123", "sk 123", "sk-\u201d123", "sk-\x00"],
    ids=["trailing-newline", "leading-space", "inner-space", "smart-quote", "nul"],
)
def test_a_key_that_cannot_go_in_a_header_is_refused(key: str) -> None:
    with pytest.raises(ConfigError, match="API key") as info:
        AnthropicBackend(api_key=key, base_url=URL)
    assert key.strip() not in str(info.value)  # the key itself is never printed
    with pytest.raises(ConfigError, match="API key"):
        OpenAICompatibleBackend(model="m", api_key=key, base_url=f"{URL}/v1")


def test_a_key_from_the_environment_is_checked_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-a-file\n")
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        OpenAICompatibleBackend(model="m", base_url=f"{URL}/v1")


@pytest.mark.parametrize(
    "url",
    ["127.0.0.1:11434/v1", "ftp://127.0.0.1/v1", "http://", "localhost", "http://[::1/v1"],
)
def test_a_base_url_that_is_not_http_is_refused(url: str) -> None:
    with pytest.raises(ConfigError, match="base_url"):
        OpenAICompatibleBackend(model="m", api_key="k", base_url=url)
    with pytest.raises(ConfigError, match="base_url"):
        AnthropicBackend(api_key="k", base_url=url)


def test_a_base_url_from_the_environment_is_checked_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "api.anthropic.com")
    with pytest.raises(ConfigError, match="ANTHROPIC_BASE_URL"):
        AnthropicBackend(api_key="k")


@pytest.mark.parametrize("timeout", [float("inf"), float("nan"), -1.0, 0.0])
def test_a_timeout_that_is_not_finite_and_positive_is_refused(timeout: float) -> None:
    with pytest.raises(ConfigError, match="timeout"):
        AnthropicBackend(api_key="k", base_url=URL, timeout=timeout)
    with pytest.raises(ConfigError, match="timeout"):
        OpenAICompatibleBackend(model="m", api_key="k", base_url=URL, timeout=timeout)
    with pytest.raises(ConfigError, match="timeout"):
        OpenAICompatibleJudge(model="m", api_key="k", base_url=URL, timeout=timeout)
    with pytest.raises(ConfigError, match="timeout"):
        AnthropicJudge(api_key="k", base_url=URL, timeout=timeout)
    with pytest.raises(ConfigError, match="timeout"):
        LLMSalienceScorer.anthropic(api_key="k", base_url=URL, timeout=timeout)


def test_good_settings_are_accepted() -> None:
    for url in ("http://127.0.0.1:11434/v1", "https://api.example.com/v1", "HTTP://host:80"):
        assert OpenAICompatibleBackend(model="m", api_key="sk-ok_1.2", base_url=url).calls == 0
    assert AnthropicBackend(api_key="sk-ant-api03-AbC", base_url=URL, timeout=0.01).calls == 0
