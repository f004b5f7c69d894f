"""Scoring protocols A and B, the boundary ratio, and the agent / test-file data rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import segeval
from hypothesis import given, settings
from hypothesis import strategies as st

from episeg.evaluation.configs import build_segment_fn, every_user_turn
from episeg.evaluation.datasets import (
    agent_task_part,
    read_jsonl,
    resplice_agent,
    select_part,
    tuning_dialogues,
)
from episeg.evaluation.metrics import boundaries_to_masses
from episeg.evaluation.protocols import protocol_a, protocol_b, score_protocols
from episeg.types import Turn
from tests.property_budget import examples


def nltk_pk(ref: str, hyp: str, k: int) -> float:
    """nltk's Pk, imported on first use (importing nltk costs ~1.5 s of every collection)."""
    from nltk.metrics.segmentation import pk

    return float(pk(ref, hyp, k=k))


def nltk_wd(ref: str, hyp: str, k: int) -> float:
    """nltk's WindowDiff, imported on first use."""
    from nltk.metrics.segmentation import windowdiff

    return float(windowdiff(ref, hyp, k))


@st.composite
def segmentations(draw):
    n = draw(st.integers(1, 40))
    gaps = list(range(1, n))
    ref = sorted(draw(st.sets(st.sampled_from(gaps)))) if gaps else []
    hyp = sorted(draw(st.sets(st.sampled_from(gaps)))) if gaps else []
    return ref, hyp, n


def superdialseg_labels(boundaries, n):
    """The SuperDialseg code's labels: 1 on the last turn of every segment but the final one."""
    labels = ["0"] * n
    for b in boundaries:
        labels[b - 1] = "1"
    return "".join(labels)


class TestProtocolA:
    @settings(max_examples=examples(300), deadline=None)
    @given(segmentations())
    def test_equals_the_superdialseg_code_on_nltk(self, seg):
        ref, hyp, n = seg
        k = max(2, round(n / (len(ref) + 1) / 2))
        r, h = superdialseg_labels(ref, n), superdialseg_labels(hyp, n)
        a = protocol_a(ref, hyp, n)
        if n - k + 1 > 0:
            assert a.pk == pytest.approx(nltk_pk(r, h, k=k))
            assert a.window_diff == pytest.approx(nltk_wd(r, h, k=k))

    def test_f1_is_per_dialogue_and_zero_without_boundaries(self):
        assert protocol_a([], [], 6).f1 == 0.0  # scikit-learn's zero_division=0
        assert protocol_a([3], [3, 5], 6).f1 == pytest.approx(2 / 3)

    def test_score_combines_f1_pk_and_wd(self):
        s = score_protocols([[3], [2]], [[3], []], [6, 6])
        assert s.score_a == pytest.approx(0.5 * s.f1_a + 0.25 * (1 - s.pk_a) + 0.25 * (1 - s.wd_a))


class TestProtocolB:
    @settings(max_examples=examples(100), deadline=None)
    @given(segmentations())
    def test_equals_segeval_defaults(self, seg):
        ref, hyp, n = seg
        b = protocol_b(ref, hyp, n)
        r, h = boundaries_to_masses(ref, n), boundaries_to_masses(hyp, n)
        try:
            expected = float(segeval.pk(h, r))
        except Exception:  # segeval has no window for this one: scored 0
            expected = 0.0
        assert b.pk == pytest.approx(expected)

    def test_f1_is_pooled_and_ratio_counts_boundaries(self):
        s = score_protocols([[3], [2, 4]], [[3, 5], []], [6, 6])
        assert s.f1_b == pytest.approx(2 * (1 / 2) * (1 / 3) / (1 / 2 + 1 / 3))
        assert s.boundary_ratio == pytest.approx(2 / 3)
        assert (s.hyp_boundaries, s.ref_boundaries) == (2, 3)


def write(path: Path, rows) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def agent_rows():
    rows = []
    for s in range(6):
        tasks = [(s + 2 * k) % 7 for k in range(3)]
        turns: list[dict[str, object]] = []
        bounds: list[int] = []
        for k, task in enumerate(tasks):
            if k:
                bounds.append(len(turns))
            turns += [
                {"speaker": "user", "type": None, "text": f"task {task} hello"},
                {"speaker": "assistant", "type": "tool-call", "text": f"lookup({task})"},
                {"speaker": "tool", "type": "tool-error", "text": "Error: none"},
            ]
        rows.append(
            {"id": f"a{s}", "source": f"tau, tasks {tasks}", "turns": turns, "boundaries": bounds}
        )
    return rows


class TestDataRules:
    def test_agent_parts_split_by_task_and_keep_types(self, tmp_path):
        path = write(tmp_path / "agent_tau" / "agent_tau_dev.jsonl", agent_rows())
        everything = read_jsonl(path)
        parts = {p: select_part(path, everything, p) for p in ("tune", "report")}
        tasks = {
            p: {int(x) for d in ds for x in d.source.split("[")[1].rstrip("]").split(", ")}
            for p, ds in parts.items()
        }
        assert tasks["tune"] and tasks["report"] and not tasks["tune"] & tasks["report"]
        assert all(agent_task_part(t) == p for p in tasks for t in tasks[p])
        total = sum(len(d) for p in parts.values() for d in p)
        assert total == sum(len(d) for d in everything)
        d = parts["tune"][0]
        assert (
            d.roles_known and d.turns[1].type is not None and d.turns[1].type.value == "tool-call"
        )
        assert all(d.turns[b].text.startswith("task") for b in d.boundaries)
        assert resplice_agent(everything, "tune") == parts["tune"]

    def test_synthetic_speakers_are_flagged(self, tmp_path):
        row = {
            "id": "t",
            "source": "tiage/dev",
            "boundaries": [],
            "turns": [{"speaker": "user", "text": "hi"}],
        }
        assert not read_jsonl(write(tmp_path / "tiage_dev.jsonl", [row]))[0].roles_known

    def test_dialseg711_is_never_tuned_on(self, tmp_path):
        row = {
            "id": "d",
            "source": "dialseg711",
            "boundaries": [1],
            "turns": [{"speaker": "user", "text": "a"}, {"speaker": "agent", "text": "b"}],
        }
        test = write(tmp_path / "dialseg711" / "dialseg711.jsonl", [row])
        train = write(tmp_path / "tiage" / "tiage_train.jsonl", [{**row, "id": "t1"}])
        dialogues = read_jsonl(test)
        assert select_part(test, dialogues, "tune") == []
        assert select_part(test, dialogues, "report") == dialogues
        assert [d.id for d in tuning_dialogues(test)] == [read_jsonl(train)[0].id]


def test_every_user_turn_reads_real_roles():
    turns = [
        Turn(actor=a, text="x", ts=float(i))
        for i, a in enumerate(["user", "assistant", "tool", "user", "user"])
    ]
    assert every_user_turn(turns)[0] == [3, 4]
    none = build_segment_fn("every-user-turn", roles_known=False)
    assert none(turns)[0] == []
