"""Constructor checks of the SDK backends' connection settings: API key and base URL.

A key read from a file with its trailing newline, a pasted smart quote, or a
``base_url`` without ``http://`` can never make a request; the SDK would fail
every attempt as a "connection error" and the retry loop would pay for each.
They are refused when the backend is built, with a
:class:`~episeg.errors.ConfigError` that names the problem (never the key).

>>> from episeg.llm._config import check_api_key, check_base_url
>>> check_api_key("sk-ant-123\\n", "ANTHROPIC_API_KEY")
Traceback (most recent call last):
...
episeg.errors.ConfigError: the API key (api_key= or ANTHROPIC_API_KEY) has a whitespace or \
non-printable character at position 10; keys are printable ASCII without spaces
>>> check_base_url("127.0.0.1:11434/v1", "OPENAI_BASE_URL")
Traceback (most recent call last):
...
episeg.errors.ConfigError: base_url (or OPENAI_BASE_URL) must be an http:// or https:// URL \
with a host, got '127.0.0.1:11434/v1'
>>> check_base_url(None, "OPENAI_BASE_URL") is None
True
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from episeg.errors import ConfigError

__all__ = ["check_api_key", "check_base_url"]


def check_api_key(key: str, env_name: str) -> str:
    """``key`` if it can be sent in an HTTP header: printable ASCII, no whitespace."""
    if not isinstance(key, str):
        raise ConfigError(f"the API key must be a string, got {type(key).__name__}")
    for position, char in enumerate(key):
        if not char.isascii():
            raise ConfigError(
                f"the API key (api_key= or {env_name}) has a non-ASCII character at position "
                f"{position}; keys are printable ASCII without spaces"
            )
        if char.isspace() or not char.isprintable():
            raise ConfigError(
                f"the API key (api_key= or {env_name}) has a whitespace or non-printable "
                f"character at position {position}; keys are printable ASCII without spaces"
            )
    return key


def check_base_url(base_url: str | None, env_name: str) -> str | None:
    """``base_url`` (or, when ``None``, the SDK's environment variable) if it is http(s)."""
    url = base_url if base_url is not None else os.environ.get(env_name) or None
    if url is None:
        return base_url
    if not isinstance(url, str):
        raise ConfigError(f"base_url must be a string, got {type(url).__name__}")
    try:
        parts = urlsplit(url)
        valid = (
            parts.scheme.lower() in ("http", "https")
            and bool(parts.hostname)
            and (parts.port is None or parts.port > 0)
        )
    except ValueError:  # e.g. an unclosed "[" of an IPv6 host, a port out of range
        valid = False
    if not valid:
        raise ConfigError(
            f"base_url (or {env_name}) must be an http:// or https:// URL with a host, got {url!r}"
        )
    return base_url
