"""Unit tests per boundary signal, plus a conformance check run over all of them."""

from __future__ import annotations

import numpy as np
import pytest

from episeg.segmentation.signals import (
    PIVOT_REASON,
    AgentMarker,
    FixedWindow,
    GradualDrift,
    PredictionError,
    SemanticShift,
    StructuralTurnType,
    infer_turn_type,
    scan_markers,
    topic_pivot,
)
from episeg.testing import ScriptedJudge
from episeg.types import Decision, Turn, TurnType, Verdict
from tests.segmentation.helpers import observed

ALL = [
    AgentMarker,
    StructuralTurnType,
    lambda: FixedWindow(max_turns=3),
    lambda: SemanticShift(threshold=0.5, min_words=1),
    lambda: GradualDrift(threshold=0.5),
    # every=0: the periodic cadence is session state that deliberately survives reset
    lambda: PredictionError(ScriptedJudge(), every=0),
]


@pytest.mark.parametrize("make", ALL)
class TestConformance:
    """Every signal: frozen verdicts, a name, reset() then update() works."""

    def test_update_returns_frozen_verdict(self, make):
        signal = make()
        signal.reset(observed("a"))
        verdict = signal.update(observed("b", vector=[0.0, 1.0], ts=1.0))
        assert isinstance(verdict, Verdict)
        assert verdict.signal == signal.name
        with pytest.raises(AttributeError):
            verdict.score = 2.0  # type: ignore[misc]

    def test_reset_forgets_the_episode(self, make):
        a, b = make(), make()
        a.reset(observed("a"))
        for i in range(5):
            a.update(observed("z", vector=[0.0, 1.0], ts=float(i)))
        a.reset(observed("a", ts=10.0))
        b.reset(observed("a", ts=10.0))
        nxt = observed("b", vector=[0.6, 0.8], ts=11.0)
        assert a.update(nxt).decision == b.update(nxt).decision


class TestAgentMarker:
    def test_scan_strips_and_places(self):
        assert scan_markers("<episode_boundary> hi").before == "episode_boundary"
        scan = scan_markers("ok <new_subtask> then <episode_boundary>")
        assert (scan.after, scan.text) == ("episode_boundary", "ok then")
        assert scan_markers("< Episode_Boundary />").before == "episode_boundary"

    def test_the_text_around_a_marker_is_kept_as_written(self):
        """F128: every run of 2+ spaces used to become one, flattening stored code."""
        code = "Patched:\n    if ok:\n        retry()  # note  this\n"
        scan = scan_markers(code + "<episode_boundary>")
        assert (scan.text, scan.after) == (code.strip(), "episode_boundary")
        assert scan_markers("a\t<new_subtask>\tb").text == "a b"

    def test_many_markers_are_placed_in_one_pass(self):
        """F128: each marker re-scanned the text before it (7.6 s for 98,800 characters)."""
        text = "<new_subtask>" * 5000 + " work " + "<episode_boundary>" * 5000
        scan = scan_markers(text)
        assert (scan.before, scan.after, scan.text) == ("new_subtask", "episode_boundary", "work")

    def test_before_marker_cuts_this_turn(self):
        v = AgentMarker().update(observed(actor="assistant", markers=("before:new_subtask",)))
        assert (v.decision, v.authoritative) == (Decision.SUB_EPISODE, True)

    def test_user_markers_are_not_obeyed(self):
        signal = AgentMarker()
        assert (
            signal.update(observed(markers=("before:episode_boundary",))).decision
            is Decision.ABSTAIN
        )


class TestStructural:
    @pytest.mark.parametrize(
        ("actor", "text", "expected"),
        [
            ("system", "new file uploaded", "system-event"),
            ("tool", "HTTP 500 internal error", "tool-error"),
            ("tool", "200 OK, 3 rows", "tool-success"),
            ("user", "actually, use staging", "user-correction"),
            ("user", "how do I deploy?", "user-question"),
            ("assistant", "Here is the fix.", "assistant-answer"),
        ],
    )
    def test_inference(self, actor, text, expected):
        assert infer_turn_type(Turn(actor=actor, text=text, ts=0)).value == expected

    def test_inferred_system_event_is_only_a_hint(self):
        v = StructuralTurnType().update(observed(actor="system"))
        v2 = StructuralTurnType().update(observed(actor="system", kind="system-event"))
        assert v2.authoritative
        # without a harness type the observed helper infers user-question: no rule fires
        assert v.decision is Decision.ABSTAIN

    def test_correction_continues(self):
        v = StructuralTurnType().update(observed(kind="user-correction"))
        assert v.decision is Decision.CONTINUE and v.score == 1.0

    @pytest.mark.parametrize(
        ("text", "phrase"),
        [
            ("Login works now, thanks. Different question: how do I deploy?", "different question"),
            ("different QUESTION - where are the logs?", "different question"),
            ("Unrelated: is the cache warm?", "unrelated"),
            ("Ok, another question, is the key rotated?", "another question"),
            ("Switching gears, the retry logging.", "switching gears"),
            ("On another note: billing.", "on another note"),
            ("Moving on to the deploy.", "moving on to"),
            ("One more thing, the cron job.", "one more thing"),
            ("That is a different question.", None),
            ("The error is unrelated to auth.", None),
            ("thanks!", None),
            # F127: the bare adjectives pivot only before a pause or a topic word
            ("Completely different error now, the provider version.", None),
            ("Unrelated errors about the provider show up too.", None),
            ("One more thing broke after the update", None),
            ("Totally different topic - lunch?", "totally different"),
            ("ok. unrelated \u2014 is prod up?", "unrelated"),
            ("Login works.\n\n\n   Unrelated: cache?", "unrelated"),  # whitespace runs read as one
        ],
    )
    def test_topic_pivot_matches_at_a_sentence_start(self, text, phrase):
        assert topic_pivot(text) == phrase

    def test_announced_pivot_is_a_boundary_hint_for_user_turns_only(self):
        text = "Thanks. Different question: how do I bump the deploy version?"
        v = StructuralTurnType().update(observed(text))
        assert v.decision is Decision.BOUNDARY and not v.authoritative
        assert v.reason.startswith(PIVOT_REASON) and "different question" in v.reason
        assert StructuralTurnType().update(observed(text, actor="assistant")).decision is (
            Decision.ABSTAIN
        )


