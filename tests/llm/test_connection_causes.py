"""A connection error whose cause no retry can fix is not retried, and names it (review 2, L4)."""

from __future__ import annotations

import httpx2
import openai

from episeg.llm._retry import classify_connection


def _connection_error(cause: Exception) -> openai.APIConnectionError:
    request = httpx2.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    try:
        try:
            raise cause
        except Exception as inner:
            raise openai.APIConnectionError(request=request) from inner
    except openai.APIConnectionError as exc:
        return exc


def test_a_request_the_http_layer_refuses_to_send_is_not_retried() -> None:
    for cause in (
        httpx2.LocalProtocolError("Illegal header value b'Bearer k\\n'"),
        httpx2.UnsupportedProtocol("Request URL is missing an 'http://' or 'https://' protocol."),
    ):
        failure = classify_connection(_connection_error(cause))
        assert not failure.retryable and failure.unavailable
        assert type(cause).__name__ in failure.message


def test_a_refused_connection_is_retried_and_names_its_cause() -> None:
    failure = classify_connection(_connection_error(httpx2.ConnectError("refused")))
    assert failure.retryable and failure.unavailable
    assert "ConnectError('refused')" in failure.message
