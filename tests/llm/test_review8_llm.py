"""Review 8 of the LLM judge and scorer paths (F178-F184), the real SDKs on a loopback server.

- F178: a lone surrogate in a server's error text made ``observe`` raise after intake, and a
  re-sent turn was then lost at the next start.
- F179: an API key a server echoed reached the logs, the journal and stored reasons.
- F180: the salience scorer waited out a ``Retry-After`` of up to 60 s under the tenant's lock.
- F181: replaying a session counted its turns and judge calls again.
- F182: a huge OpenAI ``refusal`` was copied whole into errors, the journal and the logs.
- F183: an integer of 5,000 digits in a reply escaped as a raw ``ValueError``.
- F184: ``judge.timeout = true`` was read as 1 s, and LLM fields with no LLM kind were ignored.
"""

from __future__ import annotations

import glob
import json
import logging
import time
from pathlib import Path

import pytest
from pydantic import ValidationError

from episeg.config import EpisegConfig
from episeg.errors import JudgeError, ScoringError
from episeg.interfaces.settings import EpisegSettings
from episeg.judges import AnthropicJudge, OpenAICompatibleJudge
from episeg.memory import Memory
from episeg.salience import LLMSalienceScorer
from episeg.testing import HashingEmbedder, InMemoryBackend, LoopbackLLMServer, Reply
from episeg.types import Turn

EVERY_TURN = EpisegConfig().with_overrides(**{"judge.gate": "periodic", "judge.every": 1})
KEY = "sk-live-SECRET0123456789abcdef"


def _memory(path: Path, judge: object, scorer: object) -> Memory:
    return Memory(
        path=path,
        embedder=HashingEmbedder(),
        judge=judge,  # type: ignore[arg-type]
        scorer=scorer,  # type: ignore[arg-type]
        backend=InMemoryBackend(),
        config=EVERY_TURN,
    )


def _turn(n: int, text: str = "") -> Turn:
    return Turn(actor="user", text=text or f"auth step {n}", ts=float(n), id=f"t{n}", user="alice")


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_a_lone_surrogate_in_an_error_text_loses_no_turn(tmp_path: Path, dialect: str) -> None:
    with LoopbackLLMServer(default=Reply.error(400, message="bad \udc80 request")) as server:
        if dialect == "openai":
            url = server.openai_url
            judge: object = OpenAICompatibleJudge(model="m", api_key="k", base_url=url, timeout=2)
            scorer = LLMSalienceScorer.openai_compatible(
                model="m", api_key="k", base_url=url, timeout=2
            )
        else:
            url = server.anthropic_url
            judge = AnthropicJudge(api_key="k", base_url=url, timeout=2)
            scorer = LLMSalienceScorer.anthropic(api_key="k", base_url=url, timeout=2)
        memory = _memory(tmp_path, judge, scorer)
        for n in range(3):
            memory.observe(_turn(n))  # the judge failed on each: the signal abstains
        (episode,) = memory.flush()
        assert [t.id for t in episode.turns] == ["t0", "t1", "t2"]
        assert episode.salience is not None and "\\udc80" in episode.salience.reason
        memory.close()


