"""Segmentation through the real bundled all-MiniLM-L6-v2 embedder."""

from __future__ import annotations

import pytest

from episeg.config import CombinerConfig, EpisegConfig, WindowConfig
from episeg.defaults import default_embedder, default_judge
from episeg.interfaces.demo import sample_turns
from episeg.segmentation.segmenter import Segmenter
from episeg.types import Turn

# The hand-set policy with its old window: the behaviour these two demo tests pinned.
LAYERED = EpisegConfig(combiner=CombinerConfig(kind="layered"), window=WindowConfig(max_turns=24))

pytestmark = pytest.mark.slow

SEED_CONVO = [
    ("user", "I'm getting a 401 on the auth callback. Stack trace?"),
    ("assistant", "Looks like the JWT signing key got rotated."),
    ("user", "Where do I check that?"),
    ("assistant", "config/auth.yml, look for jwt_secret_rotation."),
    ("user", "Yep. The rotation timestamp is from yesterday."),
    ("user", "Different question — how do I bump the prod deploy version?"),
    ("assistant", "Edit infra/prod/version.tf and run terraform apply."),
    ("user", "Got it, applying now."),
]


def test_seed_example_splits_at_the_deploy_pivot(minilm):
    turns = [Turn(actor=a, text=t, ts=float(i)) for i, (a, t) in enumerate(SEED_CONVO)]
    episodes = Segmenter(config=LAYERED, embedder=minilm).segment(turns)
    assert [len(e.turns) for e in episodes] == [5, 3]
    assert episodes[1].turns[0].text.startswith("Different question")


def test_sample_conversation_gives_auth_deploy_lock_retry(minilm):
    episodes = Segmenter(config=LAYERED, embedder=minilm).segment(sample_turns())
    starts = [e.turns[0].id for e in episodes]
    assert starts == ["demo-00", "demo-08", "demo-12", "demo-16"]
    assert episodes[2].parent_id == episodes[1].id  # the terraform-lock detour
    assert episodes[3].boundary_verdicts[0].signal == "marker"
    assert "<episode_boundary>" not in episodes[2].turns[-1].text


def test_streaming_equals_batch_with_the_real_model(minilm):
    turns = sample_turns() + [
        Turn(actor=a, text=t, ts=float(i), session="seed", user="alice")
        for i, (a, t) in enumerate(SEED_CONVO)
    ]
    batch = Segmenter(embedder=minilm).segment(turns)
    stream_seg = Segmenter(embedder=minilm)
    stream = [e for t in turns for e in stream_seg.observe(t)] + stream_seg.flush()
    assert sorted(e.turn_ids for e in batch) == sorted(e.turn_ids for e in stream)


def test_learned_default_with_the_offline_judge_splits_the_seed_at_the_pivot(minilm):
    turns = [Turn(actor=a, text=t, ts=float(i)) for i, (a, t) in enumerate(SEED_CONVO)]
    seg = Segmenter(embedder=minilm, judge=default_judge(minilm))
    assert seg.learned is not None
    episodes = seg.segment(turns)
    assert [len(e.turns) for e in episodes] == [5, 3]
    assert 0 < seg.stats["judge_calls"] <= 3  # asked only in the model's uncertain band


def test_learned_default_keeps_a_task_whole_across_its_tool_error(minilm):
    seg = Segmenter(embedder=minilm, keep_trace=True)
    episodes = seg.segment(sample_turns())
    starts = [e.turns[0].id for e in episodes]
    assert "demo-11" not in starts and "demo-12" not in starts  # tool error, then the question
    assert episodes[-1].boundary_verdicts[-1].reason.startswith("marker:")
    assert seg.trace is not None
    assert all(
        t.verdicts[-1].reason.startswith(("learned", "marker:", "window:", "structural:"))
        for t in seg.trace
        if t.verdicts and t.verdicts[-1].signal == "combiner"
    )


def test_default_stack_gives_auth_deploy_retry_on_the_sample_conversation():
    """The product's promise on the bundled demo: three tasks, never one blob, never mid-task.

    The real default stack (ONNX MiniLM, learned combiner, offline judge), as ``episeg demo``
    builds it; the deploy may carry a sub-episode for the terraform lock (demo-12..15).
    """
    embedder = default_embedder()
    episodes = Segmenter(embedder=embedder, judge=default_judge(embedder)).segment(sample_turns())
    tasks: dict[str, list[str]] = {}  # top-level episode id -> its turns and its sub-episodes'
    for e in episodes:
        tasks.setdefault(e.parent_id or e.id, []).extend(e.turn_ids)
    spans = [(ids[0], ids[-1]) for ids in tasks.values()]
    assert spans == [("demo-00", "demo-07"), ("demo-08", "demo-15"), ("demo-16", "demo-19")]
    assert [e.turns[0].id for e in episodes if e.parent_id] in ([], ["demo-12"])
    deploy = next(e for e in episodes if e.turns[0].id == "demo-08")
    assert any(v.reason.startswith("structural: user announces") for v in deploy.boundary_verdicts)
