"""``DEFAULT``'s judge through the real parts: the offline judge only where it helps.

With real roles the default boundary model runs without a judge (the offline
judge made both roles-known tune parts worse; docs/RESULTS.md, "`Memory`'s
offline default with real roles: no judge"); with roles unknown, or the
layered combiner, ``DEFAULT`` is the offline ``LocalJudge``. An explicit judge
is always kept. Real MiniLM, embedded Chroma.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest

from episeg.config import CombinerConfig, EpisegConfig, PolicyConfig
from episeg.defaults import DEFAULT, offline_judge_helps, resolve_judge
from episeg.embedders import MiniLMEmbedder
from episeg.evaluation.configs import build_segment_fn
from episeg.interfaces.report.timeline import build_timelines
from episeg.interfaces.runtime import open_memory
from episeg.interfaces.settings import EpisegSettings
from episeg.judges import LocalJudge
from episeg.memory import Memory
from episeg.testing import HashingEmbedder
from episeg.types import Turn, Verdict

pytestmark = pytest.mark.slow

ROLES_UNKNOWN = EpisegConfig(
    combiner=CombinerConfig(kind="learned", roles_known=False),
    policy=PolicyConfig(hint_actors=("user", "assistant", "tool", "system")),
)
LAYERED = EpisegConfig(combiner=CombinerConfig(kind="layered"))

TWO_TASKS = [
    ("user", "Hi! I need to change my flight to the day after, reservation M05KNL."),
    ("assistant", "I can help with that. Let me look up reservation M05KNL."),
    ("tool", '{"reservation_id": "M05KNL", "origin": "ATL", "destination": "PHL"}'),
    ("assistant", "Your trip ATL to PHL is on May 23. Shall I move it to May 24?"),
    ("user", "Yes please, the cheapest economy seat."),
    ("assistant", "Done: you fly on May 24 in economy. Anything else?"),
    ("user", "Thank you so much for your help! Goodbye."),
    ("user", "Hello, my washing machine leaks water from the bottom drawer."),
    ("assistant", "Sorry to hear that. Is the detergent drawer clogged with residue?"),
    ("user", "It looks clean, but the hose behind the machine is wet."),
    ("assistant", "Then tighten the inlet hose and replace its rubber washer."),
]


def stream(user: str = "ann") -> list[Turn]:
    return [
        Turn(actor=a, text=t, ts=float(i), user=user, id=f"{user}-{i}")
        for i, (a, t) in enumerate(TWO_TASKS)
    ]


def judged(verdict_lists: Iterable[Sequence[Verdict]]) -> bool:
    """Whether any verdict came from the prediction-error signal (the judge's)."""
    return any(v.signal == "prediction" for vs in verdict_lists for v in vs)


def second_task(turn: Turn) -> bool:
    return int(str(turn.id).split("-")[1]) >= 7


def test_the_rule_follows_the_model_the_segmenter_builds(minilm: MiniLMEmbedder) -> None:
    assert offline_judge_helps(EpisegConfig(), minilm) is False  # roles-known learned model
    assert resolve_judge(DEFAULT, minilm, EpisegConfig()) is None
    assert resolve_judge(DEFAULT, minilm) is None  # config defaults to EpisegConfig()
    for config in (ROLES_UNKNOWN, LAYERED):
        assert offline_judge_helps(config, minilm) is True
        judge = resolve_judge(DEFAULT, minilm, config)
        assert isinstance(judge, LocalJudge)
    chat = EpisegConfig(combiner=CombinerConfig(kind="learned", weights="chat"))
    assert offline_judge_helps(chat, minilm) is True  # trained with roles unknown
    # an embedder the model was not trained on falls back to the layered policy
    assert isinstance(resolve_judge(DEFAULT, HashingEmbedder(), EpisegConfig()), LocalJudge)
    explicit = LocalJudge(minilm)
    assert resolve_judge(explicit, minilm, EpisegConfig()) is explicit
    assert resolve_judge(None, minilm, ROLES_UNKNOWN) is None


def test_memory_with_real_roles_asks_no_judge_and_still_cuts_the_tasks(
    tmp_path: Path, minilm: MiniLMEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level("INFO", logger="episeg.defaults"):
        memory = Memory(path=tmp_path / "known", embedder=minilm)
    assert memory.judge is None
    assert "the default judge: none" in caplog.text
    try:
        episodes = [e for t in stream() for e in memory.observe(t)] + memory.flush("ann")
        assert sum(len(e.turns) for e in episodes) == len(TWO_TASKS)  # every turn once
        task = [{second_task(t) for t in e.turns} for e in episodes]
        assert len(episodes) >= 2 and all(len(t) == 1 for t in task)  # no episode spans both
        assert not judged(e.boundary_verdicts for e in episodes)
        assert memory.sessions.stats["judge_calls"] == 0
        hits = memory.recall("ann", "my washing machine is leaking water", k=1)
        assert hits and all(map(second_task, hits[0].episode.turns))
    finally:
        memory.close()


def test_memory_with_roles_unknown_asks_the_offline_judge(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    memory = Memory(path=tmp_path / "unknown", embedder=minilm, config=ROLES_UNKNOWN)
    assert isinstance(memory.judge, LocalJudge)
    try:
        episodes = [e for t in stream() for e in memory.observe(t)] + memory.flush("ann")
        assert sum(len(e.turns) for e in episodes) == len(TWO_TASKS)
        assert len(episodes) >= 2 and judged(e.boundary_verdicts for e in episodes[1:])
    finally:
        memory.close()
    explicit = LocalJudge(minilm)
    kept = Memory(path=tmp_path / "explicit", embedder=minilm, judge=explicit)
    assert kept.judge is explicit  # an explicit judge is used even with real roles
    kept.close()


def test_settings_local_kind_and_the_service_memory_follow_the_rule(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    settings = EpisegSettings()
    assert settings.judge.kind == "local" and settings.build_judge() is DEFAULT
    memory = open_memory(tmp_path / "svc", embedder=minilm, settings=settings)
    assert memory.judge is None
    memory.close()
    memory = open_memory(
        tmp_path / "svc2", embedder=minilm, settings=settings, config=ROLES_UNKNOWN
    )
    assert isinstance(memory.judge, LocalJudge)
    memory.close()


def test_the_report_and_the_evaluation_show_what_memory_runs(minilm: MiniLMEmbedder) -> None:
    rows = lambda tl: [r.verdicts for t in tl for r in t.rows]  # noqa: E731
    assert not judged(rows(build_timelines(stream(), embedder=minilm)))
    assert judged(rows(build_timelines(stream(), embedder=minilm, config=ROLES_UNKNOWN)))
    turns = stream()
    known = build_segment_fn("memory", embedder=minilm, roles_known=True)
    assert known(turns) == build_segment_fn("learned", embedder=minilm, roles_known=True)(turns)
    assert known(turns)[1]["judge_calls"] == 0
    unknown = build_segment_fn("memory", embedder=minilm, roles_known=False)
    offline = build_segment_fn("learned+judge", embedder=minilm, roles_known=False)
    assert unknown(turns) == offline(turns)
