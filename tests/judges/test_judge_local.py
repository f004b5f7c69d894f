"""LocalJudge: logic with HashingEmbedder, behaviour with the real MiniLM."""

from __future__ import annotations

from typing import ClassVar

import pytest

from episeg.judges import LocalJudge
from episeg.testing import HashingEmbedder
from episeg.types import Actor, Decision, Turn
from episeg.typing import Judge

AUTH = [
    Turn(actor=Actor.USER, text="the auth service returns 401 for valid tokens", ts=0),
    Turn(actor=Actor.ASSISTANT, text="check token audience and auth clock skew", ts=1),
]


def _user(text: str) -> Turn:
    return Turn(actor=Actor.USER, text=text, ts=5)


class TestLocalJudge:
    def test_is_a_judge_and_counts(self) -> None:
        judge = LocalJudge(HashingEmbedder(dim=256))
        assert isinstance(judge, Judge)
        judge.judge("", AUTH, _user("auth clock skew"))
        judge.judge("", AUTH, _user("auth clock skew"))
        assert judge.calls == 2

    def test_first_turn_continues_with_its_keywords(self) -> None:
        answer = LocalJudge(HashingEmbedder()).judge("", [], _user("deploy the billing service"))
        assert answer.decision is Decision.CONTINUE
        assert answer.summary == "deploy billing service"

    def test_unrelated_turn_is_new(self) -> None:
        answer = LocalJudge(HashingEmbedder(dim=256)).judge(
            "auth 401 tokens", AUTH, _user("recommend a lasagna recipe with spinach")
        )
        assert answer.decision is Decision.BOUNDARY
        assert answer.summary.split() == ["recommend", "lasagna", "recipe", "spinach"]
        assert "embedding novelty" in answer.reason

    def test_related_turn_continues_and_summary_grows(self) -> None:
        answer = LocalJudge(HashingEmbedder(dim=256), summary_words=4).judge(
            "auth tokens", AUTH, _user("auth tokens expire too early")
        )
        assert answer.decision is Decision.CONTINUE
        assert answer.summary.split()[:2] == ["auth", "tokens"]
        assert len(answer.summary.split()) == 4

    def test_short_turn_never_opens(self) -> None:
        judge = LocalJudge(HashingEmbedder(dim=256))
        assert judge.judge("auth", AUTH, _user("great, cheers")).decision is Decision.CONTINUE

    def test_thresholds_are_respected(self) -> None:
        strict = LocalJudge(HashingEmbedder(dim=256), lexical_threshold=1.0)
        turn = _user("auth lasagna recipe spinach oven")  # one word seen: lexical 0.8
        assert strict.judge("auth", AUTH, turn).decision is Decision.CONTINUE
        loose = LocalJudge(HashingEmbedder(dim=256), lexical_threshold=0.5, embed_threshold=0.5)
        assert loose.judge("auth", AUTH, turn).decision is Decision.BOUNDARY

    def test_tool_error_rule(self) -> None:
        recent = [*AUTH, Turn(actor=Actor.TOOL, text="Traceback: KeyError 'aud'", ts=2)]
        turn = _user("why did the auth tokens check fail?")
        assert (
            LocalJudge(HashingEmbedder(dim=256)).judge("auth tokens", recent, turn).decision
            is Decision.CONTINUE
        )
        ruled = LocalJudge(HashingEmbedder(dim=256), tool_error_rule=True)
        assert ruled.judge("auth tokens", recent, turn).decision is Decision.SUB_EPISODE

    def test_deterministic(self) -> None:
        judge = LocalJudge(HashingEmbedder(dim=256))
        answers = {
            judge.judge("auth", AUTH, _user("cake recipe with cherries please")) for _ in range(3)
        }
        assert len(answers) == 1

    @pytest.mark.parametrize(
        ("kwargs", "match"),
        [
            ({"embed_threshold": 3.0}, "embed_threshold"),
            ({"lexical_threshold": -0.1}, "lexical_threshold"),
            ({"summary_words": 0}, "summary_words"),
        ],
    )
    def test_bad_values(self, kwargs: dict[str, float], match: str) -> None:
        with pytest.raises(ValueError, match=match):
            LocalJudge(HashingEmbedder(), **kwargs)  # type: ignore[arg-type]

    def test_rejects_non_embedder(self) -> None:
        with pytest.raises(TypeError, match="Embedder"):
            LocalJudge(object())  # type: ignore[arg-type]


@pytest.mark.slow
class TestLocalJudgeMiniLM:
    RECENT: ClassVar[list[Turn]] = [
        Turn(
            actor=Actor.USER,
            text="Our login endpoint returns 401 for tokens that should be valid.",
            ts=0,
        ),
        Turn(
            actor=Actor.ASSISTANT,
            text="Check whether the JWT audience claim matches the auth "
            "service configuration and whether clocks are skewed.",
            ts=1,
        ),
        Turn(
            actor=Actor.USER,
            text="The audience claim looks right, the token was issued a minute ago.",
            ts=2,
        ),
    ]

    @pytest.fixture(scope="class")
    @classmethod
    def judge(cls) -> LocalJudge:
        from episeg.embedders import MiniLMEmbedder

        return LocalJudge(MiniLMEmbedder.default())

    @pytest.mark.parametrize(
        "text",
        [
            "Could clock skew between the auth server and the API gateway cause the 401?",
            "The middleware rejects tokens whose expiry is in the past, could that be wrong?",
            "Let me paste the token validation middleware code so you can look.",
        ],
    )
    def test_same_task_continues(self, judge: LocalJudge, text: str) -> None:
        answer = judge.judge("login 401 jwt tokens auth", self.RECENT, _user(text))
        assert answer.decision is Decision.CONTINUE, answer.reason

    @pytest.mark.parametrize(
        "text",
        [
            "Can you recommend a good lasagna recipe with spinach for dinner tonight?",
            "What's the weather going to be like in Paris this weekend?",
            "Now let's set up the Kubernetes deployment pipeline for the billing service.",
        ],
    )
    def test_topic_change_is_new(self, judge: LocalJudge, text: str) -> None:
        answer = judge.judge("login 401 jwt tokens auth", self.RECENT, _user(text))
        assert answer.decision is Decision.BOUNDARY, answer.reason
