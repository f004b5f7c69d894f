"""An episode's salience as :class:`~episeg.memory.Memory` records it: scored, or unscored and why.

A scorer should not raise, and should return a :class:`~episeg.types.Salience`
(:class:`~episeg.typing.SalienceScorer`). A plug-in that raises, or returns
anything else (a bare ``7``), costs that episode its score, never its
storage: it is stored unscored with the reason, and a warning is logged.

>>> from episeg.types import Episode, Turn
>>> class Bare:
...     name = "bare"
...     def score(self, episode):
...         return 7
>>> ep = Episode(id="e", user="u", session="s", summary="", opened_at=0.0, closed_at=0.0,
...              turns=(Turn(actor="user", text="hi", ts=0.0),))
>>> score_episode(Bare(), ep)
Salience(score=None, scorer='bare', reason='scorer returned int, not a Salience')
>>> score_episode(None, ep).reason
'no salience scorer configured'
"""

from __future__ import annotations

import logging

from episeg.types import Episode, Salience
from episeg.typing import SalienceScorer

__all__ = ["score_episode"]

log = logging.getLogger("episeg.memory")


def score_episode(scorer: SalienceScorer | None, episode: Episode) -> Salience:
    """``scorer``'s salience of ``episode``; unscored (and logged) if it raises or returns junk."""
    if scorer is None:
        return Salience.unscored("no salience scorer configured", scorer="none")
    name = str(getattr(scorer, "name", type(scorer).__name__))
    try:
        salience = scorer.score(episode)
    except Exception as exc:  # scorers should not raise (a plug-in may): record it, go on
        log.warning("salience scorer %s raised on episode %s: %r", name, episode.id, exc)
        return Salience.unscored(f"scorer raised: {exc!r}", scorer=name)
    if not isinstance(salience, Salience):
        problem = f"scorer returned {type(salience).__name__}, not a Salience"
        log.warning("salience scorer %s on episode %s: %s", name, episode.id, problem)
        return Salience.unscored(problem, scorer=name)
    return salience
