"""Offline default salience: place the episode between embedded anchor examples.

No model server, deterministic for a deterministic embedder. The formula::

    e      = normalised mean embedding of the episode text (in chunks)
    s_low  = max cosine(e, low anchor episodes)     # nearest "1" example
    s_high = max cosine(e, high anchor episodes)    # nearest "10" example
    p      = sigmoid((s_high - s_low) / temperature)          # in (0, 1)
    base   = 1 + 9 * p
    bonus  = error_weight      * min(tool errors, 2)
           + correction_weight * min(user corrections, 2)
           + length_weight     * clip(log2(turns / length_ref), 0, 2)
    score  = round_half_up(clip(base + bonus, 1, 10))

With the defaults (temperature 0.1, weights 0.75 / 0.5 / 0.5, length_ref 4)
structure adds at most 3.5 points: it breaks ties and lifts debugging work,
it cannot turn small talk into an incident.

>>> from episeg.salience import AnchoredOfflineScorer
>>> from episeg.testing import HashingEmbedder
>>> from episeg.types import Episode, Turn
>>> def episode(*texts):
...     turns = tuple(Turn(actor="user", text=t, ts=float(i)) for i, t in enumerate(texts))
...     return Episode(id="e", user="u", session="s", turns=turns, summary="",
...                    opened_at=0.0, closed_at=1.0)
>>> scorer = AnchoredOfflineScorer(HashingEmbedder(dim=512), anchors="sre")
>>> low = scorer.score(episode("which dashboard shows the request rate?"))
>>> high = scorer.score(episode("production is down, root cause: database pool exhausted"))
>>> low.score < high.score, low.scorer
(True, 'anchored-offline:hashing:sre')
"""

from __future__ import annotations

import logging
import math
from numbers import Integral, Real

import numpy as np

from episeg.errors import ConfigError
from episeg.salience.anchors import AnchorSet, anchor_set
from episeg.text import is_tool_error, is_user_correction
from episeg.types import Episode, Salience
from episeg.typing import Embedder

__all__ = ["AnchoredOfflineScorer"]

log = logging.getLogger(__name__)


