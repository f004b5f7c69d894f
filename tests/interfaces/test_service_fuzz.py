"""Schemathesis against the real server's /openapi.json: no input produces a 5xx.

Each operation gets up to 50 generated cases (valid and invalid bodies,
parameters and headers), sent with a valid key over real HTTP; every response
must be a non-5xx that conforms to the documented schema.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from fastapi import FastAPI
from hypothesis import HealthCheck, given, settings

from tests.interfaces.helpers import KEY_A, LiveServer

if TYPE_CHECKING:
    import schemathesis

pytestmark = pytest.mark.slow

OPERATIONS = [
    "POST /v1/turns",
    "POST /v1/turns:batch",
    "POST /v1/flush",
    "GET /v1/episodes",
    "POST /v1/recall",
    "POST /v1/used",
    "DELETE /v1/episode",
    "GET /v1/episode",
    "PATCH /v1/episode",
    "POST /v1/episode/unarchive",
    "GET /v1/healthz",
]
# Generated ids name no stored episode, so 404 is the right answer to every case of these.
BY_EPISODE_ID = {
    "POST /v1/used",
    "DELETE /v1/episode",
    "GET /v1/episode",
    "PATCH /v1/episode",
    "POST /v1/episode/unarchive",
}


class TestServiceFuzz:
    @pytest.mark.parametrize("label", OPERATIONS)
    def test_no_server_errors(self, live_server: LiveServer, label: str) -> None:
        import schemathesis  # here: the fast tier collects this module without running it
        from schemathesis.checks import not_a_server_error
        from schemathesis.specs.openapi.checks import response_schema_conformance

        schema = schemathesis.openapi.from_url(f"{live_server.url}/openapi.json")
        operation = schema.find_operation_by_label(label)
        assert operation is not None, f"{label} missing from /openapi.json"
        seen: list[int] = []

        @given(case=operation.as_strategy())
        @settings(
            max_examples=50,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        )
        def check(case: schemathesis.Case) -> None:  # type: ignore[type-arg]
            response = case.call_and_validate(
                headers={"Authorization": f"Bearer {KEY_A}"},
                checks=[not_a_server_error, response_schema_conformance],
            )
            seen.append(response.status_code)

        check()
        assert seen and all(code < 500 for code in seen)
        if label in BY_EPISODE_ID:
            assert set(seen) <= {401, 404, 413, 422}, seen
        else:
            assert any(code < 300 for code in seen), f"no case of {label} was accepted: {seen}"

    def test_run_would_catch_a_5xx(self, live_server: LiveServer) -> None:
        """The control: the same check fails against a server that answers 500."""
        import schemathesis
        from schemathesis.checks import not_a_server_error

        broken = FastAPI()

        @broken.get("/v1/healthz")
        def healthz() -> dict[str, str]:
            raise RuntimeError("boom")

        other = LiveServer(broken)
        try:
            schema = schemathesis.openapi.from_url(f"{live_server.url}/openapi.json")
            operation = schema.find_operation_by_label("GET /v1/healthz")
            assert operation is not None
            case = operation.Case()
            with pytest.raises(BaseException) as failure:  # a schemathesis FailureGroup
                case.call_and_validate(base_url=other.url, checks=[not_a_server_error])
            assert "Server error" in "".join(
                str(e) for e in getattr(failure.value, "exceptions", [failure.value])
            )
        finally:
            other.stop()
