"""Review 4 (core), salience: long lines, non-finite values, constructor checks, anchors.

R4-C6, R4-C7, R4-C9 (the LLM scorer's half) and R4-C13.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from episeg.errors import ConfigError
from episeg.salience import AnchoredOfflineScorer, AnchorSet, LLMSalienceScorer
from episeg.testing import HashingEmbedder
from episeg.types import Episode, Turn

INCIDENT = "production is down, root cause: database pool exhausted, data loss incident resolved"
SMALL_TALK = "which dashboard shows the request rate? is the staging cluster called stg-1? "


def episode(*texts: str) -> Episode:
    turns = tuple(Turn(actor="user", text=t, ts=float(i)) for i, t in enumerate(texts))
    return Episode(
        id="e", user="u", session="s", turns=turns, summary="", opened_at=0.0, closed_at=1.0
    )


class TestOfflineLongLines:
    """R4-C6: a line was cut to ``chunk_chars``; everything after it was never embedded."""

    def test_the_end_of_a_long_single_line_counts(self) -> None:
        scorer = AnchoredOfflineScorer(HashingEmbedder(dim=512), anchors="sre")
        head = (SMALL_TALK * 20)[:1500]
        tail = (" " + INCIDENT) * 60
        alone = scorer.score(episode(head))
        joined = scorer.score(episode(head + tail))
        assert joined.reason != alone.reason
        assert joined.score is not None and alone.score is not None
        assert joined.score > alone.score + 4

    def test_a_long_line_is_embedded_in_pieces_within_the_caps(self) -> None:
        seen: list[int] = []

        class Recording(HashingEmbedder):
            def embed(self, texts: Sequence[str]) -> np.ndarray:
                seen.extend(len(t) for t in texts)
                return super().embed(texts)

        scorer = AnchoredOfflineScorer(Recording(dim=64), chunk_chars=100, max_chunks=4)
        scorer.score(episode("x" * 1000))
        pieces = seen[-4:]  # after the anchors: the episode's chunks
        assert len(seen) - len(scorer.anchors.low_episodes) - len(scorer.anchors.high_episodes) == 4
        assert all(80 <= n <= 100 for n in pieces)  # even pieces: 11 of 1006 characters

    def test_short_lines_are_chunked_as_before(self) -> None:
        scorer = AnchoredOfflineScorer(HashingEmbedder(dim=128), chunk_chars=100, max_chunks=4)
        ep = episode(*(["word " * 15] * 30))
        assert scorer._episode_vector(ep).shape == (128,)
        assert scorer.score(ep) == scorer.score(ep)


class NaNForEpisodes(HashingEmbedder):
    """A broken embedder: finite anchors, a NaN vector for the episode's text."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = super().embed(texts)
        if any(t.startswith("user:") for t in texts):
            out[:] = np.nan
        return out


class TestOfflineNonFinite:
    """R4-C7: a NaN became a confident 1; infinite tunables were accepted."""

    def test_a_non_finite_episode_vector_is_unscored_and_logged(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        salience = AnchoredOfflineScorer(NaNForEpisodes(dim=64), anchors="sre").score(
            episode(INCIDENT)
        )
        assert salience.score is None
        assert "non-finite embedding" in salience.reason
        assert "left unscored" in caplog.text

    @pytest.mark.parametrize(
        ("kwargs", "message"),
        [
            ({"temperature": float("inf")}, "temperature must be a finite number > 0"),
            ({"temperature": float("nan")}, "temperature must be a finite number > 0"),
            ({"temperature": 0}, "temperature must be a finite number > 0"),
            ({"error_weight": float("inf")}, "error_weight must be a finite number >= 0"),
            ({"length_weight": float("nan")}, "length_weight must be a finite number >= 0"),
            ({"correction_weight": "1"}, "correction_weight must be a finite number >= 0"),
            ({"chunk_chars": 2.5}, "chunk_chars must be an integer >= 1"),
            ({"max_chunks": True}, "max_chunks must be an integer >= 1"),
            ({"length_ref": float("inf")}, "length_ref must be an integer >= 1"),
        ],
    )
    def test_tunables_must_be_finite_and_of_their_kind(
        self, kwargs: dict[str, Any], message: str
    ) -> None:
        with pytest.raises(ConfigError, match=message):
            AnchoredOfflineScorer(HashingEmbedder(), **kwargs)


class Backend:
    name = "custom"
    calls = 0

    def complete(self, *, system: str, prompt: str, tool_name: str, schema: Any) -> Any:
        return {"score": 7}


class TestLLMScorerConstructor:
    """R4-C9: retries=1.5 or a NaN cap were accepted, then score() (never raises) raised."""

    @pytest.mark.parametrize(
        "kwargs",
        [
            {"retries": 1.5},
            {"retries": float("inf")},
            {"retries": "2"},
            {"retries": None},
            {"max_turn_chars": float("nan")},
            {"max_episode_chars": 2.5},
        ],
    )
    def test_non_integer_counts_are_refused(self, kwargs: dict[str, Any]) -> None:
        name = next(iter(kwargs))
        with pytest.raises(ConfigError, match=f"{name} must be an integer >= "):
            LLMSalienceScorer(Backend(), **kwargs)

    def test_a_prompt_that_cannot_be_rendered_is_unscored_not_raised(self) -> None:
        scorer = LLMSalienceScorer(Backend())
        broken = episode("fine")
        object.__setattr__(broken, "turns", (object(),))  # not a turn: rendering fails
        salience = scorer.score(broken)
        assert salience.score is None and "scorer failed" in salience.reason
        assert scorer.score(episode("prod outage root cause found")).score == 7


class TestAnchorSetFields:
    """R4-C13: a string where a tuple of strings is due was split into letters."""

    @pytest.mark.parametrize("field", [3, 4])
    def test_a_string_for_examples_is_refused(self, field: int) -> None:
        args: list[Any] = ["support", "a greeting", "an escalation", ("hello",), ("cancel",)]
        args[field] = "hello there"
        with pytest.raises(ConfigError, match="must be a tuple of strings, got the str"):
            AnchorSet(*args)

    def test_a_string_for_episodes_is_refused(self) -> None:
        with pytest.raises(ConfigError, match="high_episodes must be a tuple of strings"):
            AnchorSet("s", "lo", "hi", ("a",), ("b",), high_episodes="cancel now")  # type: ignore[arg-type]

    @pytest.mark.parametrize("index", [0, 1, 2])
    def test_names_and_labels_must_be_strings(self, index: int) -> None:
        args: list[Any] = ["support", "a greeting", "an escalation", ("hello",), ("cancel",)]
        args[index] = None
        with pytest.raises(ConfigError, match="must be a non-empty string, got None"):
            AnchorSet(*args)

    def test_lists_are_still_taken(self) -> None:
        anchors = AnchorSet("s", "lo", "hi", ["say hello"], ["threaten to cancel"])  # type: ignore[arg-type]
        assert anchors.low_examples == ("say hello",) and anchors.high_episodes == (
            "threaten to cancel",
        )
