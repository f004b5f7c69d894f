"""``episeg report``: a self-contained HTML timeline of how a transcript was segmented (the data).

The timeline comes from the library, never re-derived: a
:class:`~episeg.segmentation.segmenter.Segmenter` with ``keep_trace=True`` (per-turn
decisions, verdicts and semantic distance) and the salience scorer, once per
episode. :mod:`episeg.interfaces.report.html` turns it into one HTML page (inline CSS,
SVG and a few lines of JS; no network). All turn text is escaped.

>>> from episeg.testing import HashingEmbedder
>>> from episeg.types import Turn
>>> turns = [Turn(actor="user", text="auth returns 401 <script>x()</script>", ts=0.0),
...          Turn(actor="assistant", text="Rotate the key. <episode_boundary>", ts=1.0),
...          Turn(actor="user", text="now deploy prod", ts=2.0)]
>>> timelines = build_timelines(turns, embedder=HashingEmbedder())
>>> [len(band.episode.turns) for band in timelines[0].bands]
[2, 1]
>>> timelines[0].rows[2].fired[0].signal
'marker'
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from episeg.config import EpisegConfig
from episeg.defaults import DEFAULT, default_embedder, default_scorer, resolve_judge
from episeg.interfaces.views import fired_verdicts
from episeg.segmentation.segmenter import Segmenter, TurnTrace
from episeg.types import Decision, Episode, Turn, Verdict
from episeg.typing import Embedder, SalienceScorer

__all__ = ["EpisodeBand", "SessionTimeline", "TurnRow", "build_timelines"]


@dataclass(frozen=True, slots=True)
class TurnRow:
    """One turn on the timeline: where it sits, its episode, and what the signals said."""

    position: int
    turn: Turn
    episode_index: int
    decision: Decision
    verdicts: tuple[Verdict, ...]
    fired: tuple[Verdict, ...]
    distance: float | None

    @property
    def opens_episode(self) -> bool:
        return self.decision.opens_episode


@dataclass(frozen=True, slots=True)
class EpisodeBand:
    """One episode on the timeline: turn positions ``first..last`` (inclusive)."""

    index: int
    episode: Episode
    first: int
    last: int

    @property
    def is_sub_episode(self) -> bool:
        return self.episode.parent_id is not None


@dataclass(frozen=True, slots=True)
class SessionTimeline:
    """The rows and bands of one (user, session) stream."""

    user: str
    session: str
    rows: tuple[TurnRow, ...]
    bands: tuple[EpisodeBand, ...]
    threshold: float


def build_timelines(
    turns: Sequence[Turn],
    *,
    embedder: Embedder | None = None,
    config: EpisegConfig | None = None,
    scorer: SalienceScorer | None = None,
) -> list[SessionTimeline]:
    """Segment ``turns`` (batch, with trace), score each episode, lay out per session.

    ``scorer`` defaults to the offline anchored scorer for
    ``config.salience.anchors``; the judge is ``Memory``'s default
    (:func:`~episeg.defaults.resolve_judge`).
    """
    config = config or EpisegConfig()
    embedder = embedder if embedder is not None else default_embedder(config)
    scorer = scorer if scorer is not None else default_scorer(embedder, config)
    segmenter = Segmenter(
        config=config,
        embedder=embedder,
        judge=resolve_judge(DEFAULT, embedder, config),
        keep_trace=True,
    )
    episodes = [
        dataclasses.replace(ep, salience=scorer.score(ep)) for ep in segmenter.segment(turns)
    ]
    traces: dict[tuple[str, str], dict[int, TurnTrace]] = {}
    for trace in segmenter.trace or []:
        traces.setdefault((trace.user, trace.session), {})[trace.position] = trace
    by_session: dict[tuple[str, str], list[Episode]] = {}
    for ep in episodes:
        by_session.setdefault((ep.user, ep.session), []).append(ep)
    return [
        _layout(user, session, eps, traces.get((user, session), {}), config.semantic.threshold)
        for (user, session), eps in by_session.items()
    ]


def _layout(
    user: str, session: str, episodes: list[Episode], traces: dict[int, TurnTrace], threshold: float
) -> SessionTimeline:
    rows: list[TurnRow] = []
    bands: list[EpisodeBand] = []
    for index, ep in enumerate(episodes):
        first = len(rows)
        for turn in ep.turns:
            trace = traces.get(len(rows))
            verdicts = trace.verdicts if trace else ()
            decision = trace.decision if trace else Decision.CONTINUE
            fired = tuple(fired_verdicts(verdicts)) if decision.opens_episode else ()
            rows.append(
                TurnRow(
                    len(rows),
                    turn,
                    index,
                    decision,
                    verdicts,
                    fired,
                    trace.semantic_distance if trace else None,
                )
            )
        bands.append(EpisodeBand(index, ep, first, len(rows) - 1))
    return SessionTimeline(user, session, tuple(rows), tuple(bands), threshold)
