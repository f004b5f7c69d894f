"""Signal 2: semantic shift against a recency-decayed running mean.

The new turn is compared with the mean of the episode *before* it (the seed's
sketch compared a turn with a mean that already contained it). The running
mean decays toward recent turns so sustained shifts register sooner.

>>> import numpy as np
>>> from episeg.types import ObservedTurn, Turn, TurnType
>>> def obs(vec):
...     t = Turn(actor="user", text="topic", ts=0.0)
...     return ObservedTurn(turn=t, text="topic", embedding=np.array(vec, dtype=float),
...                         position=0, inferred_type=TurnType.USER_QUESTION)
>>> shift = SemanticShift(threshold=0.5, min_turns=1, min_words=1)
>>> shift.reset(obs([1.0, 0.0]))
>>> shift.update(obs([0.9, 0.1])).decision.value
'continue'
>>> v = shift.update(obs([0.0, 1.0]))
>>> v.decision.value, v.score > 1.0
('boundary', True)
"""

from __future__ import annotations

import functools

from episeg.config import SemanticConfig
from episeg.segmentation.signals._running import RunningMean
from episeg.text import content_words
from episeg.types import Decision, ObservedTurn, SignalName, Verdict

__all__ = ["SemanticShift", "turn_words"]


@functools.lru_cache(maxsize=16)
def turn_words(text: str) -> tuple[str, ...]:
    """:func:`~episeg.text.content_words` of a turn, memoised for the few latest texts.

    This signal and the learned combiner's ``TurnView.make`` both read them for the same
    turn; this computes them once.

    >>> turn_words("Deploy the API to prod")
    ('deploy', 'api', 'prod')
    """
    return tuple(content_words(text))


class SemanticShift:
    """Cosine distance of each turn to the episode's decayed running mean.

    Parameters
    ----------
    threshold
        Distance above which the turn votes ``boundary``.
    decay
        Weight kept by the old mean when a turn is folded in.
    min_turns
        Abstain until the open episode holds this many turns.
    min_words
        Turns with fewer content words than this ("where do I check that?")
        have unreliable embeddings; their evidence is scaled down by
        ``content words / min_words``.

    The verdict's ``score`` is ``distance / threshold`` times that confidence:
    1.0 at the threshold for an informative turn, so the combiner can weigh
    near-misses as ambiguous. The decision is ``boundary`` when score > 1.
    """

    name = SignalName.SEMANTIC.value

    def __init__(
        self, *, threshold: float = 0.65, decay: float = 0.6, min_turns: int = 2, min_words: int = 4
    ) -> None:
        SemanticConfig(threshold=threshold, decay=decay, min_turns=min_turns, min_words=min_words)
        self.threshold = threshold
        self.decay = decay
        self.min_turns = min_turns
        self.min_words = min_words
        self._mean = RunningMean(decay=decay)
        self.last_distance = 0.0

    def update(self, turn: ObservedTurn) -> Verdict:
        distance = self._mean.distance(turn.embedding)
        self.last_distance = distance
        enough = self._mean.count >= self.min_turns
        self._mean.add(turn.embedding)
        if not enough:
            return Verdict(
                self.name,
                Decision.ABSTAIN,
                0.0,
                f"episode too short ({self._mean.count - 1} turns)",
            )
        confidence = min(1.0, len(turn_words(turn.text)) / self.min_words)
        score = distance / self.threshold * confidence
        decision = Decision.BOUNDARY if score > 1.0 else Decision.CONTINUE
        return Verdict(
            self.name,
            decision,
            score,
            f"distance {distance:.3f} vs threshold {self.threshold:.3f}"
            f" (confidence {confidence:.2f})",
        )

    def reset(self, turn: ObservedTurn) -> None:
        self._mean.clear()
        self._mean.add(turn.embedding)
