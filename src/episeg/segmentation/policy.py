"""The combiner: one small policy turning signal verdicts into a decision.

Policy, in order (each numbered rule has one row in
``tests/segmentation/test_policy.py``):

1. An *authoritative* verdict that opens an episode (agent marker, a
   harness-supplied ``system-event``, the window floor) decides at once.
2. Among authoritative openers, ``boundary`` beats ``sub-episode``.
3. Otherwise the hints are weighed. Evidence is the weighted sum of the
   scores of hint verdicts voting ``boundary``/``sub-episode`` (an abstaining
   or unweighted signal adds nothing) ...
4. ... plus the semantic signal's score even when it voted ``continue`` (a
   near miss is evidence) ...
5. ... minus the weighted score of a structural ``continue`` (a user
   correction keeps the episode together).
6. Evidence ``>= boundary_evidence`` opens an episode, a sub-episode when the
   structural signal asked for one.
7. Evidence in ``[ambiguity_floor, boundary_evidence)`` is *ambiguous*: the
   judge is consulted if gated in; below it the episode simply continues.
8. Hints open episodes only before turns of the actors in ``hint_actors``
   (default user and system): a tool result or an assistant reply answers
   what came before it, so cutting there is the mid-task split the seed warns
   about. Rule 1 still applies at every turn.
9. A consulted judge decides ...
10. ... unless it abstained; then the cheap decision stands and the reason
    says so.

>>> from episeg.types import Decision, Verdict
>>> policy = BoundaryPolicy(weights={"semantic": 1.0, "structural": 1.0})
>>> out = policy.weigh([Verdict("semantic", Decision.CONTINUE, 0.9, "near miss")])
>>> out.decision.value, out.ambiguous
('continue', True)
>>> judge = Verdict("prediction", Decision.BOUNDARY, 1.0, "judge said new")
>>> policy.resolve(out, judge).decision.value
'boundary'

Only hints are weighed (rule 3), so a weight for any other signal would do
nothing and is refused:

>>> BoundaryPolicy(weights={"semantic": 1.0, "marker": 5.0})
Traceback (most recent call last):
...
episeg.errors.ConfigError: policy.weights.marker does nothing: the marker signal's cuts are ...
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from episeg.config import EpisegConfig, PolicyConfig
from episeg.types import Decision, Verdict

__all__ = ["BoundaryPolicy", "Outcome", "resolve_with_judge"]

_CONTINUOUS = frozenset({"semantic"})


@dataclass(frozen=True, slots=True)
class Outcome:
    """The combiner's answer for one turn."""

    decision: Decision
    evidence: float
    ambiguous: bool
    authoritative: bool
    reason: str
    judged: bool = False

    def as_verdict(self) -> Verdict:
        return Verdict(
            "combiner", self.decision, self.evidence, self.reason, authoritative=self.authoritative
        )


class BoundaryPolicy:
    """Weighs verdicts; see the module docstring for the exact policy.

    Parameters
    ----------
    weights
        Weight per hint signal name, from semantic, drift and structural
        (missing names weigh 0; any other name is a ``ConfigError``).
    boundary_evidence
        Evidence needed to open an episode.
    ambiguity_floor
        Lower edge of the ambiguous band.
    hint_actors
        Actors before whose turns hints may open an episode (rule 3).

    Bounds are those of :class:`~episeg.config.PolicyConfig` (checked there).
    """

    def __init__(
        self,
        *,
        weights: Mapping[str, float],
        boundary_evidence: float = 1.0,
        ambiguity_floor: float = 0.5,
        hint_actors: tuple[str, ...] = ("user", "system"),
    ) -> None:
        checked = PolicyConfig(
            weights=weights,
            boundary_evidence=boundary_evidence,
            ambiguity_floor=ambiguity_floor,
            hint_actors=hint_actors,
        )
        self.weights: dict[str, float] = dict(checked.weights)
        self.boundary_evidence = boundary_evidence
        self.ambiguity_floor = ambiguity_floor
        self.hint_actors = frozenset(checked.hint_actors)

    @classmethod
    def from_config(cls, config: EpisegConfig) -> BoundaryPolicy:
        return cls(**config.policy.kwargs())

    def hints_may_open(self, actor: str) -> bool:
        """Whether hint evidence may open an episode before a turn of ``actor``."""
        return str(actor) in self.hint_actors

    def weigh(self, verdicts: Sequence[Verdict], *, hints_may_open: bool = True) -> Outcome:
        """Combine cheap verdicts; ``hints_may_open=False`` lets only rulings open."""
        ruling = [v for v in verdicts if v.authoritative and v.decision.opens_episode]
        if ruling:
            decision = (
                Decision.BOUNDARY
                if any(v.decision is Decision.BOUNDARY for v in ruling)
                else Decision.SUB_EPISODE
            )
            reason = "; ".join(f"{v.signal}: {v.reason}" for v in ruling)
            return Outcome(decision, 1.0, False, True, reason)
        evidence, parts, sub = 0.0, [], False
        for v in verdicts:
            weight = self.weights.get(v.signal, 0.0)
            if weight == 0.0 or v.decision is Decision.ABSTAIN:
                continue
            if v.decision.opens_episode or v.signal in _CONTINUOUS:
                contribution = weight * v.score
                sub = sub or v.decision is Decision.SUB_EPISODE
            elif v.decision is Decision.CONTINUE and v.signal == "structural":
                contribution = -weight * v.score
            else:
                continue
            evidence += contribution
            parts.append(f"{v.signal} {contribution:+.2f}")
        reason = f"evidence {evidence:.2f} ({', '.join(parts) or 'no hints'})"
        if not hints_may_open:
            return Outcome(
                Decision.CONTINUE,
                evidence,
                False,
                False,
                f"{reason}; hints do not open an episode at this actor's turn",
            )
        if evidence >= self.boundary_evidence:
            decision = Decision.SUB_EPISODE if sub else Decision.BOUNDARY
            return Outcome(decision, evidence, False, False, reason)
        ambiguous = evidence >= self.ambiguity_floor
        return Outcome(Decision.CONTINUE, evidence, ambiguous, False, reason)

    def resolve(self, cheap: Outcome, judge: Verdict) -> Outcome:
        """Let a consulted judge decide; an abstaining judge leaves ``cheap``."""
        return resolve_with_judge(cheap, judge, stands="cheap signals stand")


def resolve_with_judge(cheap: Outcome, judge: Verdict, *, stands: str) -> Outcome:
    """``cheap`` decided by a consulted ``judge``; an abstention leaves it (``stands`` says so).

    Shared by every combiner, so a judge's ruling is recorded the same way whichever weighed
    the cheap evidence.
    """
    if judge.decision is Decision.ABSTAIN:
        return Outcome(
            cheap.decision,
            cheap.evidence,
            cheap.ambiguous,
            False,
            f"{cheap.reason}; judge abstained ({judge.reason}), {stands}",
        )
    return Outcome(
        judge.decision,
        cheap.evidence,
        cheap.ambiguous,
        False,
        f"{cheap.reason}; judge: {judge.reason}",
        judged=True,
    )
