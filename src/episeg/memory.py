"""The facade most users want: turns in, scored and stored episodes, recall out.

:class:`Memory` wires the segmenter (signals 1-5), the salience scorer (once
per closed episode), one tenant-bound Chroma store per user, and hierarchical
recall (:mod:`episeg.recall.hierarchical`: episodes found by their turns,
lexical + dense, within a word budget). Recall never writes; reinforcement
follows :meth:`Memory.confirm_used`. The tenant of a turn is its ``user``.

Crash safety (see ``docs/RELIABILITY.md``): every accepted turn is committed
to a SQLite :class:`~episeg.durability.journal.Journal` before :meth:`Memory.observe`
returns, and a closed episode stays in the journal's outbox until the store
confirms it. A new ``Memory`` on the same path replays the journal: open
episodes are rebuilt without re-embedding or re-asking the judge, and
unconfirmed episodes are written again (an idempotent upsert). While the
store is down, closed episodes wait in the outbox (:meth:`Memory.pending_writes`)
and are retried on later calls or by :meth:`Memory.retry_pending`.

>>> import tempfile
>>> from episeg.testing import HashingEmbedder
>>> from episeg.types import Turn
>>> mem = Memory(path=tempfile.mkdtemp(), embedder=HashingEmbedder(), judge=None,
...              scorer=None)
>>> _ = mem.observe(Turn(actor="user", text="deploy prod version 2.14", ts=1.0, user="alice"))
>>> [len(e.turns) for e in mem.flush()]
[1]
>>> hit = mem.recall("alice", "deploy version", k=1)[0]
>>> hit.episode.summary, hit.start, [t.text for t in hit.turns]
('deploy prod version 2.14', '1970-01-01T00:00:01Z', ['deploy prod version 2.14'])
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from numbers import Integral, Real
from pathlib import Path

from episeg.config import EpisegConfig
from episeg.defaults import DEFAULT, Default, default_embedder, resolve_judge, resolve_scorer
from episeg.durability.idle import IdleClosing
from episeg.durability.journal import Journal
from episeg.durability.memory_forget import MemoryForget
from episeg.durability.memory_open import OpenRecall
from episeg.durability.memory_outbox import MemoryOutbox
from episeg.durability.memory_writes import MemoryWrites
from episeg.durability.outbox import PendingWriter
from episeg.durability.sessions import DEFAULT_MAX_RESIDENT, SessionPool
from episeg.errors import ConfigError, JournalError
from episeg.recall.hierarchical import HierarchicalRecaller
from episeg.recall.index import IndexedStore
from episeg.recall.memory_recall import MemoryRecall
from episeg.recall.open_corpus import OpenCorpus, OpenVersion
from episeg.segmentation.segmenter import Segmenter
from episeg.store import ChromaBackend
from episeg.store.memory_edit import MemoryEdit
from episeg.store.memory_transfer import MemoryTransfer
from episeg.typing import Embedder, Judge, SalienceScorer, StoreBackend

__all__ = ["DEFAULT", "Memory"]  # DEFAULT is episeg.defaults.DEFAULT, re-exported


class Memory(
    MemoryWrites,
    MemoryOutbox,
    MemoryRecall,
    MemoryForget,
    MemoryTransfer,
    MemoryEdit,
    IdleClosing,
    OpenRecall,
):
    """Episodic memory for many users, backed by Chroma.

    Parameters
    ----------
    path
        Folder for the embedded Chroma store and per-tenant learned weights.
    config
        Tunables (:class:`EpisegConfig`).
    embedder
        Default: the bundled all-MiniLM-L6-v2 (:func:`episeg.defaults.default_embedder`).
    judge
        Prediction-error judge, asked in the boundary model's uncertain band;
        ``None`` disables signal 3. ``DEFAULT`` is the offline :class:`LocalJudge`
        where it was measured to help (the layered combiner, the roles-unknown
        model) and no judge with the default roles-known model, where it made
        segmentation worse (:func:`episeg.defaults.resolve_judge`).
    scorer
        Salience scorer; ``DEFAULT`` is the offline anchored scorer for
        ``config.salience.anchors`` (:func:`episeg.defaults.default_scorer`);
        ``None`` stores episodes unscored (and says so).
    backend
        Any :class:`~episeg.typing.StoreBackend`: a :class:`ChromaBackend`
        (e.g. ``ChromaBackend.http(...)`` for a
        ``chroma run`` server); default an embedded store under ``path``.
    clock
        Seconds since the epoch; injectable for tests.
    journal
        Keep the crash-safety journal at ``path/journal.sqlite3`` (default);
        ``False`` keeps it in memory only (no crash safety, for throwaway runs).
    retry_interval
        Seconds to wait, after a failed store write, before writes are tried
        again automatically (:meth:`retry_pending` tries at once); finite, >= 0.
    max_sessions
        Sessions kept in memory (all tenants, >= 1); the least recently used
        beyond it are dropped and replayed from the journal when used again.

    Each tenant has its own segmenter and lock (:attr:`sessions`), so one
    tenant's turns, flushes, journal and store calls never wait for another's;
    a tenant's own writes are serialised (:meth:`tenant_lock`). Episode ids
    carry the journal's node id (:mod:`episeg.durability.ids`), so processes
    with separate journals can share one ``chroma run`` server.

    The methods live with the room they belong to, one mixin each: writing
    (observe, flush, outbox: :class:`~episeg.durability.memory_writes.MemoryWrites`),
    reading (stores, recall, reinforcement, maintenance:
    :class:`~episeg.recall.memory_recall.MemoryRecall`) and erasure
    (:class:`~episeg.durability.memory_forget.MemoryForget`), episodes handed in
    closed and the outbox (:class:`~episeg.durability.memory_outbox.MemoryOutbox`),
    export and import (:class:`~episeg.store.memory_transfer.MemoryTransfer`), get / edit /
    unarchive / tenants (:class:`~episeg.store.memory_edit.MemoryEdit`), the idle
    timeout (:class:`~episeg.durability.idle.IdleClosing`) and recall of open
    segments (:class:`~episeg.durability.memory_open.OpenRecall`). This class only
    builds the parts they share.

    Raises
    ------
    ConfigError
        ``max_sessions`` or ``retry_interval`` out of range, or a ``judge`` or
        ``scorer`` that does not implement its protocol (checked before
        anything is opened).
    JournalError
        When the journal cannot be opened or read at start-up (the journal,
        if it was opened, is closed again: the path is not left locked).
    """

    def __init__(
        self,
        *,
        path: str | Path = ".episeg",
        config: EpisegConfig | None = None,
        embedder: Embedder | None = None,
        judge: Judge | Default | None = DEFAULT,
        scorer: SalienceScorer | Default | None = DEFAULT,
        backend: StoreBackend | None = None,
        clock: Callable[[], float] = time.time,
        journal: bool = True,
        retry_interval: float = 5.0,
        max_sessions: int = DEFAULT_MAX_RESIDENT,
    ) -> None:
        _check_arguments(retry_interval=retry_interval, max_sessions=max_sessions)
        _check_plugins(judge=judge, scorer=scorer)
        self.config = config or EpisegConfig()
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self.embedder = embedder = (
            embedder if embedder is not None else default_embedder(self.config)
        )
        self.judge: Judge | None = resolve_judge(judge, embedder, self.config)
        self.scorer: SalienceScorer | None = resolve_scorer(scorer, embedder, self.config)
        self.backend: StoreBackend = backend or ChromaBackend.persistent(
            self.path / "chroma", sync_threshold=self.config.store.sync_threshold
        )
        self._clock = clock
        self._idle_checked: dict[str, float] = {}
        self._lock = threading.RLock()
        self._stores: dict[str, IndexedStore] = {}
        self._recallers: dict[str, HierarchicalRecaller] = {}
        self._open_corpora: dict[str, tuple[OpenVersion, OpenCorpus]] = {}
        self._drops: dict[str, int] = {}
        # without an LLM judge, summaries are extractive (the most representative turn)
        self._extractive = self.judge is None or self.judge.name == "local"
        self.retry_interval = float(retry_interval)
        self.journal = Journal(self.path / "journal.sqlite3" if journal else ":memory:")
        try:
            self._writer = PendingWriter(
                self.journal, self.store, retry_interval=retry_interval, rebuild=self.rebuild_store
            )
            self.sessions = SessionPool(
                lambda: Segmenter(config=self.config, embedder=embedder, judge=self.judge),
                self.journal,
                finish=self._finish,
                max_resident=max_sessions,
            )
            self._broken: JournalError | None = None
            self.recovery = self._recover()
        except BaseException:  # a half-built Memory must not keep the path locked
            self.journal.close()
            raise


def _check_arguments(*, retry_interval: float, max_sessions: int) -> None:
    """Refuse out-of-range arguments before ``Memory`` opens anything.

    >>> _check_arguments(retry_interval=5.0, max_sessions=0)
    Traceback (most recent call last):
    ...
    episeg.errors.ConfigError: max_sessions must be an int >= 1, got 0
    """
    if isinstance(max_sessions, bool) or not isinstance(max_sessions, Integral) or max_sessions < 1:
        raise ConfigError(f"max_sessions must be an int >= 1, got {max_sessions!r}")
    if (
        isinstance(retry_interval, bool)
        or not isinstance(retry_interval, Real)
        or not math.isfinite(retry_interval)
        or retry_interval < 0
    ):
        raise ConfigError(f"retry_interval must be a finite number >= 0, got {retry_interval!r}")


def _check_plugins(*, judge: object, scorer: object) -> None:
    """Refuse a ``judge`` or ``scorer`` that is not one, before ``Memory`` opens anything.

    Each is ``DEFAULT``, ``None`` or an object implementing its protocol
    (:class:`~episeg.typing.Judge`: ``name``, ``calls``, ``judge()``;
    :class:`~episeg.typing.SalienceScorer`: ``name``, ``score()``). A name such
    as ``"local"`` is not a judge: it would fail on every episode later.

    >>> _check_plugins(judge="local", scorer=None)
    Traceback (most recent call last):
    ...
    episeg.errors.ConfigError: judge must be DEFAULT, None or an episeg.typing.Judge, got str ...
    """
    for label, value, protocol in (("judge", judge, Judge), ("scorer", scorer, SalienceScorer)):
        if value is not None and value is not DEFAULT and not isinstance(value, protocol):
            raise ConfigError(
                f"{label} must be DEFAULT, None or an episeg.typing.{protocol.__name__}, "
                f"got {type(value).__name__} {value!r:.80}"
            )
