"""AnchoredOfflineScorer, anchors and calibration: logic with fakes, behaviour with MiniLM."""

from __future__ import annotations

import statistics

import pytest

from episeg.errors import ConfigError
from episeg.salience import (
    AnchoredOfflineScorer,
    AnchorSet,
    anchor_set,
    calibration_report,
)
from episeg.testing import HashingEmbedder
from episeg.types import Actor, Episode, Salience, Turn, TurnType
from episeg.typing import SalienceScorer


def episode(*turns: tuple[Actor, str] | tuple[Actor, str, TurnType], ep_id: str = "e") -> Episode:
    built = tuple(
        Turn(actor=t[0], text=t[1], ts=float(i), type=t[2] if len(t) > 2 else None)
        for i, t in enumerate(turns)
    )
    return Episode(
        id=ep_id, user="u", session="s", turns=built, summary="", opened_at=0.0, closed_at=1.0
    )


U, A, T = Actor.USER, Actor.ASSISTANT, Actor.TOOL


class TestAnchors:
    def test_builtins_and_scale_text(self) -> None:
        general = anchor_set("General")
        assert general.scale_text() == (
            "1 is purely mundane (e.g., brushing teeth, making bed) "
            "and 10 is extremely poignant (e.g., a break up, college "
            "acceptance)"
        )
        assert "boilerplate" in anchor_set("coding").low_label
        assert "root cause" in anchor_set("sre").high_label
        for name in ("general", "coding", "sre"):
            assert anchor_set(name).low_episodes and anchor_set(name).high_episodes

    def test_unknown_names_valid(self) -> None:
        with pytest.raises(ConfigError, match="coding, general, sre"):
            anchor_set("legal")

    def test_custom_needs_examples(self) -> None:
        with pytest.raises(ConfigError, match="at least one"):
            AnchorSet("x", "low", "high", (), ("big",))
        custom = AnchorSet("x", "low", "high", ("tiny",), ("big",))
        assert anchor_set(custom) is custom and custom.high_episodes == ("big",)


class TestAnchoredOfflineScorer:
    def test_protocol_and_name(self) -> None:
        scorer = AnchoredOfflineScorer(HashingEmbedder(), anchors="coding")
        assert isinstance(scorer, SalienceScorer)
        assert scorer.name == "anchored-offline:hashing:coding"

    def test_custom_anchor_places_episodes(self) -> None:
        anchors = AnchorSet(
            "garden",
            "watering plants",
            "a flood destroying the garden",
            ("water the tomato plants",),
            ("flood destroyed garden beds",),
        )
        scorer = AnchoredOfflineScorer(HashingEmbedder(dim=512), anchors=anchors)
        low = scorer.score(episode((U, "water the tomato plants")))
        high = scorer.score(episode((U, "flood destroyed garden beds")))
        assert low.score == 1 and high.score == 10

    def test_structural_evidence_adds_documented_points(self) -> None:
        flat = AnchorSet("flat", "low", "high", ("same text",), ("same text",))
        scorer = AnchoredOfflineScorer(HashingEmbedder(dim=512), anchors=flat)  # base 5.5
        plain = scorer.score(episode((U, "look at this"), (A, "ok")))
        errors = scorer.score(
            episode(
                (U, "look at this"),
                (T, "boom", TurnType.TOOL_ERROR),
                (T, "Traceback: boom"),
                (T, "error again"),
            )
        )
        corrected = scorer.score(episode((U, "look"), (A, "ok"), (U, "No, that's wrong")))
        long = scorer.score(episode(*[(U, f"turn {i}") for i in range(16)]))
        assert plain.score == 6  # round_half_up(5.5)
        assert errors.score == 7  # 5.5 + 0.75 * min(3, 2) = 7.0
        assert corrected.score == 6  # 5.5 + 0.5 = 6.0
        assert long.score == 7  # 5.5 + 0.5 * log2(16 / 4) = 6.5 -> 7
        assert "2 tool error(s)" not in errors.reason and "3 tool error(s)" in errors.reason

    def test_clipped_to_scale(self) -> None:
        scorer = AnchoredOfflineScorer(HashingEmbedder(dim=512), anchors="sre", error_weight=100.0)
        assert scorer.score(episode((T, "fatal error", TurnType.TOOL_ERROR))).score == 10

    def test_empty_episode_unscored(self) -> None:
        result = AnchoredOfflineScorer(HashingEmbedder()).score(episode())
        assert not result.is_scored and "no turns" in result.reason

    def test_long_episode_chunked_and_deterministic(self) -> None:
        embedder = HashingEmbedder(dim=128)
        scorer = AnchoredOfflineScorer(embedder, chunk_chars=100, max_chunks=4)
        ep = episode(*[(U, "word " * 40) for _ in range(30)])
        first = scorer.score(ep)
        assert scorer.score(ep) == first
        assert embedder.texts_embedded <= 8 + 4 + 4  # anchors once, then 4 chunks per score

    @pytest.mark.parametrize(
        ("kwargs", "match"),
        [
            ({"temperature": 0}, "temperature"),
            ({"error_weight": -1}, "error_weight"),
            ({"length_ref": 0}, "length_ref"),
        ],
    )
    def test_bad_values(self, kwargs: dict[str, float], match: str) -> None:
        with pytest.raises(ValueError, match=match):
            AnchoredOfflineScorer(HashingEmbedder(), **kwargs)  # type: ignore[arg-type]


