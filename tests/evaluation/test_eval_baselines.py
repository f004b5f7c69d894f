"""TextTiling, the even split and the degenerate references."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from episeg.embedders import MiniLMEmbedder
from episeg.errors import ConfigError
from episeg.evaluation.baselines import (
    depth_scores,
    even_boundaries,
    make_baseline,
    texttiling,
)
from episeg.evaluation.datasets import read_jsonl
from episeg.evaluation.metrics import check_boundaries, pk
from episeg.testing import HashingEmbedder
from episeg.types import Actor, Turn

TOPIC_A = ["the cat sat on the mat", "my cat likes the warm mat", "cats nap on mats all day"]
TOPIC_B = ["stock prices fell sharply", "the stock market prices", "investors sold stock"]


def _turns(texts: list[str]) -> list[Turn]:
    return [
        Turn(actor=Actor.USER if i % 2 == 0 else Actor.ASSISTANT, text=t, ts=30.0 * i)
        for i, t in enumerate(texts)
    ]


class TestTextTiling:
    def test_finds_the_topic_change(self) -> None:
        turns = _turns(TOPIC_A + TOPIC_B)
        assert texttiling(turns, block=2, smoothing=0) == [3]
        # Smoothing (Hearst's default) may move the valley by one turn on so short a curve.
        (cut,) = texttiling(turns, block=2)
        assert abs(cut - 3) <= 1

    @pytest.mark.slow
    def test_embedding_variant_finds_it_too(self, minilm: MiniLMEmbedder) -> None:
        turns = _turns(TOPIC_A + TOPIC_B)
        assert texttiling(turns, block=2, smoothing=0, embedder=minilm) == [3]

    def test_short_and_uniform_inputs(self) -> None:
        assert texttiling(_turns(["hi", "there"])) == []
        assert texttiling(_turns(["same words here"] * 8)) == []

    def test_depth_scores_climb_both_sides(self) -> None:
        assert depth_scores([0.8, 0.6, 0.2, 0.5, 0.9]) == pytest.approx([0, 0.2, 1.3, 0.4, 0])

    def test_bad_parameters(self) -> None:
        with pytest.raises(ConfigError):
            texttiling(_turns(TOPIC_A), block=0)

    def test_valid_boundaries_on_real_dialogues(self, tiage_dev: Path) -> None:
        dialogues = read_jsonl(tiage_dev, limit=40)
        found = 0
        for d in dialogues:
            hyp = texttiling(d.turns)
            assert check_boundaries(hyp, len(d)) == hyp
            found += len(hyp)
            assert 0.0 <= pk(d.boundaries, hyp, n=len(d)) <= 1.0
        assert found > 0, "TextTiling placed no boundary in 40 real dialogues"


class TestSimpleBaselines:
    def test_even(self) -> None:
        assert even_boundaries(9, every=3) == [3, 6]
        assert even_boundaries(3, every=5) == []
        with pytest.raises(ConfigError):
            even_boundaries(5, every=0)

    def test_degenerate(self) -> None:
        turns = _turns(TOPIC_A)
        assert make_baseline("none")(turns) == ([], {"judge_calls": 0, "embed_calls": 0})
        assert make_baseline("all")(turns)[0] == [1, 2]

    def test_make_baseline_errors(self) -> None:
        with pytest.raises(ConfigError, match="valid: texttiling"):
            make_baseline("random")
        with pytest.raises(ConfigError, match="every"):
            make_baseline("even")
        with pytest.raises(ConfigError, match="embedder"):
            make_baseline("texttiling-emb")

    def test_embedding_variant_counts_embeddings(self) -> None:
        fn = make_baseline("texttiling-emb", embedder=HashingEmbedder())
        assert fn(_turns(TOPIC_A + TOPIC_B))[1]["embed_calls"] == 6


def test_the_probe_chooses_its_threshold_out_of_fold(monkeypatch: pytest.MonkeyPatch) -> None:
    # Found by review: the threshold was chosen on the probabilities of the dialogues the
    # model was fitted on (in-sample), a weaker rule than episeg's out-of-fold one.
    from sklearn.linear_model import LogisticRegression

    from episeg.evaluation.datasets import Dialogue
    from episeg.evaluation.probe import train_probe
    from episeg.types import Turn

    fits: list[int] = []
    real_fit = LogisticRegression.fit

    def counting_fit(self: LogisticRegression, x: Any, y: Any) -> LogisticRegression:
        fits.append(len(y))
        return real_fit(self, x, y)

    monkeypatch.setattr(LogisticRegression, "fit", counting_fit)
    texts = ["cats purr", "cats nap", "cats purr again", "stocks fell", "stocks rose"]
    dialogues = [
        Dialogue(
            f"d{i}",
            "demo",
            [Turn(actor="user", text=f"{t} {i}", ts=float(j)) for j, t in enumerate(texts)],
            [3],
        )
        for i in range(10)
    ]
    train_probe(dialogues, HashingEmbedder(dim=32))
    assert fits[0] == 40 and len(fits) == 6 and sorted(fits[1:]) == [32] * 5  # all, then 5 folds


def test_the_probe_folds_keep_copies_of_a_dialogue_together(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Found by review: the probe's folds were per dialogue, so a SuperDialseg dialogue's copy
    # (same first turn, another id) was scored by a model trained on its twin.
    from sklearn.linear_model import LogisticRegression

    from episeg.evaluation.datasets import Dialogue
    from episeg.evaluation.probe import train_probe
    from episeg.types import Turn

    events: list[tuple[str, set[str]]] = []
    real_fit, real_proba = LogisticRegression.fit, LogisticRegression.predict_proba

    def text_of(x: Any) -> set[str]:
        return {by_row[tuple(np.round(row, 6))] for row in np.asarray(x)}

    def recording_fit(self: LogisticRegression, x: Any, y: Any) -> LogisticRegression:
        events.append(("fit", text_of(x)))
        return real_fit(self, x, y)

    def recording_proba(self: LogisticRegression, x: Any) -> Any:
        events.append(("score", text_of(x)))
        return real_proba(self, x)

    monkeypatch.setattr(LogisticRegression, "fit", recording_fit)
    monkeypatch.setattr(LogisticRegression, "predict_proba", recording_proba)
    dialogues = []
    for i in range(12):  # six stories, each twice under two ids
        story = i % 6
        texts = [f"story {story} opens", f"story {story} goes on", f"story {story} turns", "end"]
        turns = [Turn(actor="user", text=t, ts=float(j)) for j, t in enumerate(texts)]
        dialogues.append(Dialogue(f"d{i}", "demo", turns, [2]))
    from episeg.evaluation.probe import probe_features

    embedder = HashingEmbedder(dim=32)
    by_row: dict[tuple[float, ...], str] = {}
    for d in dialogues:
        rows = probe_features(embedder.embed([t.text for t in d.turns]))
        for row in rows:
            by_row.setdefault(tuple(np.round(row, 6)), d.turns[0].text)
    train_probe(dialogues, embedder)
    folds: list[tuple[set[str], set[str]]] = []
    for kind, stories in events[1:]:  # the first fit is the final model, on everything
        if kind == "fit":
            folds.append((stories, set()))
        else:
            folds[-1][1].update(stories)
    assert len(folds) == 5
    for trained, held in folds:
        assert held and not trained & held  # no story scored by a model that saw its copy
