"""A judge wrapper that records live answers for the journal and replays them.

:class:`JudgeTap` wraps the prediction-error judge. Live, it records each
answer (or failure) by turn id so the journal can keep it; during replay it
answers from those records and never calls the (paid) judge again.

>>> from episeg.testing import ScriptedJudge
>>> from episeg.types import Turn
>>> tap = JudgeTap(ScriptedJudge(["new"]))
>>> turn = Turn(actor="user", text="deploy?", ts=1.0, id="s:3")
>>> tap.judge("", [], turn).decision.value, tap.take("s:3")
('boundary', '{"decision": "boundary", "reason": "scripted", "summary": "about: deploy?"}')
>>> with tap.replaying({"s:3": '{"error": "timed out"}'}):
...     tap.judge("", [], turn)
Traceback (most recent call last):
...
episeg.errors.JudgeError: timed out
>>> tap.calls   # the replay did not reach the scripted judge
1
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

from episeg.errors import JudgeError
from episeg.types import Decision, JudgeAnswer, Turn
from episeg.typing import Judge

__all__ = ["JudgeTap"]

log = logging.getLogger(__name__)


class JudgeTap:
    """A :class:`~episeg.typing.Judge` that records live answers and replays them.

    Parameters
    ----------
    inner
        The real judge.
    """

    def __init__(self, inner: Judge) -> None:
        self.inner = inner
        self._recorded: dict[str, str] = {}
        self._replay: Mapping[str, str] | None = None
        self.replay_misses = 0

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def calls(self) -> int:
        return self.inner.calls

    def judge(self, summary: str, recent: Sequence[Turn], turn: Turn) -> JudgeAnswer:
        key = turn.id or ""
        if self._replay is not None:
            return _answer(self._replay, key, self)
        try:
            answer = self.inner.judge(summary, recent, turn)
        except Exception as exc:  # any failure (the prediction signal abstains on each)
            # ASCII: a judge's error text may hold a lone surrogate, which no journal can write
            self._recorded[key] = json.dumps({"error": str(exc)[:2000]}, ensure_ascii=True)
            raise
        self._recorded[key] = json.dumps(
            {"decision": answer.decision.value, "summary": answer.summary, "reason": answer.reason},
            ensure_ascii=False,
            sort_keys=True,
        )
        return answer

    def take(self, turn_id: str) -> str | None:
        """The JSON record of the judge's answer on ``turn_id`` (once), or ``None``."""
        return self._recorded.pop(turn_id, None)

    def take_for(self, turn: Turn | None) -> str | None:
        """:meth:`take` for ``turn`` (``None``: no turn was decided, so no record)."""
        return self.take(turn.id or "") if turn is not None else None

    def clear(self) -> None:
        """Forget unclaimed records (e.g. of a refused or duplicate turn)."""
        self._recorded.clear()

    @contextmanager
    def replaying(self, records: Mapping[str, str]) -> Iterator[None]:
        """Answer from ``records`` (turn id -> JSON) instead of the real judge."""
        self._replay = records
        try:
            yield
        finally:
            self._replay = None


def _answer(records: Mapping[str, str], key: str, tap: JudgeTap) -> JudgeAnswer:
    raw = records.get(key)
    if raw is None:  # the live run did not ask here: do not pay for a new answer
        tap.replay_misses += 1
        log.warning(
            "replay asked the judge about turn %s, which the live run did not; "
            "answering with a judge failure (abstain)",
            key,
        )
        raise JudgeError(f"no recorded judge answer for replayed turn {key}")
    data = json.loads(raw)
    if "error" in data:
        raise JudgeError(str(data["error"]))
    return JudgeAnswer(
        decision=Decision.parse(data["decision"]),
        summary=str(data["summary"]),
        reason=str(data["reason"]),
    )
