"""Issue 12's probe failures that a single turn could cause (F1, F2, F4, F8, F10).

Each test drives a real ``Memory`` (real SQLite journal, embedded Chroma) and
checks both the refusal and that nothing else was hurt: other tenants keep
writing, nothing half-written stays in the journal.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from episeg.config import EpisegConfig
from episeg.durability.journal import Journal
from episeg.errors import StoreError, TurnValidationError
from episeg.judges import OpenAICompatibleJudge
from episeg.llm import RetryPolicy
from episeg.memory import Memory
from episeg.testing import HashingEmbedder, LoopbackLLMServer, Reply
from episeg.types import Turn


def _memory(path: Path, **kwargs: object) -> Memory:
    return Memory(path=path, embedder=HashingEmbedder(), judge=None, scorer=None, **kwargs)  # type: ignore[arg-type]


def _turn(**kw: Any) -> Turn:
    return Turn(**{"actor": "user", "text": "deploy prod", "ts": 1.0, **kw})


class TestLoneSurrogates:
    """F1: a lone surrogate (a non-UTF-8 file name read with surrogateescape)."""

    @pytest.mark.parametrize("field", ["id", "session", "text"])
    def test_refused_as_invalid_turn(self, field: str) -> None:
        with pytest.raises(TurnValidationError, match="surrogate"):
            _turn(**{field: "s\udc80"})

    def test_refusal_leaves_the_journal_usable_for_everyone(self, tmp_path: Path) -> None:
        mem = _memory(tmp_path)
        for field in ("id", "session", "text"):
            with pytest.raises(TurnValidationError):
                mem.observe(_turn(user="alice", **{field: "x\udc80"}))
        mem.observe(_turn(user="bob", session="s"))
        mem.observe(_turn(user="alice", session="s", ts=2.0))
        assert sorted(e.user for e in mem.flush()) == ["alice", "bob"]
        assert mem.journal.counts()["open_turns"] == 0


class TestJudgeReplySurrogate:
    """F2: the same lone surrogate arriving in an LLM judge's reply."""

    def test_reply_is_a_judge_failure_and_the_turn_is_kept(self, tmp_path: Path) -> None:
        with LoopbackLLMServer() as server:
            # the JSON escape "\udc80" decodes to a lone surrogate
            server.enqueue(*[Reply.raw('{"decision": "new", "summary": "x\\udc80"}')] * 8)
            judge = OpenAICompatibleJudge(
                model="m",
                api_key="k",
                base_url=server.openai_url,
                timeout=2.0,
                retry=RetryPolicy(attempts=1, base_delay=0.01, max_delay=0.01),
            )
            mem = Memory(
                path=tmp_path,
                embedder=HashingEmbedder(),
                judge=judge,
                scorer=None,
                config=EpisegConfig().with_overrides(
                    **{"judge.gate": "periodic", "judge.every": 1}
                ),
            )
            for n in range(4):
                mem.observe(_turn(text=f"turn {n} about the deploy", ts=float(n), user="alice"))
            asked = len(server.requests)
        assert asked >= 1
        assert mem.segmenter.stats["judge_failures"] >= 1
        stored = mem.flush()
        assert sum(len(e.turns) for e in stored) == 4
        mem.observe(_turn(user="bob"))  # the journal is not left in a transaction


class TestSeparatorInIds:
    """F4: ``\\x1f`` joins user, session and first turn id into an episode id."""

    @pytest.mark.parametrize(("session", "turn_id"), [("a\x1fb", "c"), ("a", "b\x1fc")])
    def test_control_characters_in_ids_are_refused(self, session: str, turn_id: str) -> None:
        with pytest.raises(TurnValidationError, match="not allowed in ids"):
            _turn(session=session, id=turn_id)

    def test_two_sessions_cannot_share_an_episode_id(self, tmp_path: Path) -> None:
        mem = _memory(tmp_path)
        mem.observe(_turn(user="u", session="a", id="b-c"))
        mem.observe(_turn(user="u", session="a-b", id="c"))
        ids = [e.id for e in mem.flush()]
        assert len(ids) == len(set(ids)) == 2


class TestExplicitIdInAutoFormat:
    """F8: a client id that looks like an auto id (``s:1``) must not block later auto ids."""

    def test_later_turns_without_ids_still_get_ids(self, tmp_path: Path) -> None:
        mem = _memory(tmp_path)
        mem.observe(_turn(user="u", session="s", id="s:1", ts=1.0))
        for n in range(2, 6):
            mem.observe(_turn(text=f"turn {n}", user="u", session="s", ts=float(n)))
        ids = [t.id for e in mem.flush() for t in e.turns]
        assert len(ids) == len(set(ids)) == 5
        assert ids[0] == "s:1"


class TestAbsurdTimestamps:
    """F10: times that cannot be seconds are refused before they poison a session."""

    @pytest.mark.parametrize("ts", [1e300, 1.7e12, -1e12])
    def test_refused_with_a_clear_error(self, ts: float) -> None:
        with pytest.raises(TurnValidationError, match="milliseconds by mistake"):
            _turn(ts=ts)

    def test_session_keeps_taking_real_times_after_a_refusal(self, tmp_path: Path) -> None:
        mem = _memory(tmp_path)
        with pytest.raises(TurnValidationError):
            mem.observe(_turn(user="u", session="s", ts=1_733_140_000_000.0))
        mem.observe(_turn(user="u", session="s", ts=1_733_140_000.0))
        assert [len(e.turns) for e in mem.flush()] == [1]

    def test_limits_still_allow_ordinary_clocks(self) -> None:
        assert _turn(ts=0.0).ts == 0.0
        assert math.isclose(_turn(ts=4_102_444_800.0).ts, 4_102_444_800.0)  # year 2100


class TestJournalNeverLeftInATransaction:
    """F1's root cause: a non-SQLite error inside a journal transaction left it open."""

    def test_unencodable_turn_rolls_back(self, tmp_path: Path) -> None:
        journal = Journal(tmp_path / "j.sqlite3")
        bad = _turn(user="u", session="s", id="ok")
        object.__setattr__(bad, "text", "x\udc80")  # bypass Turn's own check
        with pytest.raises(UnicodeEncodeError):
            journal.record(bad, np.ones(2, np.float32), judge=None, closed=(), checkpoint=None)
        good = _turn(user="u", session="s", id="next")
        journal.record(good, np.ones(2, np.float32), judge=None, closed=(), checkpoint=None)
        assert journal.counts()["open_turns"] == 1


class TestFeedbackStaysInItsTenant:
    """F21: feedback naming another tenant's results reinforces nothing, in neither tenant."""

    def test_bobs_results_are_refused_for_alice(self, tmp_path: Path) -> None:
        mem = _memory(tmp_path)
        mem.observe(_turn(text="alice deploys the prod release", user="alice"))
        mem.observe(_turn(text="bob rotates the jwt signing key", user="bob"))
        mem.flush()
        bobs = mem.recall("bob", "jwt key", k=1)
        bob_id = bobs[0].episode.id
        with pytest.raises(StoreError, match="unknown episode"):
            mem.feedback("alice", bobs, [bob_id])
        with pytest.raises(StoreError, match="unknown episode"):
            mem.confirm_used("alice", [bob_id])
        assert [e.recall_count for e in mem.episodes("bob")] == [0]
        assert [e.recall_count for e in mem.episodes("alice")] == [0]
        mem.confirm_used("bob", [bob_id])
        assert [e.recall_count for e in mem.episodes("bob")] == [1]
