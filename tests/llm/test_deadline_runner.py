"""The wall-clock runner behind each attempt (``episeg.llm._deadline``, review 2 L2)."""

from __future__ import annotations

import threading
import time

import pytest

from episeg.llm._deadline import AttemptDeadlineExceeded, DeadlineRunner


def test_result_and_exception_pass_through() -> None:
    runner = DeadlineRunner(1.0)
    assert runner.run(lambda: 42) == 42
    with pytest.raises(TimeoutError, match="socket said so") as info:
        runner.run(lambda: (_ for _ in ()).throw(TimeoutError("socket said so")))
    assert not isinstance(info.value, AttemptDeadlineExceeded)  # the call's own error


def test_the_caller_waits_at_most_the_deadline() -> None:
    release = threading.Event()
    runner = DeadlineRunner(0.1)
    start = time.monotonic()
    with pytest.raises(AttemptDeadlineExceeded, match=r"within 0\.1 s"):
        runner.run(release.wait)
    assert time.monotonic() - start < 0.5
    release.set()


def test_workers_past_their_deadline_are_capped() -> None:
    release = threading.Event()
    runner = DeadlineRunner(0.05, max_in_flight=2)
    for _ in range(2):
        with pytest.raises(AttemptDeadlineExceeded):
            runner.run(release.wait)
    with pytest.raises(AttemptDeadlineExceeded, match="no worker free"):
        runner.run(lambda: 1)
    release.set()
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:  # the stuck workers end, their slots come back
        try:
            assert runner.run(lambda: 1) == 1
            break
        except AttemptDeadlineExceeded:
            time.sleep(0.01)
    else:
        pytest.fail("slots were not released")
