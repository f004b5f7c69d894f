"""episeg eval memory on a small synthetic LoCoMo-format file (never the real data)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from episeg.errors import TurnValidationError
from episeg.evaluation.locomo import load_locomo
from episeg.evaluation.memory import format_markdown, main, pack, run_memory_eval
from episeg.evaluation.memory_scores import cut
from tests.evaluation.test_eval_runner import _check_provenance

SESSION_1 = [
    ("Ann", "I adopted a grey cat named Pixel from the shelter last week."),
    ("Bob", "Congrats! How is Pixel settling in?"),
    ("Ann", "Pixel hides under the sofa but eats well."),
    ("Bob", "My team shipped the billing release on Friday."),
]
SESSION_2 = [
    ("Bob", "I started learning the cello in March."),
    ("Ann", "Nice, do you take lessons?"),
    ("Bob", "Yes, every Tuesday evening with a teacher downtown."),
]


def _sample() -> dict[str, object]:
    conv: dict[str, object] = {"speaker_a": "Ann", "speaker_b": "Bob"}
    for n, (when, turns) in enumerate(
        (("1:56 pm on 8 May, 2023", SESSION_1), ("10:00 am on 20 June, 2023", SESSION_2)), 1
    ):
        conv[f"session_{n}_date_time"] = when
        conv[f"session_{n}"] = [
            {"speaker": s, "dia_id": f"D{n}:{i + 1}", "text": t} for i, (s, t) in enumerate(turns)
        ]
    qa = [
        {"question": "What is the name of Ann's cat?", "evidence": ["D1:1"], "category": 4},
        {"question": "When does Bob take cello lessons?", "evidence": ["D:2:3"], "category": 2},
        {"question": "What did Bob's team ship?", "evidence": ["D1:4; D9:9"], "category": 1},
        {"question": "Unanswerable?", "evidence": ["D1:2"], "category": 5},
        {"question": "Broken evidence", "evidence": ["D"], "category": 4},
    ]
    return {"sample_id": "conv-x", "conversation": conv, "qa": qa}


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "locomo_dev.json"
    path.write_text(json.dumps([_sample()]), encoding="utf-8")
    return path


class TestLoad:
    def test_evidence_is_normalised_and_defects_counted(self, data: Path) -> None:
        convs, defects = load_locomo(data)
        (conv,) = convs
        assert [q.evidence for q in conv.questions] == [("D1:1",), ("D2:3",), ("D1:4",)]
        assert (defects.normalised, defects.dropped_malformed, defects.dropped_outside) == (1, 1, 1)
        assert defects.questions_without_evidence == 1
        assert conv.turns[0].text.startswith("Ann: ") and conv.turns[0].ts == 1683554160.0
        assert conv.turns[1].ts == conv.turns[0].ts + 30.0


@pytest.mark.slow
class TestRun:
    def test_run_and_markdown(self, data: Path, tmp_path: Path) -> None:
        result = run_memory_eval(data, budgets=(10, 40), rounds=50, workdir=tmp_path)
        assert result["questions"] == 3
        names = [m["name"] for m in result["methods"]]
        assert names[0].startswith("episeg") and "BM25 + cosine RRF over turns" in names
        for m in result["methods"]:
            assert 0.0 <= m["recall@10w"] <= m["recall@40w"] <= 1.0
            assert m["words@10w"] <= 10 and m["words@40w"] <= 40
        assert len(result["ablation"]) == 8
        assert result["recall_latency_ms"]["calls"] == 6
        text = format_markdown(result)
        assert "| **episeg Memory.recall (defaults)** |" in text and "Ablation" in text

    def test_cli(self, data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        out = tmp_path / "out.json"
        args = ["--data", str(data), "--budgets", "20", "--no-ablation", "--bootstrap", "20"]
        assert main([*args, "--json", str(out)]) == 0
        assert "20 words" in capsys.readouterr().out
        assert json.loads(out.read_text())["ablation"] == []
        assert main(["--data", str(tmp_path / "missing")]) == 2

    def test_no_judge_builds_every_memory_without_one(
        self,
        data: Path,
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:

        built = _built_memories(monkeypatch)
        args = ["--data", str(data), "--budgets", "20", "--no-ablation", "--bootstrap", "20"]
        out = tmp_path / "out.json"
        assert main([*args, "--no-judge", "--json", str(out)]) == 0
        assert [m.judge for m in built] == [None] and json.loads(out.read_text())["judge"] == "none"
        assert "| **episeg Memory.recall (judge=None)** |" in capsys.readouterr().out
        assert main([*args, "--json", str(out)]) == 0  # the default: real roles, no judge
        assert built[1].judge is None and json.loads(out.read_text())["judge"] == "default (none)"
        unknown = ["--set", "combiner.roles_known=false"]
        assert main([*args, *unknown, "--json", str(out)]) == 0
        assert getattr(built[2].judge, "name", None) == "local"
        assert json.loads(out.read_text())["judge"] == "default (local)"

    def test_set_changes_every_memory_config_and_is_recorded(
        self, data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:

        built = _built_memories(monkeypatch)
        out = tmp_path / "out.json"
        pairs = ["--set", "recall.warm_cache=true", "--set", "recall.cache_episodes=1000"]
        args = ["--data", str(data), "--budgets", "20", "--no-ablation", "--bootstrap", "20"]
        assert main([*args, *pairs, "--json", str(out)]) == 0
        (config,) = [m.config for m in built]
        assert (config.recall.warm_cache, config.recall.cache_episodes) == (True, 1000)
        recorded = json.loads(out.read_text())["config_overrides"]
        assert recorded == ["recall.warm_cache=true", "recall.cache_episodes=1000"]
        _check_provenance(json.loads(out.read_text())["provenance"])


def test_a_bad_override_fails_before_any_memory_is_built(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import episeg.memory
    from episeg.errors import ConfigError

    def refuse(**kwargs: Any) -> None:
        raise AssertionError("a Memory was built")

    monkeypatch.setattr(episeg.memory, "Memory", refuse)
    with pytest.raises(ConfigError, match=r"recall\.warm_cache must be true or false"):
        run_memory_eval(data, overrides=["recall.warm_cache=yes"], workdir=tmp_path)
    with pytest.raises(ConfigError, match=r"unknown config field 'recall\.warm'"):
        run_memory_eval(data, overrides=["recall.warm=true"], workdir=tmp_path)
    with pytest.raises(ConfigError, match="is not KEY=VALUE"):
        run_memory_eval(data, overrides=["recall.warm_cache"], workdir=tmp_path)


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (json.dumps([{k: v for k, v in _sample().items() if k != "qa"}]), "sample 0: .*'qa'"),
        (json.dumps({"not": "a list"}), "a JSON list of samples"),
        ("[{]", "not a UTF-8 JSON file"),
        (json.dumps([{**_sample(), "qa": [{"question": "q", "category": "x"}]}]), "sample 0"),
    ],
)
def test_a_malformed_locomo_file_is_a_typed_error_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, needle: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(TurnValidationError, match=needle):
        load_locomo(path)
    assert main(["--data", str(path), "--no-ablation", "--no-judge", "--bootstrap", "1"]) == 2
    assert "Traceback" not in capsys.readouterr().err


def _altered(change: Callable[[dict[str, Any]], None]) -> str:
    sample: dict[str, Any] = _sample()
    change(sample)
    return json.dumps([sample])


def _gap(s: dict[str, Any]) -> None:
    conv = s["conversation"]
    conv["session_3"], conv["session_3_date_time"] = conv.pop("session_2"), "1 pm on 1 July, 2023"
    del conv["session_2_date_time"]


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (_gap, "without a gap, got \\[1, 3\\]"),
        (lambda s: s["conversation"]["session_1"][0].update(speaker="Zed"), "'Zed' is neither"),
        (lambda s: s["conversation"]["session_2"][0].update(dia_id="D1:1"), "more than one turn"),
        (lambda s: s["qa"].append({"question": "q", "evidence": ["D1:1"], "category": 7}), "7"),
        (lambda s: s["qa"][0].update(evidence="D1:1"), "evidence must be a list"),
    ],
)
def test_what_the_reader_dropped_or_changed_in_silence_is_refused(
    tmp_path: Path, change: Callable[[dict[str, Any]], None], needle: str
) -> None:
    """A skipped session number dropped every later session, an unknown category vanished, a
    third speaker became the assistant, two turns under one id merged, and evidence given as a
    string was read letter by letter (F150)."""
    path = tmp_path / "bad.json"
    path.write_text(_altered(change), encoding="utf-8")
    with pytest.raises(TurnValidationError, match=needle):
        load_locomo(path)


def test_the_budget_rules() -> None:
    words = {"a": 3, "b": 9, "c": 2}
    assert cut(["a", "b", "c"], words, 6) == ["a"]  # the README's: stop at the first misfit
    assert pack(["a", "b", "c"], words, 6) == ["a", "c"]  # fill: skip it, go on
    assert cut(["a", "a", "c"], words, 6) == ["a", "c"]  # a repeated id counts once


@pytest.mark.slow
def test_cut_scores_episegs_ranked_output_too_and_records_the_rule(
    data: Path, tmp_path: Path
) -> None:
    result = run_memory_eval(data, budgets=(10, 40), rounds=20, workdir=tmp_path, ablation=False)
    names = [m["name"] for m in result["methods"]]
    assert result["packing"] == "cut" and names[:2] == [
        "episeg Memory.recall (defaults)",
        "episeg Memory.recall (defaults, hits in episode order, cut)",
    ]
    fill = run_memory_eval(
        data, budgets=(10, 40), rounds=20, workdir=tmp_path, ablation=False, packing="fill"
    )
    assert fill["packing"] == "fill" and "episode order, cut" not in str(fill["methods"])


@pytest.mark.slow
def test_the_ablation_does_not_change_the_next_conversations_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Found by review: the ablation's variant config was assigned to the name every
    # conversation's Memory was built with, so conversations 2.. ran the last variant.

    second = {**_sample(), "sample_id": "conv-y"}
    path = tmp_path / "two.json"
    path.write_text(json.dumps([_sample(), second]), encoding="utf-8")
    built = _built_memories(monkeypatch)
    run_memory_eval(path, budgets=(20,), rounds=10, workdir=tmp_path)
    assert len(built) == 2 and built[0].config == built[1].config


def _built_memories(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every ``Memory`` the evaluation builds from now on, in order."""
    import episeg.memory

    built: list[Any] = []

    class Spy(episeg.memory.Memory):
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            built.append(self)

    monkeypatch.setattr(episeg.memory, "Memory", Spy)
    return built
