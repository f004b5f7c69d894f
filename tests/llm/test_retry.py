"""The retry loop (``episeg.llm._retry``, on tenacity): jittered backoff, Retry-After honoured.

The sleeps are recorded instead of slept; the HTTP behaviour through the real
SDKs is in ``test_llm_backends.py``.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from episeg.errors import BackendUnavailableJudgeError, JudgeError
from episeg.llm import RetryPolicy
from episeg.llm._retry import Failure, run_with_retries


def _failing(times: int, then: object = "ok") -> Callable[[], object]:
    left = [times]

    def attempt() -> object:
        if left[0] > 0:
            left[0] -= 1
            raise TimeoutError("slow")
        return then

    return attempt


def _classify(retry_after: float | None) -> Callable[[Exception], Failure | None]:
    def classify(exc: Exception) -> Failure | None:
        if isinstance(exc, TimeoutError):
            return Failure("timed out", retryable=True, unavailable=True, retry_after=retry_after)
        return None

    return classify


class TestRetryAfter:
    def test_honoured_beyond_the_backoff_cap(self) -> None:
        slept: list[float] = []
        policy = RetryPolicy(attempts=2, base_delay=0.5, max_delay=8.0)
        out = run_with_retries("t", policy, _failing(1), _classify(20.0), sleep=slept.append)
        assert out == "ok" and slept == [20.0]

    def test_capped_at_max_retry_after(self) -> None:
        slept: list[float] = []
        policy = RetryPolicy(attempts=3, max_retry_after=60.0)
        run_with_retries("t", policy, _failing(2), _classify(3600.0), sleep=slept.append)
        assert slept == [60.0, 60.0]


class TestBackoff:
    def test_exponential_with_jitter_within_bounds(self) -> None:
        slept: list[float] = []
        policy = RetryPolicy(attempts=5, base_delay=0.5, max_delay=8.0)
        run_with_retries("t", policy, _failing(4), _classify(None), sleep=slept.append)
        assert len(slept) == 4
        for n, wait in enumerate(slept):
            assert 0.5 * 2**n <= wait <= min(8.0, 0.5 * 2**n + 0.5)

    def test_jitter_spreads_clients(self) -> None:
        firsts = set()
        for _ in range(20):
            slept: list[float] = []
            run_with_retries(
                "t", RetryPolicy(attempts=2), _failing(1), _classify(None), sleep=slept.append
            )
            firsts.add(slept[0])
        assert len(firsts) > 1


class TestGivingUp:
    def test_typed_error_naming_the_attempts(self) -> None:
        with pytest.raises(BackendUnavailableJudgeError, match="after 3 attempt"):
            run_with_retries(
                "t", RetryPolicy(attempts=3), _failing(9), _classify(None), sleep=lambda s: None
            )

    def test_garbage_reply_is_not_retried(self) -> None:
        calls = []

        def attempt() -> object:
            calls.append(1)
            raise JudgeError("not JSON")

        with pytest.raises(JudgeError):
            run_with_retries("t", RetryPolicy(), attempt, _classify(None), sleep=lambda s: None)
        assert calls == [1]

    def test_unknown_exceptions_propagate_unchanged(self) -> None:
        def attempt() -> object:
            raise KeyError("bug")

        with pytest.raises(KeyError):
            run_with_retries("t", RetryPolicy(), attempt, _classify(None), sleep=lambda s: None)