class AnchoredOfflineScorer:
    """Deterministic anchored 1-10 scorer; implements ``SalienceScorer``.

    Parameters
    ----------
    embedder : Embedder
        The same embedder the segmenter uses (MiniLM by default).
    anchors : str or AnchorSet, default "general"
        ``general``, ``coding``, ``sre`` or a custom :class:`AnchorSet`.
    temperature : float, default 0.1
        Softness of the placement between the anchors (cosine units); lower
        pushes scores toward the ends.
    error_weight : float, default 0.75
        Points per tool-error turn (at most 2 counted).
    correction_weight : float, default 0.5
        Points per user-correction turn (at most 2 counted).
    length_weight : float, default 0.5
        Points per doubling of the turn count beyond ``length_ref`` (at most 2).
    length_ref : int, default 4
        Episodes of this many turns or fewer get no length points.
    chunk_chars : int, default 1500
        The episode text is embedded in chunks of about this many characters
        (MiniLM reads ~256 word pieces), at most ``max_chunks`` of them; a
        longer line is cut into even pieces of at most this size first.
    max_chunks : int, default 8

    Raises
    ------
    ConfigError
        A temperature that is not a finite number > 0, a weight that is not a
        finite number >= 0, a count that is not an integer >= 1 (also a
        ``ValueError``).

    An embedder giving a non-finite vector leaves the episode unscored (with
    the reason, logged), never a silent 1.
    """

    def __init__(
        self,
        embedder: Embedder,
        *,
        anchors: str | AnchorSet = "general",
        temperature: float = 0.1,
        error_weight: float = 0.75,
        correction_weight: float = 0.5,
        length_weight: float = 0.5,
        length_ref: int = 4,
        chunk_chars: int = 1500,
        max_chunks: int = 8,
    ) -> None:
        if not isinstance(embedder, Embedder):
            raise TypeError(f"embedder must implement Embedder, got {type(embedder)!r}")
        for label, value, least in (
            ("temperature", temperature, 0.0),
            ("error_weight", error_weight, 0.0),
            ("correction_weight", correction_weight, 0.0),
            ("length_weight", length_weight, 0.0),
        ):
            if (
                isinstance(value, bool)
                or not isinstance(value, Real)
                or not math.isfinite(value)
                or value < least
                or (label == "temperature" and value == 0)
            ):
                rule = "> 0" if label == "temperature" else ">= 0"
                raise ConfigError(f"{label} must be a finite number {rule}, got {value!r}")
        for label, count in (
            ("length_ref", length_ref),
            ("chunk_chars", chunk_chars),
            ("max_chunks", max_chunks),
        ):
            if isinstance(count, bool) or not isinstance(count, Integral) or count < 1:
                raise ConfigError(f"{label} must be an integer >= 1, got {count!r}")
        self._embedder = embedder
        self._anchors = anchor_set(anchors)
        self._temperature = float(temperature)
        self._weights = (float(error_weight), float(correction_weight), float(length_weight))
        self._length_ref = int(length_ref)
        self._chunk_chars = int(chunk_chars)
        self._max_chunks = int(max_chunks)
        self._anchor_vectors: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def name(self) -> str:
        return f"anchored-offline:{self._embedder.name}:{self._anchors.name}"

    @property
    def anchors(self) -> AnchorSet:
        return self._anchors

    def score(self, episode: Episode) -> Salience:
        """Score the whole episode once (see the module docstring for the formula)."""
        if not episode.turns:
            return Salience.unscored("episode has no turns", scorer=self.name)
        low, high = self._anchor_matrix()
        vector = self._episode_vector(episode)
        s_low, s_high = float(np.max(low @ vector)), float(np.max(high @ vector))
        if not (math.isfinite(s_low) and math.isfinite(s_high)):
            problem = f"non-finite embedding (sim low {s_low} high {s_high})"
            log.warning(
                "salience of episode %s left unscored by %s: %s", episode.id, self.name, problem
            )
            return Salience.unscored(problem, scorer=self.name)
        place = _sigmoid((s_high - s_low) / self._temperature)
        errors = sum(is_tool_error(t) for t in episode.turns)
        corrections = sum(is_user_correction(t) for t in episode.turns)
        doublings = min(2.0, max(0.0, math.log2(len(episode.turns) / self._length_ref)))
        w_err, w_corr, w_len = self._weights
        bonus = w_err * min(errors, 2) + w_corr * min(corrections, 2) + w_len * doublings
        raw = min(10.0, max(1.0, 1.0 + 9.0 * place + bonus))
        value = math.floor(raw + 0.5)
        reason = (
            f"anchors {self._anchors.name}: sim low {s_low:.2f} high {s_high:.2f} -> "
            f"{1 + 9 * place:.2f}; +{bonus:.2f} for {errors} tool error(s), "
            f"{corrections} correction(s), {len(episode.turns)} turns"
        )
        return Salience.scored(value, scorer=self.name, reason=reason)

    def _anchor_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        if self._anchor_vectors is None:
            low = list(self._anchors.low_episodes)
            vectors = np.asarray(
                self._embedder.embed([*low, *self._anchors.high_episodes]), dtype=np.float64
            )
            self._anchor_vectors = (vectors[: len(low)], vectors[len(low) :])
        return self._anchor_vectors

    def _episode_vector(self, episode: Episode) -> np.ndarray:
        chunks: list[str] = []
        current = ""
        size = self._chunk_chars
        for whole in episode.text.split("\n"):
            for line in _pieces(whole, size):
                if current and len(current) + len(line) + 1 > size:
                    chunks.append(current)
                    current = ""
                current = f"{current}\n{line}" if current else line
        chunks.append(current)
        if len(chunks) > self._max_chunks:  # keep the opening and the ending
            half = self._max_chunks // 2
            chunks = chunks[: self._max_chunks - half] + chunks[len(chunks) - half :]
        vectors = np.asarray(self._embedder.embed(chunks), dtype=np.float64)
        mean = vectors.mean(axis=0)
        norm = float(np.linalg.norm(mean))
        result: np.ndarray = mean / norm if norm > 0 else mean
        return result


def _pieces(line: str, size: int) -> list[str]:
    """``line`` cut into the fewest pieces of at most ``size`` characters, of even length.

    >>> [len(p) for p in _pieces("x" * 3001, 1500)], _pieces("", 1500)
    ([1001, 1001, 999], [''])
    """
    if len(line) <= size:
        return [line]
    step = -(-len(line) // -(-len(line) // size))  # ceil(len / ceil(len / size))
    return [line[i : i + step] for i in range(0, len(line), step)]


def _sigmoid(x: float) -> float:
    """``1 / (1 + e^-x)`` without overflow for any ``x`` (a small temperature makes it large).

    For ``x >= -700`` it is that very expression (the same bits as before); below,
    ``e^-x`` would overflow past ~709, and ``e^x`` equals the sigmoid to float
    precision there (the relative difference is below ``e^-700``).

    >>> _sigmoid(0.0), _sigmoid(-1e6), _sigmoid(1e6)
    (0.5, 0.0, 1.0)
    """
    if x >= -700.0:
        return 1.0 / (1.0 + math.exp(-x))
    return math.exp(x)
