"""segment_bench's "segmenter after a real encode" figure, with the real ONNX MiniLM."""

from __future__ import annotations

import pytest

from episeg.benchmarks.segment_bench import overhead_after_encode
from episeg.types import Turn

TEXTS = [
    "my login returns 401 since this morning",
    "Check the token audience and the clock skew.",
    "the clock was off by five minutes, fixed",
    "Good. Anything else?",
    "unrelated: can you recommend a lasagna recipe with spinach?",
    "Layer ricotta, spinach and sauce; bake 45 minutes at 190 C.",
]


@pytest.mark.slow
def test_after_encode_times_the_same_segmentation_as_the_tight_loop():
    from episeg.embedders import OnnxMiniLMEmbedder

    turns = [
        Turn(actor="user" if i % 2 == 0 else "assistant", text=t, ts=float(i), session="s")
        for i, t in enumerate(TEXTS)
    ]
    row = overhead_after_encode(turns, embedder=OnnxMiniLMEmbedder.default())
    assert row["turns"] == len(TEXTS)
    assert row["episodes"][0] == row["episodes"][1]
    assert row["us_per_turn_tight"] > 0 and row["us_per_turn_after_encode"] > 0