class TestFixedWindow:
    def test_waits_for_a_user_turn_then_hard_cuts(self):
        w = FixedWindow(max_turns=2, hard_factor=2.0)
        w.reset(observed())
        decisions = [
            w.update(observed(actor="assistant", ts=float(i))).decision for i in range(1, 5)
        ]
        assert decisions == [
            Decision.CONTINUE,
            Decision.CONTINUE,
            Decision.CONTINUE,
            Decision.BOUNDARY,
        ]

    def test_clock_limit(self):
        w = FixedWindow(max_turns=100, max_seconds=60)
        w.reset(observed(ts=0.0))
        assert w.update(observed(ts=30.0)).decision is Decision.CONTINUE
        assert w.update(observed(ts=61.0)).decision is Decision.BOUNDARY

    @pytest.mark.parametrize("kwargs", [{"max_turns": 0}, {"max_seconds": 0}, {"hard_factor": 0.5}])
    def test_bad_values(self, kwargs):
        with pytest.raises(ValueError):
            FixedWindow(**kwargs)


class TestSemanticShift:
    def test_new_turn_is_not_in_its_own_mean(self):
        s = SemanticShift(threshold=0.5, min_turns=1, min_words=1)
        s.reset(observed(vector=[1.0, 0.0]))
        v = s.update(observed(vector=[0.0, 1.0]))
        # against a mean holding only [1, 0] the distance is exactly 1
        assert v.decision is Decision.BOUNDARY and s.last_distance == pytest.approx(1.0)

    def test_decay_reacts_to_recent_turns(self):
        fast = SemanticShift(threshold=0.5, decay=0.1, min_words=1)
        slow = SemanticShift(threshold=0.5, decay=0.9, min_words=1)
        for s in (fast, slow):
            s.reset(observed(vector=[1.0, 0.0]))
            for _ in range(3):
                s.update(observed(vector=[0.0, 1.0]))
            s.update(observed(vector=[0.0, 1.0]))
        assert fast.last_distance < slow.last_distance

    def test_abstains_on_short_episodes(self):
        s = SemanticShift(threshold=0.5, min_turns=3)
        s.reset(observed())
        assert s.update(observed(vector=[0.0, 1.0])).decision is Decision.ABSTAIN


class TestGradualDrift:
    def test_slow_slide_alarms_where_per_turn_threshold_does_not(self):
        angles = np.linspace(0, np.pi / 2, 12)
        drift = GradualDrift(delta=0.0, threshold=0.3)
        shift = SemanticShift(threshold=0.5, decay=0.0, min_words=1)
        first = observed(vector=[1.0, 0.0])
        drift.reset(first)
        shift.reset(first)
        drift_fired = shift_fired = False
        for a in angles[1:]:
            turn = observed(vector=[float(np.cos(a)), float(np.sin(a))])
            drift_fired |= drift.update(turn).decision is Decision.BOUNDARY
            shift_fired |= shift.update(turn).decision is Decision.BOUNDARY
        assert drift_fired and not shift_fired


class TestPredictionError:
    def test_periodic_cadence(self):
        judge = ScriptedJudge()
        p = PredictionError(judge, every=3)
        p.reset(observed())
        for i in range(6):
            p.update(observed(ts=float(i)))
        assert judge.calls == 2

    def test_cadence_runs_across_boundaries(self):
        judge = ScriptedJudge()
        p = PredictionError(judge, every=4)
        p.reset(observed())
        for i in range(8):  # a boundary every 2 turns would starve a per-episode cadence
            if i % 2 == 0:
                p.reset(observed(ts=float(i)))
            p.update(observed(ts=float(i)))
        assert judge.calls == 2

    def test_failure_is_an_explicit_abstain_and_logged(self, caplog):
        p = PredictionError(ScriptedJudge(["error"]), every=0)
        p.reset(observed())
        v = p.update(observed(), ask=True)
        assert v.decision is Decision.ABSTAIN and "judge failed" in v.reason
        assert "failed" in caplog.text

    def test_summary_from_judge(self):
        p = PredictionError(ScriptedJudge(["continue"]), every=0)
        p.reset(observed("auth"))
        p.update(observed("jwt key"), ask=True)
        assert p.summary == "about: jwt key"


def test_turn_type_parse_lists_valid_values():
    with pytest.raises(ValueError, match="valid: user-question"):
        TurnType.parse("tool-explosion")
