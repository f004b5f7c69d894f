"""The judge in the trainer's loop: judged out-of-fold decode, the share curve and its rule."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from episeg.errors import ConfigError
from episeg.evaluation.dialogues import Dialogue
from episeg.evaluation.train_fit import band_for
from episeg.evaluation.train_judge import SHARES, choose_share, judged_decode
from episeg.evaluation.train_rows import Corpus, TrainingRows
from episeg.judges import LocalJudge
from episeg.testing import ScriptedJudge
from episeg.types import Actor, Turn

from .test_train_segmenter import small, write_root


def corpus(texts: list[str], gold: list[int]) -> Corpus:
    """One dialogue, a row per turn from 1 on (eligible), as role-masked rows are."""
    turns = [Turn(actor=Actor.USER, text=t, ts=float(i)) for i, t in enumerate(texts)]
    rows = TrainingRows(names=("a",))
    v = np.ones(3) / np.sqrt(3)
    for t in range(1, len(texts)):
        rows.add(np.zeros(1), v, v, v, label=t in gold, eligible=True, group=0, t=t)
    return Corpus("c", [Dialogue("d", "test", turns, gold, roles_known=False)], rows)


SIX = [f"turn {i} words here" for i in range(6)]


def test_the_judge_decides_inside_the_band_and_the_logit_outside():
    cp = corpus(SIX, [3])
    logits = np.array([-5.0, -0.1, 5.0, -0.2, -5.0])  # turns 1..5
    judge = ScriptedJudge(["new", "continue"])
    s = judged_decode(cp, logits, tau=0.0, band=0.5, judge=judge, min_turns=1)
    # turn 2 (in band) cut by the judge, turn 3 by its logit, turn 4 kept by the judge
    assert judge.calls == 2 and [text for _, text in judge.seen] == [SIX[2], SIX[4]]
    assert s["ratio"] == 2.0 and s["calls_per_1k"] == pytest.approx(1000 * 2 / 6, abs=0.05)
    # no band: no call, one cut at 3, the gold one
    plain = judged_decode(cp, logits, tau=0.0, band=0.0, judge=ScriptedJudge(), min_turns=1)
    assert plain["pk_a"] == 0.0 and plain["ratio"] == 1.0 and plain["calls_per_1k"] == 0.0


def test_a_judges_continue_overrules_a_logit_above_the_threshold():
    cp = corpus(SIX, [3])
    logits = np.array([-5.0, -5.0, 0.3, -5.0, -5.0])
    s = judged_decode(cp, logits, tau=0.0, band=0.5, judge=ScriptedJudge(["continue"]))
    assert s["ratio"] == 0.0


def test_the_summary_is_kept_only_when_the_judge_opened_the_episode():
    cp = corpus(SIX, [3])
    # turn 2: judge says new (summary kept); turn 3: asked again, sees turn 2's summary;
    # turn 4: cut by its logit (not the judge), so turn 5 is asked with an empty summary
    logits = np.array([-5.0, 0.1, 0.1, 5.0, 0.1])
    judge = ScriptedJudge(["new", "continue", "continue"])
    judged_decode(cp, logits, tau=0.0, band=0.5, judge=judge, min_turns=1)
    summaries = [summary for summary, _ in judge.seen]
    assert summaries == ["", f"about: {SIX[2]}", ""]


def test_min_turns_holds_the_judge_too():
    cp = corpus(SIX, [3])
    logits = np.array([0.1, 0.1, -5.0, -5.0, -5.0])
    judge = ScriptedJudge(["new", "new"])
    judged_decode(cp, logits, tau=0.0, band=0.5, judge=judge, min_turns=2)
    assert judge.calls == 1  # turn 1 is under min_turns; turn 2 is asked and cuts


@pytest.mark.slow
def test_the_offline_judge_with_minilm_cuts_a_topic_change_in_the_band(minilm):
    texts = [
        "the auth service returns 401 for valid tokens",
        "check token audience and the auth clock skew",
        "the clock skew on the auth hosts was it",
        "unrelated: recommend a lasagna recipe with spinach and ricotta",
        "layer the pasta sheets with the spinach ricotta filling",
    ]
    cp = corpus(texts, [3])
    logits = np.array([-0.1, -0.1, -0.1, -0.1])  # every turn in the band, below the threshold
    judge = LocalJudge(minilm)
    s = judged_decode(cp, logits, tau=0.0, band=0.5, judge=judge, min_turns=1)
    assert s["pk_a"] == 0.0 and s["ratio"] == 1.0 and judge.calls == 4


def test_band_for_refuses_a_share_outside_0_1():
    cp = corpus(SIX, [3])
    assert band_for([cp], [np.array([0.1, -0.3, 0.5, 0.2, 0.0])], 0.0, 0.0) == 0.0
    with pytest.raises(ConfigError, match="judge share"):
        band_for([cp], [np.zeros(5)], 0.0, 1.5)


def row(share: float, **pk: float) -> dict[str, object]:
    return {"share": share, "mean": round(float(np.mean(list(pk.values()))), 4), "pk": pk}


def test_the_rule_keeps_the_default_when_a_corpus_is_harmed_or_the_gain_is_small():
    harmed = [row(0.05, a=0.20, b=0.40), row(0.1, a=0.30, b=0.39)]
    assert choose_share(harmed, default=0.1) == 0.1  # b is 0.01 worse
    small_gain = [row(0.05, a=0.297, b=0.30), row(0.1, a=0.30, b=0.30)]
    assert choose_share(small_gain, default=0.1) == 0.1
    wins = [row(0.05, a=0.28, b=0.30), row(0.1, a=0.30, b=0.30), row(0.2, a=0.35, b=0.30)]
    assert choose_share(wins, default=0.1) == 0.05
    with pytest.raises(ConfigError, match="default share"):
        choose_share(wins, default=0.15)


def test_the_trainer_gives_the_roles_unknown_model_its_own_share(tmp_path_factory):
    root = write_root(tmp_path_factory.mktemp("judgeband"))
    m = small(root)
    sub = m.roles_unknown
    assert sub is not None
    assert sub.meta["judge_share"] == 0.05 and m.meta["judge_share"] == 0.1
    wide = small(root, unknown_judge_share=0.3)
    assert wide.roles_unknown is not None and wide.roles_unknown.meta["judge_share"] == 0.3
    assert wide.roles_unknown.band > sub.band and wide.band == m.band
    assert np.array_equal(wide.roles_unknown.weights, sub.weights)  # only the band moves


def test_the_trainer_writes_the_judged_curve(tmp_path: Path, capsys):
    root = write_root(tmp_path / "data")
    out = tmp_path / "curve.json"
    m = small(root, judge_curve=out)
    curve = json.loads(out.read_text())
    assert [r["share"] for r in curve["rows"]] == list(SHARES)
    assert set(curve["rows"][0]["pk"]) == {"tiage", "superdialseg", "agent_tau"}
    bands = [r["band"] for r in curve["rows"]]
    assert bands == sorted(bands) and curve["rule_takes"] in SHARES
    assert m.roles_unknown is not None  # the curve does not change what is trained
    assert np.array_equal(m.roles_unknown.weights, small(root).roles_unknown.weights)  # type: ignore[union-attr]
    assert "the registered rule takes share" in capsys.readouterr().out


def test_a_curve_without_a_roles_unknown_model_is_refused(tmp_path: Path):
    root = write_root(tmp_path / "data")
    with pytest.raises(ConfigError, match="judge-curve"):
        small(root, preset="chat", judge_curve=tmp_path / "c.json")
    with pytest.raises(ConfigError, match="judge-curve"):
        small(root, roles_unknown_model=False, judge_curve=tmp_path / "c.json")
    assert not (tmp_path / "c.json").exists()
