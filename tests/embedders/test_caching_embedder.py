"""An empty CachingEmbedder (``len() == 0``, so falsy) is used as given, never swapped for MiniLM.

``embedder or default_embedder()`` once replaced it: the evaluation configs
built with ``CachingEmbedder(HashingEmbedder())`` silently ran (and loaded) the
real ONNX MiniLM. Each place below has ``default_embedder`` replaced by one that
fails, so a regression is a failure here, not a model load.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from episeg.config import EpisegConfig
from episeg.embedders import CachingEmbedder
from episeg.interfaces.report import timeline
from episeg.memory import Memory
from episeg.segmentation import segmenter
from episeg.testing import HashingEmbedder
from episeg.types import Actor, Turn
from episeg.typing import Embedder


def _no_default(config: EpisegConfig | None = None) -> Embedder:
    raise AssertionError("the default embedder was built although one was given")


@pytest.fixture
def empty_cache(monkeypatch: pytest.MonkeyPatch) -> CachingEmbedder:
    for module in (segmenter, timeline):
        monkeypatch.setattr(module, "default_embedder", _no_default)
    monkeypatch.setattr("episeg.memory.default_embedder", _no_default)
    emb = CachingEmbedder(HashingEmbedder(dim=32))
    assert len(emb) == 0 and not emb
    return emb


def test_segmenter_keeps_it(empty_cache: CachingEmbedder) -> None:
    seg = segmenter.Segmenter(embedder=empty_cache, signals={"window", "semantic"})
    assert seg.embedder is empty_cache
    seg.segment([Turn(actor=Actor.USER, text=f"turn {i}", ts=float(i)) for i in range(3)])
    assert empty_cache.inner_texts == 3


def test_memory_keeps_it(empty_cache: CachingEmbedder, tmp_path: Path) -> None:
    memory = Memory(path=tmp_path, embedder=empty_cache, judge=None, scorer=None)
    try:
        assert memory.embedder is empty_cache
    finally:
        memory.close()


def test_report_timeline_keeps_it(empty_cache: CachingEmbedder) -> None:
    turns = [Turn(actor=Actor.USER, text=f"turn {i}", ts=float(i)) for i in range(3)]
    (stream,) = timeline.build_timelines(turns, embedder=empty_cache)
    assert len(stream.rows) == 3 and empty_cache.inner_texts > 0
