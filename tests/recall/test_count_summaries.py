"""``recall.count_summaries``: ``max_words`` counts everything a hit carries, summary and dates too.

Review 8 of the memory evaluation found the default's budget counts turn words only: the
summaries and dates each hit also carries were 1.4-1.6x more text on LoCoMo dev. With the
option the whole answer fits the budget (real Chroma, the library's own ``Memory``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from episeg.config import EpisegConfig
from episeg.memory import Memory
from episeg.testing import HashingEmbedder
from episeg.types import Turn
from tests.memory_helpers import returned_words

TOPICS = [
    "deploy the billing service to prod with the new migration",
    "the billing deploy failed on the migration lock again",
    "retry logging for the billing worker drops lines",
    "billing worker retry logs now include the request id",
]


def _memory(path: Path, count: bool) -> Memory:
    config = EpisegConfig().with_overrides(**{"recall.count_summaries": count})
    return Memory(path=path, embedder=HashingEmbedder(), judge=None, scorer=None, config=config)


@pytest.mark.parametrize("budget", [25, 40, 60])
def test_the_whole_answer_fits_the_budget_when_summaries_count(tmp_path: Path, budget: int) -> None:
    answers = {}
    for count in (False, True):
        memory = _memory(tmp_path / str(count), count)
        for n, text in enumerate(TOPICS):
            memory.observe(Turn(actor="user", text=text, ts=float(n), user="u", session=f"s{n}"))
        memory.flush("u")
        answers[count] = memory.recall("u", "billing deploy retry", k=10, max_words=budget)
        memory.close()
    counted, default = answers[True], answers[False]
    assert counted and returned_words(counted) <= budget
    assert sum(len(t.text.split()) for h in default for t in h.turns) <= budget
    assert returned_words(default) > budget  # the default's summaries and dates come on top


def test_the_option_is_off_by_default_and_reaches_memory(tmp_path: Path) -> None:
    assert EpisegConfig().recall.count_summaries is False
    memory = _memory(tmp_path, True)
    assert memory.recaller("u").params.count_summaries is True
    memory.close()
