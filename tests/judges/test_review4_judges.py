"""Review 4 (core), the judges: any script, custom backends, constructor checks (R4-C5, C8, C9)."""

from __future__ import annotations

import random
import string
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from episeg.errors import ConfigError, JudgeError
from episeg.judges import LLMJudge, LocalJudge
from episeg.testing import HashingEmbedder
from episeg.text import content_words, content_words_any_script
from episeg.types import Decision, Turn


class Orthogonal:
    """Every distinct text on its own axis: the embedding novelty is always at its maximum."""

    name = "orthogonal"
    dim = 64

    def __init__(self) -> None:
        self._axis: dict[str, int] = {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), np.float32)
        for row, text in enumerate(texts):
            out[row, self._axis.setdefault(text, len(self._axis) % self.dim)] = 1.0
        return out


def _judge(recent: list[str], new: str) -> tuple[Decision, str, str]:
    turns = [Turn(actor="user", text=t, ts=float(i)) for i, t in enumerate(recent)]
    answer = LocalJudge(Orthogonal()).judge("", turns, Turn(actor="user", text=new, ts=9.0))
    return answer.decision, answer.summary, answer.reason


class TestLocalJudgeReadsEveryScript:
    """R4-C5: only [a-z0-9] words were read, so Russian or Chinese turns never opened one."""

    @pytest.mark.parametrize(
        ("recent", "new"),
        [
            (
                ["сервис авторизации возвращает 401 для валидных токенов", "проверьте токен"],
                "не по теме: посоветуйте рецепт лазаньи со шпинатом",
            ),
            (["认证服务对有效令牌返回401", "检查令牌的受众"], "换个话题：推荐一个菠菜千层面的食谱"),
            (["東京の天気を教えて", "晴れです"], "新しいパソコンを買いたいです"),
            (
                ["인증 서비스가 401을 반환합니다", "토큰을 확인하세요"],
                "라자냐 레시피를 추천해 주세요",
            ),
        ],
    )
    def test_an_unrelated_turn_in_another_script_opens_an_episode(
        self, recent: list[str], new: str
    ) -> None:
        decision, _, reason = _judge(recent, new)
        assert decision is Decision.BOUNDARY, reason

    def test_a_related_turn_in_another_script_continues(self) -> None:
        recent = ["认证服务对有效令牌返回401", "检查令牌的受众"]
        decision, _, reason = _judge(recent, "令牌的受众检查过了，认证服务还是返回401")
        assert decision is Decision.CONTINUE and "lexical novelty" in reason

    def test_accented_words_keep_their_letters(self) -> None:
        _, summary, _ = _judge(["le service renvoie 401"], "recette de lasagnes aux épinards")
        assert "épinards" in summary.split()

    def test_english_reads_exactly_as_content_words(self) -> None:
        rng = random.Random(4)
        for _ in range(3000):
            text = "".join(rng.choice(string.printable) for _ in range(rng.randrange(80)))
            assert content_words_any_script(text) == content_words(text)

    def test_content_words_itself_is_unchanged(self) -> None:
        """The segmenter's features read it: still [a-z0-9] only (the model was trained so)."""
        assert content_words("Recette aux épinards, рецепт 401") == [
            "recette",
            "aux",
            "pinards",
            "401",
        ]


class Backend:
    """A custom StructuredBackend replying ``reply`` (the documented plug-in point)."""

    name = "custom"

    def __init__(self, reply: Any) -> None:
        self.reply = reply
        self.calls = 0

    def complete(self, *, system: str, prompt: str, tool_name: str, schema: Any) -> Any:
        self.calls += 1
        return self.reply


TURN = Turn(actor="user", text="now deploy", ts=1.0)


class TestLLMJudgeChecksACustomBackendsReply:
    """R4-C8: a custom backend's reply was used unchecked (KeyError, or a coerced summary)."""

    @pytest.mark.parametrize(
        ("reply", "message"),
        [
            ({"decision": "maybe", "summary": "x"}, "is not one of"),
            ({"decision": "continue"}, "lacks required field"),
            ({"decision": "continue", "summary": 42}, "is not a string"),
            ({"decision": "continue", "summary": ["a", "b"]}, "is not a string"),
            ({"decision": "new", "summary": "x", "extra": 1}, "unexpected field"),
            ("not a dict", "not a JSON object"),
        ],
    )
    def test_an_unusable_reply_is_a_judge_error(self, reply: Any, message: str) -> None:
        with pytest.raises(JudgeError, match=message):
            LLMJudge(Backend(reply)).judge("summary", [], TURN)

    def test_a_valid_reply_is_still_taken(self) -> None:
        backend = Backend({"decision": "new", "summary": "deploying"})
        answer = LLMJudge(backend).judge("s", [], TURN)
        assert (answer.decision, answer.summary) == (Decision.BOUNDARY, "deploying")


class TestJudgeConstructors:
    """R4-C9: non-integer caps were accepted, then every judge() raised a TypeError."""

    @pytest.mark.parametrize(
        "kwargs",
        [
            {"max_recent": 2.5},
            {"max_turn_chars": float("nan")},
            {"max_summary_chars": "300"},
            {"max_recent": True},
        ],
    )
    def test_llm_judge(self, kwargs: dict[str, Any]) -> None:
        name = next(iter(kwargs))
        with pytest.raises(ConfigError, match=f"{name} must be an integer >= "):
            LLMJudge(Backend({}), **kwargs)

    @pytest.mark.parametrize(
        ("kwargs", "message"),
        [
            ({"max_recent": 2.5}, "max_recent must be an integer >= 1"),
            ({"summary_words": 2.5}, "summary_words must be an integer >= 1"),
            ({"min_content_words": None}, "min_content_words must be an integer >= 1"),
            ({"embed_threshold": "0.5"}, r"embed_threshold must be a number in \[0, 2\]"),
            (
                {"lexical_threshold": float("nan")},
                r"lexical_threshold must be a number in \[0, 1\]",
            ),
        ],
    )
    def test_local_judge(self, kwargs: dict[str, Any], message: str) -> None:
        with pytest.raises(ConfigError, match=message):
            LocalJudge(HashingEmbedder(), **kwargs)

    def test_numpy_integers_are_integers(self) -> None:
        judge = LocalJudge(
            HashingEmbedder(),
            max_recent=np.int64(2),  # type: ignore[arg-type]
            summary_words=np.int32(3),  # type: ignore[arg-type]
        )
        turn = Turn(actor="user", text="alpha bravo charlie delta echo foxtrot", ts=2.0)
        assert len(judge.judge("", [TURN], turn).summary.split()) == 3
