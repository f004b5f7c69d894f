"""Thin structured-output clients shared by the judges and the salience scorers.

Each backend sends one prompt at temperature 0, forces a JSON object that fits
a schema, retries transient failures with bounded backoff, and raises typed
errors: :class:`~episeg.errors.JudgeError` for an unusable reply,
:class:`BackendUnavailableJudgeError` (a ``BackendUnavailableError`` *and* a
``JudgeError``) when the server cannot be reached, times out or stays overloaded,
and :class:`RequestRejectedError` (a ``JudgeError``) when it refuses the request
itself (HTTP 4xx), which nobody retries.

>>> from episeg.llm import AnthropicBackend, StructuredBackend
>>> isinstance(AnthropicBackend(api_key="k", base_url="http://127.0.0.1:9"), StructuredBackend)
True
"""

from episeg.errors import RequestRejectedError
from episeg.llm._base import (
    BackendUnavailableJudgeError,
    RetryPolicy,
    StructuredBackend,
    validate_reply,
)
from episeg.llm._counting import RequestCounter, count_requests, note_request
from episeg.llm._json import extract_json_object
from episeg.llm.anthropic_backend import AnthropicBackend
from episeg.llm.openai_backend import OpenAICompatibleBackend

__all__ = [
    "AnthropicBackend",
    "BackendUnavailableJudgeError",
    "OpenAICompatibleBackend",
    "RequestCounter",
    "RequestRejectedError",
    "RetryPolicy",
    "StructuredBackend",
    "count_requests",
    "extract_json_object",
    "note_request",
    "validate_reply",
]
