"""Thin structured-output clients shared by the judges and the salience scorers.

Each backend sends one prompt at temperature 0, forces a JSON object that fits
a schema, retries transient failures with bounded backoff, and raises typed
errors: :class:`~episeg.errors.JudgeError` for an unusable reply,
:class:`BackendUnavailableJudgeError` (a ``BackendUnavailableError`` *and* a
``JudgeError``) when the server cannot be reached, times out or stays overloaded.

>>> from episeg.llm import AnthropicBackend, StructuredBackend
>>> isinstance(AnthropicBackend(api_key="k", base_url="http://127.0.0.1:9"), StructuredBackend)
True
"""

from episeg.llm._base import (
    BackendUnavailableJudgeError,
    RetryPolicy,
    StructuredBackend,
    extract_json_object,
    validate_reply,
)
from episeg.llm.anthropic_backend import AnthropicBackend
from episeg.llm.openai_backend import OpenAICompatibleBackend

__all__ = [
    "AnthropicBackend",
    "BackendUnavailableJudgeError",
    "OpenAICompatibleBackend",
    "RetryPolicy",
    "StructuredBackend",
    "extract_json_object",
    "validate_reply",
]
