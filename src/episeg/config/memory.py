"""Configuration sections around the segmenter: encoder, salience, recall, forgetting, store.

>>> EmbeddingConfig().backend, SalienceConfig().anchors
(<EmbedderBackend.ONNX: 'onnx'>, 'general')
>>> RecallConfig(weights=[0, 0, 2]).weights
(0.0, 0.0, 2.0)
>>> ForgettingConfig().archive_floor
0.05
>>> StoreConfig().sync_threshold
1
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from episeg.config.base import _fail, _int, _num, _Section, _triple
from episeg.types import EmbedderBackend

__all__ = ["EmbeddingConfig", "ForgettingConfig", "RecallConfig", "SalienceConfig", "StoreConfig"]


@dataclass(frozen=True, kw_only=True)
class EmbeddingConfig(_Section):
    """How turns are embedded by the bundled MiniLM (:func:`~episeg.defaults.default_embedder`).

    backend : EmbedderBackend, default "onnx"
        ``onnx``: :class:`~episeg.embedders.OnnxMiniLMEmbedder` (ONNX Runtime,
        graph exported from the packaged weights at first use and cached under
        ``$EPISEG_CACHE_DIR`` or ``~/.cache/episeg``); ``torch``:
        :class:`~episeg.embedders.MiniLMEmbedder` (sentence-transformers).
        Same vectors within 1e-5 cosine.
    threads : int or None, default None
        Intra-op threads of one encode. ``None``: ``min(2, usable cores)`` for
        onnx, torch's own default for torch. More threads than cores, or
        several processes each taking all cores, slowed encoding several-fold.
    max_chars : int, default 2000
        Only this many leading characters of a turn are embedded (MiniLM reads
        256 word pieces at most); the whole text is stored.
    batch_size : int, default 32
        Batch size for batch segmentation and episode embedding.

    >>> EmbeddingConfig(backend="torch").backend
    <EmbedderBackend.TORCH: 'torch'>
    """

    section: ClassVar[str] = "embedding"
    backend: EmbedderBackend = EmbedderBackend.ONNX
    threads: int | None = None
    max_chars: int = 2000
    batch_size: int = 32

    def __post_init__(self) -> None:
        object.__setattr__(self, "backend", EmbedderBackend.parse(self.backend))
        if self.threads is not None:
            _int(self.section, "threads", self.threads)
        _int(self.section, "max_chars", self.max_chars)
        _int(self.section, "batch_size", self.batch_size)


@dataclass(frozen=True, kw_only=True)
class SalienceConfig(_Section):
    """The salience scorers (:class:`~episeg.salience.AnchoredOfflineScorer`, LLM scorers).

    anchors : str, default "general"
        Anchor set: general, coding, sre (checked by the scorer that loads it).
    """

    section: ClassVar[str] = "salience"
    anchors: str = "general"

    def __post_init__(self) -> None:
        if not isinstance(self.anchors, str) or not self.anchors:
            raise _fail(self.section, "anchors", "an anchor set name", self.anchors)


@dataclass(frozen=True, kw_only=True)
class RecallConfig(_Section):
    """Recall: :class:`~episeg.recall.hierarchical.HierarchicalRecaller` (what
    :class:`~episeg.memory.Memory` uses) and the older episode-level
    :class:`~episeg.recall.Recaller` / :func:`~episeg.recall.rerank`.

    Defaults measured on the LoCoMo dev conversations (docs/RESULTS.md).

    weights : tuple[float, float, float], default (0.0, 0.0, 1.0)
        Weights of (recency, importance, relevance). Relevance is the fused
        rank score scaled to [0, 1]; recency and importance are in [0, 1] too.
        Recency and importance are 0 because every non-zero weight lowered
        evidence recall on LoCoMo; they still break ties.
    rrf_k : int, default 60
        Reciprocal rank fusion constant: a list's item at rank r adds 1 / (k + 1 + r).
    turn_candidates : int, default 200
        Turns read from each turn-level list (dense and lexical).
    episode_candidates : int, default 20
        Episodes read from the episode-level lexical list (0 switches it off).
    min_similarity : float, default 0.2
        A turn whose cosine to the query is below this is not a dense match;
        a query with no dense and no lexical match returns nothing.
    reinforcement_weight : float, default 0.0
        Weight of the MemoryBank retention ``exp(-t / S)`` of an episode whose
        use was confirmed (``S`` grows with each confirmation); a never-confirmed
        episode gets 0, so this is not a second recency term.
    recency_base : float, default 0.995
        Recency = recency_base ** hours since the episode closed or was last confirmed.
    min_span : tuple[float, float, float], default (0.1, 0.3, 0.2)
        Older :func:`~episeg.recall.rerank` only: smallest raw range each term
        (recency, importance, similarity) is min-max stretched over.
    candidates : int, default 50
        Older :class:`~episeg.recall.Recaller` only: nearest episodes fetched
        before its rerank (at least ``k``).
    overlap_reads : bool, default True
        Run the dense turn query on a worker thread while the lexical lists are
        computed (:mod:`episeg.recall.overlap`; 8.1-8.5 -> 6.3 ms p50 at 10^5
        episodes here). The hits are the same either way; False keeps every
        step on the calling thread.
    cache_episodes : int, default 256
        Decoded episodes kept in memory per tenant
        (:mod:`episeg.recall.episode_cache`); a hit found there is not read
        from the store. 0 switches the cache off.
    count_summaries : bool, default False
        Whether ``max_words`` also counts what a hit carries besides its turns:
        its summary's words and its two dates (start and end) for each episode
        returned. By default only turn words count (the summary is metadata a
        caller may drop); with it the whole answer fits the budget. On LoCoMo dev
        the default's lead over a BM25 + cosine hybrid at a matched budget comes
        from that uncounted text (docs/RESULTS.md, "What recall returns beyond
        its turns").
    warm_cache : bool, default False
        Fill that cache with the tenant's episodes when its recall index is
        built or loaded (:mod:`episeg.recall.resident`). With
        ``cache_episodes`` >= the tenant's episode count every hit is served
        from memory: at 10^5 episodes recall p50 drops from ~2.2-2.4x to
        ~1.4x the raw turn query, for a few KB per episode and one read of
        the tenant at start (docs/RESULTS.md). Hits are the same either way.
    """

    section: ClassVar[str] = "recall"
    weights: tuple[float, float, float] = (0.0, 0.0, 1.0)
    rrf_k: int = 60
    turn_candidates: int = 200
    episode_candidates: int = 20
    min_similarity: float = 0.2
    reinforcement_weight: float = 0.0
    recency_base: float = 0.995
    min_span: tuple[float, float, float] = (0.1, 0.3, 0.2)
    candidates: int = 50
    overlap_reads: bool = True
    cache_episodes: int = 256
    warm_cache: bool = False
    count_summaries: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "weights", _triple(self.section, "weights", self.weights))
        object.__setattr__(self, "min_span", _triple(self.section, "min_span", self.min_span))
        _int(self.section, "rrf_k", self.rrf_k, low=0)
        _int(self.section, "turn_candidates", self.turn_candidates)
        _int(self.section, "episode_candidates", self.episode_candidates, low=0)
        _num(self.section, "min_similarity", self.min_similarity, -1.0, 1.0)
        _num(self.section, "reinforcement_weight", self.reinforcement_weight, 0.0)
        _num(self.section, "recency_base", self.recency_base, 0.0, 1.0, low_open=True)
        _int(self.section, "candidates", self.candidates)
        _int(self.section, "cache_episodes", self.cache_episodes, low=0)
        for name in ("overlap_reads", "warm_cache", "count_summaries"):
            if not isinstance(getattr(self, name), bool):
                raise _fail(self.section, name, "true or false", getattr(self, name))


@dataclass(frozen=True, kw_only=True)
class ForgettingConfig(_Section):
    """MemoryBank-style strength and the maintenance pass (:mod:`episeg.recall.forgetting`).

    initial_days : float, default 1.0
        Strength S of a never-used, unscored (or salience 1) episode, in days (> 0).
    salience_boost : float, default 9.0
        The write-time salience sets the starting strength:
        ``S0 = initial_days * (1 + salience_boost * (score - 1) / 9)``, so with the
        defaults a score of n starts at n days (0: salience plays no part).
    growth_days : float, default 1.0
        Added to S on each confirmed use (R = exp(-t / S), t in days).
    archive_floor : float, default 0.05
        ``maintain(archive=True)`` archives episodes whose retention R falls below.
    """

    section: ClassVar[str] = "forgetting"
    initial_days: float = 1.0
    salience_boost: float = 9.0
    growth_days: float = 1.0
    archive_floor: float = 0.05

    def __post_init__(self) -> None:
        _num(self.section, "initial_days", self.initial_days, 0.0, low_open=True)
        _num(self.section, "salience_boost", self.salience_boost, 0.0)
        _num(self.section, "growth_days", self.growth_days, 0.0)
        _num(self.section, "archive_floor", self.archive_floor, 0.0, 1.0)


@dataclass(frozen=True, kw_only=True)
class StoreConfig(_Section):
    """How episeg makes the Chroma collections of :class:`~episeg.store.ChromaBackend`.

    sync_threshold : int, default 1
        Writes to a collection after which Chroma persists its vector index
        and purges its write-ahead log (``embeddings_queue``). 1: every write,
        so an erased episode's text leaves the log at once (:meth:`Memory.forget
        <episeg.memory.Memory.forget>`); but each write then rewrites the whole
        index: adding one episode took ~120 ms at 10^5 episodes in a tenant,
        ~18 ms on average at 100 (docs/RESULTS.md, "Writes at scale"). A larger
        value amortises that for large, write-heavy tenants; erased text then
        stays in the log until the next persist, and
        :class:`~episeg.store.erase.ForgetReport` ``log_rows`` says how many
        log rows still hold erased records. A store opened with a value its
        collections do not have reconfigures them (logged); Chroma applies it
        from the next time it opens them.
    """

    section: ClassVar[str] = "store"
    sync_threshold: int = 1

    def __post_init__(self) -> None:
        _int(self.section, "sync_threshold", self.sync_threshold)