def test_an_echoed_api_key_is_redacted_everywhere(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    message = f"Incorrect API key provided: {KEY}. You can find your API key online."
    with LoopbackLLMServer(default=Reply.error(401, message=message)) as server:
        url = server.openai_url
        judge = OpenAICompatibleJudge(model="m", api_key=KEY, base_url=url, timeout=1)
        scorer = LLMSalienceScorer.openai_compatible(
            model="m", api_key=KEY, base_url=url, timeout=1
        )
        memory = _memory(tmp_path, judge, scorer)
        for n, text in enumerate(["fix the auth bug", "token expired", "plan a trip", "book it"]):
            memory.observe(_turn(n, text))
        journal = b"".join(Path(p).read_bytes() for p in glob.glob(str(tmp_path / "journal*")))
        assert KEY.encode() not in journal
        stored = memory.flush()
        assert stored and all(KEY not in (e.salience.reason if e.salience else "") for e in stored)
        assert all(KEY not in v.reason for e in stored for v in e.boundary_verdicts)
        assert "Incorrect API key provided: ***" in stored[0].salience.reason  # type: ignore[union-attr]
        memory.close()
    assert KEY not in caplog.text


def test_the_scorer_does_not_wait_out_a_long_retry_after(tmp_path: Path) -> None:
    with LoopbackLLMServer(default=Reply.error(429, retry_after=3600)) as server:
        scorer = LLMSalienceScorer.openai_compatible(
            model="m", api_key="k", base_url=server.openai_url, timeout=10
        )
        memory = _memory(tmp_path, None, scorer)
        memory.observe(_turn(0))
        started = time.monotonic()
        (episode,) = memory.flush()
        assert time.monotonic() - started < 5.0
        assert episode.salience is not None and episode.salience.score is None
        assert "3600" in episode.salience.reason
        memory.close()


def test_replaying_a_session_does_not_count_its_work_again(tmp_path: Path) -> None:
    with LoopbackLLMServer(default=Reply.error(400, message="no")) as server:
        judge = OpenAICompatibleJudge(model="m", api_key="k", base_url=server.openai_url, timeout=2)
        memory = Memory(
            path=tmp_path,
            embedder=HashingEmbedder(),
            judge=judge,
            scorer=None,
            backend=InMemoryBackend(),
            config=EVERY_TURN,
            max_sessions=1,  # every switch of session drops one and replays the other
        )
        for n in range(6):
            for session in ("a", "b"):
                memory.observe(
                    Turn(actor="user", text=f"step {n}", ts=float(n), user="alice", session=session)
                )
        stats = memory.segmenter.stats
        assert stats["turns"] == 12
        assert stats["judge_calls"] == judge.calls == stats["judge_failures"]
        memory.close()


def test_a_huge_refusal_is_clipped(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    message = {"role": "assistant", "content": None, "refusal": "I cannot. " * 100_000}
    body = {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
    with LoopbackLLMServer(default=Reply.raw(json.dumps(body))) as server:
        judge = OpenAICompatibleJudge(model="m", api_key="k", base_url=server.openai_url, timeout=5)
        with pytest.raises(JudgeError) as caught:
            judge.judge("", [], _turn(0))
    assert "refusal" in str(caught.value) and len(str(caught.value)) <= 400
    assert len(caplog.text) < 20_000


def test_a_huge_integer_in_a_reply_is_a_typed_error() -> None:
    big = "9" * 5000
    reply = Reply.text('{"score": ' + big + ', "reason": "x"}')
    with LoopbackLLMServer(default=reply) as server:
        scorer = LLMSalienceScorer.openai_compatible(
            model="m", api_key="k", base_url=server.openai_url, timeout=2
        )
        with pytest.raises(ScoringError):
            scorer.ask("p")
    answer = {
        "id": "m",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [{"type": "text", "text": "{}"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    raw = json.dumps(answer).replace('"output_tokens": 1', '"output_tokens": ' + big)
    with LoopbackLLMServer(default=Reply.raw(raw)) as server:
        judge = AnthropicJudge(api_key="k", base_url=server.anthropic_url, timeout=2)
        with pytest.raises(JudgeError, match="number too long"):
            judge.judge("", [], _turn(0))


def test_settings_refuse_a_bool_timeout_and_llm_fields_without_an_llm() -> None:
    with pytest.raises(ValidationError, match="valid number"):
        EpisegSettings.model_validate({"judge": {"kind": "openai", "model": "m", "timeout": True}})
    with pytest.raises(ValidationError, match="no kind names one"):
        EpisegSettings.model_validate({"scorer": {"model": "gpt-4o"}})
    with pytest.raises(ValidationError, match="no kind names one"):
        EpisegSettings.model_validate({"judge": {"api_key_env": "NOPE", "timeout": 3}})
    # a kind given on purpose (e.g. EPISEG_JUDGE__KIND=none over a file's LLM) is obeyed, logged
    assert (
        EpisegSettings.model_validate(
            {"judge": {"kind": "none", "base_url": "http://x"}}
        ).build_judge()
        is None
    )
    assert (
        EpisegSettings.model_validate(
            {"judge": {"kind": "openai", "model": "m", "timeout": 3}}
        ).judge.timeout
        == 3
    )


class _SurrogateJudge:
    """A custom judge whose failure message holds a lone surrogate (not an LLM backend)."""

    name = "surrogate"
    calls = 0

    def judge(self, summary: str, recent: object, turn: Turn) -> object:
        self.calls += 1
        raise RuntimeError("upstream said \udc80")


def test_a_custom_judge_error_with_a_lone_surrogate_is_recorded(tmp_path: Path) -> None:
    memory = _memory(tmp_path, _SurrogateJudge(), None)
    for n in range(3):
        memory.observe(_turn(n))
    memory.close()
    memory = _memory(tmp_path, _SurrogateJudge(), None)  # the journal replays what it recorded
    (episode,) = memory.flush()
    assert [t.id for t in episode.turns] == ["t0", "t1", "t2"]
    memory.close()


def test_a_judge_error_with_a_lone_surrogate_is_logged_as_utf8(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The log line escapes it: a UTF-8 log file (or pytest-xdist's report channel) could not
    write it, and the worker that carried the line crashed."""
    for _ in range(2):  # the live failure (ERROR) and the replayed one (WARNING)
        memory = _memory(tmp_path, _SurrogateJudge(), None)
        for n in range(3):
            memory.observe(_turn(n))
        memory.close()
    failures = [r for r in caplog.records if "prediction-error judge" in r.getMessage()]
    assert {r.levelname for r in failures} == {"ERROR", "WARNING"}
    for record in failures:
        record.getMessage().encode("utf-8")  # raises UnicodeEncodeError on a lone surrogate
        assert "\\udc80" in record.getMessage()


def test_a_turn_the_journal_could_not_record_can_be_sent_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = _memory(tmp_path, None, None)
    real = memory.journal.record
    failures = [ValueError("a record that cannot be written")]

    def record(*args: object, **kwargs: object) -> object:
        if failures:
            raise failures.pop()
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(memory.journal, "record", record)
    with pytest.raises(ValueError):
        memory.observe(_turn(0))
    memory.observe(_turn(0))  # not a "duplicate": the first attempt was not accepted
    memory.close()
    memory = _memory(tmp_path, None, None)
    (episode,) = memory.flush()
    assert [t.id for t in episode.turns] == ["t0"]
    memory.close()
