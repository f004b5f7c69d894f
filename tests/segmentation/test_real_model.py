"""Segmentation through the real bundled all-MiniLM-L6-v2 embedder."""

from __future__ import annotations

import pytest

from episeg.interfaces.demo import sample_turns
from episeg.segmentation.segmenter import Segmenter
from episeg.types import Turn

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
    episodes = Segmenter(embedder=minilm).segment(turns)
    assert [len(e.turns) for e in episodes] == [5, 3]
    assert episodes[1].turns[0].text.startswith("Different question")


def test_sample_conversation_gives_auth_deploy_lock_retry(minilm):
    episodes = Segmenter(embedder=minilm).segment(sample_turns())
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
