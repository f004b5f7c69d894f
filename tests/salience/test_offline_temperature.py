"""``AnchoredOfflineScorer`` at any temperature (review 2, L9): a stable sigmoid.

Before, ``math.exp`` overflowed for a small temperature and ``score`` raised
``OverflowError`` on every low-salience episode.
"""

from __future__ import annotations

import math

import pytest

from episeg.salience import AnchoredOfflineScorer
from episeg.testing import HashingEmbedder
from episeg.types import Episode, Turn

TEXTS = [
    "which dashboard shows the request rate?",
    "thanks, that's all for now",
    "production is down, root cause: the connection pool, 503 everywhere",
    "is the staging cluster called blue or green?",
]


def _episode(text: str) -> Episode:
    return Episode(
        id="e", user="u", session="s", summary="x", opened_at=0, closed_at=1,
        turns=(Turn(actor="user", text=text, ts=0),),
    )  # fmt: skip


@pytest.mark.parametrize("temperature", [1e-4, 1e-6, 1e-12])
def test_a_small_temperature_scores_every_episode(temperature: float) -> None:
    scorer = AnchoredOfflineScorer(HashingEmbedder(), anchors="sre", temperature=temperature)
    for text in TEXTS:
        salience = scorer.score(_episode(text))
        assert salience.score is not None and 1 <= salience.score <= 10


def test_scores_at_the_default_temperature_are_unchanged() -> None:
    """The sigmoid is the old expression, bit for bit, wherever that did not overflow."""
    from episeg.salience.offline import _sigmoid

    for x in [i / 8 for i in range(-5600, 5601)]:  # -700 .. 700
        assert _sigmoid(x) == 1.0 / (1.0 + math.exp(-x))
    for x in (-709.0, -745.0, -1e300, -math.inf):
        assert 0.0 <= _sigmoid(x) < 1e-300
    assert _sigmoid(1e300) == 1.0 and _sigmoid(math.inf) == 1.0
