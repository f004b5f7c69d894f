"""A marker tag inside code is content: it neither cuts nor leaves the text (F146).

An agent that explains its own protocol ("emit `<episode_boundary>` when a task
is done") or shows it in a code block used to cut the episode there and lose
the tag from its answer. Through the real ``Memory`` as well as ``scan_markers``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from episeg.memory import Memory
from episeg.segmentation.signals.marker import code_spans, scan_markers
from episeg.testing import HashingEmbedder
from episeg.types import Turn

PROTOCOL = "When a task is done, end your answer with:\n```\n<episode_boundary>\n```\nok?"


@pytest.mark.parametrize(
    ("text", "after", "clean"),
    [
        ("Emit `<episode_boundary>` when done.", None, None),
        ("Use ``a ` <episode_boundary> `` here.", None, None),
        (PROTOCOL, None, None),
        ("~~~xml\n<new_subtask>\n~~~~\n", None, None),
        ("```\nunclosed block <episode_boundary>", None, None),
        (PROTOCOL + " Done. <episode_boundary>", "episode_boundary", PROTOCOL + " Done."),
        ("`unmatched tick <episode_boundary>", "episode_boundary", "`unmatched tick"),
        ("Fixed `x`. <new_subtask>", "new_subtask", "Fixed `x`."),
    ],
)
def test_markers_inside_code_are_text(text: str, after: str | None, clean: str | None) -> None:
    scan = scan_markers(text)
    assert (scan.before, scan.after) == (None, after)
    assert scan.text == (text if clean is None else clean)  # code is never stripped


@pytest.mark.timeout(120)  # a hang guard: a backtracking regex took 95 s on the first text
def test_code_spans_of_adversarial_backticks() -> None:
    """Backtick runs of 399 lengths (none closes), fences that pair up, fences that never close."""
    runs = "".join("`" * k + "x " for k in range(1, 400)) + "<episode_boundary>"
    assert code_spans(runs) == [] and scan_markers(runs).after == "episode_boundary"
    pairs = "```\n" * 30_000 + "<episode_boundary>"
    assert len(code_spans(pairs)) == 15_000 and scan_markers(pairs).after == "episode_boundary"
    open_ = "``` x\n" * 20_000 + "<episode_boundary>"
    assert code_spans(open_) == [(0, len(open_))] and scan_markers(open_).after is None


def test_memory_keeps_one_episode_and_the_tag_when_the_agent_quotes_it(tmp_path: Path) -> None:
    memory = Memory(path=tmp_path, embedder=HashingEmbedder(), judge=None, scorer=None)
    turns = [
        ("user", "how should you mark the end of a task?"),
        ("assistant", PROTOCOL),
        ("user", "and then what happens?"),
        ("assistant", "The memory closes the episode there."),
    ]
    for n, (actor, text) in enumerate(turns):
        memory.observe(Turn(actor=actor, text=text, ts=float(n), user="u", session="s"))
    (episode,) = memory.flush("u")
    assert [t.text for t in episode.turns] == [text for _, text in turns]
