"""The runner, its outputs (table, JSON, PNG), the named configs and the tuner."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from episeg.errors import ConfigError
from episeg.evaluation.configs import SEGMENTER_NAMES, build_segment_fn
from episeg.evaluation.datasets import Dialogue, read_jsonl
from episeg.evaluation.metrics import SegmentationError
from episeg.evaluation.report import results_from_dict
from episeg.evaluation.runner import evaluate, main
from episeg.evaluation.tune import CachingEmbedder, grid_search, parse_grid
from episeg.testing import HashingEmbedder
from episeg.types import Actor, Turn

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _dialogue(did: str, n: int, boundaries: list[int]) -> Dialogue:
    turns = [Turn(actor=Actor.USER, text=f"words {i}", ts=30.0 * i, session=did) for i in range(n)]
    return Dialogue(id=did, source="test", turns=turns, boundaries=boundaries)


class TestEvaluate:
    def test_scores_and_costs(self) -> None:
        gold = [_dialogue("a", 8, [4]), _dialogue("b", 6, [])]

        def fake(turns: Sequence[Turn]) -> tuple[list[int], dict[str, Any]]:
            return ([4] if len(turns) == 8 else [3]), {"judge_calls": 7, "embed_calls": len(turns)}

        r = evaluate(gold, fake, "fake", dataset="demo")
        # a: perfect (0.0). b: k = 3, hyp [3] splits probes i = 0, 1, 2 of 3 -> 1.0.
        assert r.pk == pytest.approx(0.5)
        assert (r.precision, r.recall) == (0.5, 1.0)
        assert r.f1 == pytest.approx(2 / 3)
        assert r.judge_calls_per_1k_turns == pytest.approx(1000 * 14 / 14)
        assert r.embed_calls_per_1k_turns == pytest.approx(1000.0)
        assert (r.turns, r.dialogues, r.hyp_boundaries, r.ref_boundaries) == (14, 2, 2, 1)

    def test_invalid_output_names_config_and_dialogue(self) -> None:
        with pytest.raises(SegmentationError, match="broken on dialogue a"):
            evaluate([_dialogue("a", 5, [2])], lambda t: ([0, 2], {}), "broken")

    def test_empty_input(self) -> None:
        with pytest.raises(SegmentationError, match="no dialogues"):
            evaluate([], lambda t: ([], {}), "x")


class TestMain:
    def test_writes_table_json_and_png(
        self, tiage_dev: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out_json, out_png = tmp_path / "r.json", tmp_path / "r.png"
        code = main(
            [
                "--data",
                str(tiage_dev),
                "--configs",
                "texttiling,even,none",
                "--limit",
                "15",
                "--json",
                str(out_json),
                "--plot",
                str(out_png),
            ]
        )
        assert code == 0
        table = capsys.readouterr().out
        assert "texttiling" in table and "Pk" in table
        document = json.loads(out_json.read_text())
        results = results_from_dict(document)
        assert [r.name for r in results] == ["texttiling", "even", "none"]
        assert all(r.dialogues == 15 and 0.0 <= r.pk <= 1.0 for r in results)
        assert out_png.read_bytes()[:8] == PNG_MAGIC
        _check_provenance(document["meta"]["provenance"])

    def test_unknown_config(self, tiage_dev: Path) -> None:
        with pytest.raises(ConfigError, match="unknown configuration"):
            main(["--data", str(tiage_dev), "--configs", "bogus", "--limit", "2"])


class TestConfigs:
    @pytest.mark.parametrize("name", SEGMENTER_NAMES)
    def test_segmenter_configs_tile_the_dialogue(self, name: str, tiage_dev: Path) -> None:
        dialogues = read_jsonl(tiage_dev, limit=6)
        emb = CachingEmbedder(HashingEmbedder(dim=64))
        fn = build_segment_fn(name, tuning=dialogues, embedder=emb)
        r = evaluate(dialogues, fn, name)
        assert r.embed_calls_per_1k_turns == pytest.approx(1000.0)
        assert (r.judge_calls_per_1k_turns > 0) == (name in ("prediction-local", "layered", "seed"))

    def test_even_uses_tuning_mean(self) -> None:
        tuning = [_dialogue("t", 12, [4, 8])]
        fn = build_segment_fn("even", tuning=tuning)
        assert fn(_dialogue("x", 10, []).turns)[0] == [4, 8]


class TestTune:
    def test_grid_search_picks_lowest_pk(self) -> None:
        gold = [_dialogue("a", 12, [3, 6, 9]), _dialogue("b", 9, [3, 6])]
        result = grid_search(
            gold, lambda p: build_segment_fn("even", overrides=p), {"every": [2, 3, 5]}, name="even"
        )
        assert result.best == {"every": 3}
        assert result.best_result.pk == 0.0
        assert len(result.trials) == 3

    def test_parse_grid_errors(self) -> None:
        with pytest.raises(ConfigError):
            parse_grid(["semantic_threshold"])


def test_caching_embedder_embeds_each_text_once() -> None:
    inner = HashingEmbedder(dim=32)
    emb = CachingEmbedder(inner)
    first = emb.embed(["a", "b", "a"])
    second = emb.embed(["b", "c"])
    assert inner.texts_embedded == 3 and len(emb) == 3
    assert (first[1] == second[0]).all()
    with pytest.raises(TypeError):
        emb.embed("a")


def test_tune_cli_searches_tuning_split_and_reports_held_out(
    tiage_dev: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from episeg.evaluation.tune import main as tune_main

    out = tmp_path / "tune.json"
    assert (
        tune_main(
            [
                "--data",
                str(tiage_dev),
                "--config",
                "texttiling",
                "--grid",
                "block=2,3",
                "--limit",
                "10",
                "--report",
                "--json",
                str(out),
            ]
        )
        == 0
    )
    document = json.loads(out.read_text())
    assert document["best"]["block"] in (2, 3)
    assert {t["dataset"] for t in document["trials"]} == {"tiage_dev:tune"}
    assert document["report"]["dataset"] == "tiage_dev:report"
    assert "best texttiling" in capsys.readouterr().out


def _check_provenance(record: dict[str, Any]) -> None:
    """A results file names its command, commit and the SHA-256 of the shipped weights."""
    import hashlib
    import subprocess
    from importlib import resources

    weights = resources.files("episeg.segmentation") / "weights"
    for name in ("boundary.npz", "chat.npz"):
        assert record["weights"][name] == hashlib.sha256((weights / name).read_bytes()).hexdigest()
    assert isinstance(record["argv"], list)
    repo = Path(__file__).resolve().parents[2]
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True)
    if head.returncode == 0:  # a git checkout: the commit the run came from
        assert record["commit"] == head.stdout.decode().strip()
        assert isinstance(record["uncommitted_changes"], bool)
