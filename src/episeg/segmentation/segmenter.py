"""The streaming and batch segmenter: five signals, one combiner.

Per turn, cheapest first: agent marker, structural type, fixed window, semantic shift,
gradual drift. The combiner (``combiner`` config section) then decides: by default the
learned :class:`~episeg.segmentation.learned.LearnedPolicy` (the marker, a harness-supplied
system-event and the window floor rule first; then the boundary model's logit, with the
features that drove it in the verdict); ``combiner.kind="layered"`` keeps the hand-set
:class:`~episeg.segmentation.policy.BoundaryPolicy`. The prediction-error judge is asked
only when the gate lets it (the combiner's uncertain band and/or the periodic cadence).
Streaming (:meth:`Segmenter.observe`), batch (:meth:`Segmenter.segment`) and replay run the
same per-turn step (L turns behind for a model reading L later turns, :mod:`.lookahead`).

>>> from episeg.testing import HashingEmbedder
>>> from episeg.types import Turn
>>> seg = Segmenter(embedder=HashingEmbedder())
>>> texts = ["auth login returns 401", "Rotate the jwt key. <episode_boundary>",
...          "how do I deploy prod?", "Edit version.tf, then apply."]
>>> turns = [Turn(actor="user" if i % 2 == 0 else "assistant", text=t, ts=float(i))
...          for i, t in enumerate(texts)]
>>> [len(e.turns) for e in seg.segment(turns)]
[2, 2]

Wrong arguments get a typed error naming them (:mod:`~episeg.segmentation.arguments`).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import replace

import numpy as np

from episeg.config import EpisegConfig
from episeg.defaults import default_embedder
from episeg.segmentation import arguments
from episeg.segmentation.checkpoint import SessionCheckpoint
from episeg.segmentation.decide import TurnDecider
from episeg.segmentation.intake import PreparedTurn, preview_intake
from episeg.segmentation.learned import LearnedPolicy, learned_policy
from episeg.segmentation.lookahead import Lookahead
from episeg.segmentation.policy import BoundaryPolicy
from episeg.segmentation.signals.factory import ALL_SIGNALS
from episeg.segmentation.state import SessionState, TurnTrace
from episeg.segmentation.step import Step
from episeg.segmentation.tap import JudgeTap
from episeg.types import Episode, Turn
from episeg.typing import Embedder, Judge

__all__ = ["ALL_SIGNALS", "Segmenter", "Step", "TurnTrace"]

log = logging.getLogger(__name__)


class Segmenter:
    """Cuts turn streams into episodes, per (user, session).

    Parameters
    ----------
    config
        Tunables; defaults documented on :class:`EpisegConfig`.
    embedder
        Any :class:`Embedder`; default the bundled MiniLM (loaded once).
    judge
        Prediction-error judge; ``None`` disables signal 3. Wrapped in a ``JudgeTap``
        (:attr:`tap`): it records each answer (:attr:`Step.judge_record`) for :meth:`resume`.
    signals
        Names to enable from ``ALL_SIGNALS`` (a collection); default all that are possible.
    keep_trace
        Record a :class:`TurnTrace` per turn in :attr:`trace`.
    """

    def __init__(
        self,
        *,
        config: EpisegConfig | None = None,
        embedder: Embedder | None = None,
        judge: Judge | None = None,
        signals: Iterable[str] | None = None,
        keep_trace: bool = False,
    ) -> None:
        self.config = config or EpisegConfig()
        self.embedder = embedder if embedder is not None else default_embedder(self.config)
        self.judge = judge
        self.tap = JudgeTap(judge) if judge is not None else None
        self.signals = arguments.chosen_signals(signals, has_judge=judge is not None)
        self.policy = BoundaryPolicy.from_config(self.config)
        self.trace: list[TurnTrace] | None = [] if keep_trace else None
        self._sessions: dict[tuple[str, str], SessionState] = {}
        self._counters: dict[str, int] = {}  # the decider fills in every counter
        self._dim: int | None = None  # the vectors' length, from the first embedding
        self._decider = TurnDecider(
            self.config,
            enabled=self.signals,
            policy=self.policy,
            learned=learned_policy(self.config, self.embedder),
            tap=self.tap,
            trace=self.trace,
            counters=self._counters,
        )
        self._wait = Lookahead(self._decider, self.lookahead)
        arguments.warn_ignored_settings(self.config, learned=self.learned is not None)

    @property
    def learned(self) -> LearnedPolicy | None:
        """The learned combiner (``None`` when ``combiner.kind`` is ``layered``)."""
        return self._decider.learned

    @learned.setter
    def learned(self, policy: LearnedPolicy | None) -> None:
        self._decider.learned = policy
        self._wait = Lookahead(self._decider, self.lookahead)  # the new policy's lookahead

    # -- public API -------------------------------------------------------------------
    @property
    def stats(self) -> dict[str, int]:
        """Counters: turns, episodes, embed_calls (texts), embed_batches, judge_calls, ..."""
        return dict(self._counters)

    def observe(self, turn: Turn) -> Step:
        """Take one turn; the :class:`Step` says what happened (iterate it for closed episodes)."""
        session = self._session(arguments.check_turn(turn, "observe"))
        before = (session.intake.seq, session.intake.last_ts, session.positions)
        prepared = session.intake.accept(turn, max_turn_chars=self.config.intake.max_turn_chars)
        if prepared is None:
            self._duplicate(turn)
            return Step()
        try:
            try:
                vector = self._embed([prepared.turn.text])[0]
                step = self._wait.advance(session, prepared, vector, seq=before[0])
            except BaseException:  # the embedder or the step failed: the turn may be re-sent
                if session.take_back(prepared.turn, *before):
                    self._counters["turns"] -= 1
                raise
            record = self.tap.take_for(step.decided) if self.tap is not None else None
        finally:
            if self.tap is not None:
                self.tap.clear()
        return replace(step, judge_record=record) if record is not None else step

    def preview(self, turns: Sequence[Turn]) -> list[bool]:
        """Check ``turns`` as :meth:`observe` would, in order, changing nothing.

        Per turn ``False`` if it would be skipped as a duplicate id; raises the
        ``TurnValidationError`` of the first refused turn (refuse a batch whole).
        """
        known = {key: state.intake for key, state in self._sessions.items()}
        turns = arguments.check_turns(turns, "preview")
        return preview_intake(known, turns, max_turn_chars=self.config.intake.max_turn_chars)

    def flush(self, user: str | None = None, session: str | None = None) -> list[Episode]:
        """Close the open episode of every matching (user, session) (``None`` matches any)."""
        arguments.check_names(optional=True, user=user, session=session)
        closed = []
        for (u, s), state in self._sessions.items():
            wanted = (user is None or u == user) and (session is None or s == session)
            if wanted:
                closed.extend(self._wait.finish(state))
        if self.tap is not None:  # answers on drained turns: nothing open is left to replay
            self.tap.clear()
        return closed

    def open_turns(self, user: str, session: str) -> tuple[Turn, ...]:
        """The turns of the still-open episode of (user, session), then any not decided yet."""
        arguments.check_names(user=user, session=session)
        state = self._sessions.get((user, session))
        return (*state.open.turns, *(p.prepared.turn for p in state.pending)) if state else ()

    def checkpoint(self, user: str, session: str) -> SessionCheckpoint:
        """The opening state of (user, session)'s open episode, for the journal.

        Take it right after the turn that opened the episode (the summaries
        are those of that moment). An unknown session is an ``ArgumentError``.
        """
        state = arguments.known_session(self._sessions, user, session, "checkpoint")
        return SessionCheckpoint.of(state, user, session)

    def resume(
        self,
        checkpoint: SessionCheckpoint,
        turns: Sequence[tuple[Turn, np.ndarray]],
        *,
        seen_ids: Iterable[str] | Mapping[str, int | None] = (),
        last_ts: float | None = None,
        judge_records: Mapping[str, str] | None = None,
    ) -> list[Episode]:
        """Rebuild a session from its checkpoint and open turns (as given, ids set).

        ``seen_ids`` may map each id to its recorded fingerprint (same id, other
        content: a conflict, see :mod:`~episeg.segmentation.intake`). Turns are not
        re-embedded: each comes with its recorded embedding. With ``judge_records``
        (turn id -> :attr:`Step.judge_record`) the judge answers from them and is never
        called. Returns the episodes the replay closed (none when it is deterministic).
        """
        checkpoint, turns = arguments.check_replay(checkpoint, turns)
        tap = self.tap if judge_records is not None else None
        counted = dict(self._counters)  # a replay redoes counted work: the stats stay as they are
        try:
            with tap.replaying(judge_records or {}) if tap is not None else nullcontext():
                return self._resume(checkpoint, turns, seen_ids=seen_ids, last_ts=last_ts)
        finally:
            self._counters.update(counted)

    def _resume(
        self,
        checkpoint: SessionCheckpoint,
        turns: Sequence[tuple[Turn, np.ndarray]],
        *,
        seen_ids: Iterable[str] | Mapping[str, int | None],
        last_ts: float | None,
    ) -> list[Episode]:
        key = (checkpoint.user, checkpoint.session)
        state = self._sessions[key] = self._decider.fresh(checkpoint.user, checkpoint.session)
        state.intake.seq, state.positions = checkpoint.seq, checkpoint.position
        state.intake.remember(seen_ids, skip=[t.id for t, _ in turns])
        self._dim = self._dim or (len(turns[0][1]) if turns else None)
        closed: list[Episode] = []
        for n, (turn, vector) in enumerate(turns):
            seq = state.intake.seq
            prepared = state.intake.accept(turn, max_turn_chars=sys.maxsize)  # taken once: no limit
            if prepared is None:
                self._duplicate(turn)
                continue
            closed.extend(self._wait.advance(state, prepared, vector, seq=seq).closed)
            if n == 0:  # decided at once: a session's first turn
                checkpoint.restore(state)
        if not turns:  # nothing open (flushed, idle-closed): the judge's cadence still runs on
            checkpoint.restore(state)
        if last_ts is not None:
            state.intake.last_ts = last_ts
        return closed

    def forget(self, user: str, session: str) -> None:
        """Drop the in-memory state of (user, session) (before a :meth:`resume`)."""
        arguments.check_names(user=user, session=session)
        self._sessions.pop((user, session), None)

    def segment(self, turns: Iterable[Turn]) -> list[Episode]:
        """Batch: segment a whole transcript with batched embeddings.

        Runs on fresh state (streaming sessions are untouched) and flushes at
        the end. Gives the same boundaries as ``observe`` on each turn then
        ``flush``.
        """
        checked = arguments.check_turns(turns, "segment")
        saved, self._sessions = self._sessions, {}
        try:
            accepted: list[tuple[SessionState, PreparedTurn, int]] = []
            limit = self.config.intake.max_turn_chars
            for turn in checked:
                state = self._session(turn)
                seq = state.intake.seq
                prepared = state.intake.accept(turn, max_turn_chars=limit)
                if prepared is None:
                    self._duplicate(turn)
                    continue
                accepted.append((state, prepared, seq))
            vectors = self._embed([p.turn.text for _, p, _ in accepted])
            episodes: list[Episode] = []
            for (state, prepared, seq), vector in zip(accepted, vectors, strict=True):
                episodes.extend(self._wait.advance(state, prepared, vector, seq=seq).closed)
            episodes.extend(self.flush())
            return episodes
        finally:
            self._sessions = saved
            if self.tap is not None:
                self.tap.clear()

    @property
    def lookahead(self) -> int:
        """Later turns a turn waits for before it is decided (the boundary model's; 0: none)."""
        return self.learned.lookahead if self.learned is not None else 0

    # -- internals --------------------------------------------------------------------
    def _session(self, turn: Turn) -> SessionState:
        key = (turn.user, turn.session)
        state = self._sessions.get(key)
        if state is None:
            state = self._sessions[key] = self._decider.fresh(turn.user, turn.session)
        return state

    def _embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 1))
        limit = self.config.embedding.max_chars
        raw = self.embedder.embed([t[:limit] for t in texts])
        self._counters["embed_calls"] += len(texts)
        self._counters["embed_batches"] += 1
        vectors = arguments.check_vectors(raw, len(texts), self._dim)  # finite, one dimension
        self._dim = vectors.shape[1]
        return vectors

    def _duplicate(self, turn: Turn) -> None:
        self._counters["duplicates"] += 1
        log.info("skipped duplicate turn id %r in session %r", turn.id, turn.session)
