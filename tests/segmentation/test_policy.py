"""BoundaryPolicy, one row per numbered rule of its docstring (episeg.segmentation.policy)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

import pytest

from episeg.segmentation.policy import BoundaryPolicy
from episeg.types import Decision, Verdict

B, S, C, A = Decision.BOUNDARY, Decision.SUB_EPISODE, Decision.CONTINUE, Decision.ABSTAIN
WEIGHTS = {"semantic": 1.0, "drift": 0.5, "structural": 1.0}


def v(signal: str, decision: Decision, score: float, *, ruling: bool = False) -> Verdict:
    return Verdict(signal, decision, score, f"{signal} says {decision.value}", authoritative=ruling)


@dataclass(frozen=True)
class Row:
    rule: int
    what: str
    verdicts: tuple[Verdict, ...]
    decision: Decision
    evidence: Any = None  # a float or pytest.approx(...)
    ambiguous: bool = False
    authoritative: bool = False
    hints_may_open: bool = True
    judge: Verdict | None = None
    reason_has: str = ""


ROWS = [
    Row(
        1,
        "an authoritative opener decides at once, whatever the hints say",
        (v("marker", B, 1.0, ruling=True), v("structural", C, 1.0)),
        B,
        evidence=1.0,
        authoritative=True,
        hints_may_open=False,
        reason_has="marker: marker says boundary",
    ),
    Row(
        2,
        "among authoritative openers boundary beats sub-episode",
        (v("structural", S, 1.0, ruling=True), v("window", B, 1.0, ruling=True)),
        B,
        authoritative=True,
    ),
    Row(
        3,
        "opening hints add their weighted scores; abstain and unweighted add nothing",
        (v("drift", B, 0.8), v("structural", A, 1.0), v("window", B, 0.9)),
        C,
        evidence=0.4,
        reason_has="drift +0.40",
    ),
    Row(
        4,
        "the semantic score counts even when it voted continue (a near miss)",
        (v("semantic", C, 0.7),),
        C,
        evidence=0.7,
        ambiguous=True,
    ),
    Row(
        5,
        "a structural continue subtracts its weighted score",
        (v("semantic", B, 0.9), v("structural", C, 0.6)),
        C,
        evidence=pytest.approx(0.3),
        reason_has="structural -0.60",
    ),
    Row(
        6,
        "evidence at boundary_evidence opens; a sub-episode when structural asked",
        (v("semantic", C, 0.6), v("structural", S, 0.5)),
        S,
        evidence=1.1,
    ),
    Row(
        7,
        "evidence in [ambiguity_floor, boundary_evidence) is ambiguous, below it is not",
        (v("semantic", C, 0.5),),
        C,
        evidence=0.5,
        ambiguous=True,
    ),
    Row(
        8,
        "hints do not open before an actor outside hint_actors",
        (v("semantic", B, 1.0), v("structural", B, 1.0)),
        C,
        evidence=2.0,
        hints_may_open=False,
        reason_has="hints do not open",
    ),
    Row(
        9,
        "a consulted judge decides",
        (v("semantic", C, 0.6),),
        B,
        evidence=0.6,
        ambiguous=True,
        judge=v("prediction", B, 1.0),
        reason_has="judge: prediction says boundary",
    ),
    Row(
        10,
        "an abstaining judge leaves the cheap decision and says so",
        (v("semantic", C, 0.6),),
        C,
        evidence=0.6,
        ambiguous=True,
        judge=v("prediction", A, 0.0),
        reason_has="judge abstained",
    ),
]


def test_every_numbered_rule_has_a_row() -> None:
    text = importlib.import_module(BoundaryPolicy.__module__).__doc__ or ""
    numbered = {int(line.split(".")[0]) for line in text.splitlines() if line[:1].isdigit()}
    assert numbered == {row.rule for row in ROWS}


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"rule {r.rule}: {r.what}")
def test_rule(row: Row) -> None:
    policy = BoundaryPolicy(weights=WEIGHTS, boundary_evidence=1.0, ambiguity_floor=0.5)
    out = policy.weigh(row.verdicts, hints_may_open=row.hints_may_open)
    if row.judge is not None:
        out = policy.resolve(out, row.judge)
    assert out.decision is row.decision
    if row.evidence is not None:
        assert out.evidence == row.evidence
    assert out.ambiguous is row.ambiguous
    assert out.authoritative is row.authoritative
    assert out.judged is (row.judge is not None and row.judge.decision is not A)
    assert row.reason_has in out.reason


def test_hint_actors_decide_hints_may_open() -> None:
    policy = BoundaryPolicy(weights=WEIGHTS, hint_actors=("user",))
    assert policy.hints_may_open("user") and not policy.hints_may_open("tool")