class TestCalibration:
    def test_report_numbers(self) -> None:
        items = [Salience.scored(s, scorer="x") for s in (6, 7, 7, 8, 2)]
        report = calibration_report([*items, Salience.unscored("t", scorer="x")])
        assert report.histogram == (0, 1, 0, 0, 0, 1, 2, 1, 0, 0)
        assert report.mean == 6.0 and report.std == pytest.approx(2.0976, abs=1e-3)
        assert report.share_6_8 == 0.8 and report.clustered
        assert report.share_unscored == pytest.approx(1 / 6)
        text = report.render(width=10)
        assert "cluster at 6-8" in text and "  7 | ##########" in text
        assert report.to_dict()["histogram"][6] == 2

    def test_empty_and_all_unscored(self) -> None:
        empty = calibration_report([])
        assert empty.mean is None and empty.share_unscored == 0.0 and not empty.clustered
        failed = calibration_report([Salience.unscored("t", scorer="x")])
        assert failed.share_unscored == 1.0 and failed.std is None
        assert "0 scored" in failed.render()


EPISODES: dict[str, list[tuple[Actor, str]]] = {
    "smalltalk": [
        (U, "hi there, how are you today?"),
        (A, "doing well, thanks for asking! how can I help?"),
        (U, "nothing really, just saying hello"),
    ],
    "clarify": [(U, "is the staging cluster called stg-1 or staging-1?"), (A, "it's stg-1.")],
    "getter": [
        (U, "can you add a getter for the email field on User?"),
        (A, "def get_email(self): return self.email"),
    ],
    "weather": [(U, "what's the weather in Paris this weekend?"), (A, "sunny, around 22 C")],
    "typo": [
        (U, "fix the typo in the README install section"),
        (A, "fixed 'intall' to 'install'"),
        (U, "thanks"),
    ],
    "slow-job": [
        (U, "the nightly report job is slow, takes 40 minutes"),
        (A, "the query lacks an index on created_at; add one"),
        (T, "CREATE INDEX ok"),
        (U, "now 3 minutes, nice"),
    ],
    "deploy": [
        (U, "let's set up a blue-green deployment for the billing service"),
        (A, "we will run two environments and switch the load balancer"),
        (U, "how do we roll back?"),
        (A, "switch traffic back to blue within a minute"),
    ],
    "login-bug": [
        (U, "users report login fails intermittently"),
        (T, "error: redis connection refused"),
        (A, "the redis pool is too small under load; raise max connections"),
        (U, "no, the pool is fine, it's the timeout"),
        (A, "right: the connect timeout is 50ms; raise it to 500ms"),
        (T, "tests pass"),
    ],
    "outage": [
        (U, "production is down, all customers get 503 errors"),
        (T, "error: database connection pool exhausted, 0 of 200 free"),
        (A, "a deploy 20 minutes ago removed the pool limit and leaked connections"),
        (U, "roll it back now"),
        (T, "rollback complete, error rate 0%"),
        (A, "root cause: the connection leak in the new retry path; postmortem drafted"),
    ],
    "data-loss": [
        (U, "the primary database failed over and we lost an hour of orders"),
        (A, "replication lag was 60 minutes because the replica disk was full"),
        (U, "can we recover the orders?"),
        (A, "yes, from the write-ahead log archive; restoring now"),
        (T, "restored 18,432 orders"),
        (A, "incident resolved; root cause: disk alerting was missing"),
    ],
}


@pytest.mark.slow
class TestOfflineScorerMiniLM:
    @pytest.fixture(scope="class")
    @classmethod
    def scores(cls) -> dict[str, dict[str, int]]:
        from episeg.embedders import MiniLMEmbedder

        embedder = MiniLMEmbedder.default()
        out: dict[str, dict[str, int]] = {}
        for anchors in ("general", "sre", "coding"):
            scorer = AnchoredOfflineScorer(embedder, anchors=anchors)
            out[anchors] = {}
            for name, turns in EPISODES.items():
                result = scorer.score(episode(*turns, ep_id=name))
                assert result.score is not None
                out[anchors][name] = result.score
        return out

    @pytest.mark.parametrize("anchors", ["general", "sre"])
    def test_outage_far_above_small_talk(
        self, scores: dict[str, dict[str, int]], anchors: str
    ) -> None:
        got = scores[anchors]
        assert got["outage"] >= got["smalltalk"] + 5, got
        assert got["data-loss"] >= got["clarify"] + 4, got

    def test_sre_orders_incidents_over_questions(self, scores: dict[str, dict[str, int]]) -> None:
        got = scores["sre"]
        assert min(got["outage"], got["data-loss"], got["login-bug"]) > max(
            got["clarify"], got["smalltalk"], got["weather"]
        ), got

    def test_coding_getter_below_production_fix(self, scores: dict[str, dict[str, int]]) -> None:
        got = scores["coding"]
        assert got["getter"] <= 3 and got["login-bug"] >= 8, got

    @pytest.mark.parametrize("anchors", ["general", "sre", "coding"])
    def test_scores_spread_not_clustered(
        self, scores: dict[str, dict[str, int]], anchors: str
    ) -> None:
        values = list(scores[anchors].values())
        report = calibration_report(Salience.scored(v, scorer="x") for v in values)
        assert max(values) - min(values) >= 7, values
        assert statistics.pstdev(values) >= 2.5, values
        assert not report.clustered and len(set(values)) >= 5, values
