"""An offline, deterministic stand-in for the LLM prediction-error judge.

>>> from episeg.judges import LocalJudge
>>> from episeg.testing import HashingEmbedder
>>> from episeg.types import Turn
>>> judge = LocalJudge(HashingEmbedder(dim=256))
>>> recent = [Turn(actor="user", text="the auth service returns 401 for valid tokens", ts=0),
...           Turn(actor="assistant", text="check token audience and auth clock skew", ts=1)]
>>> first = judge.judge("", recent, Turn(actor="user", text="auth clock skew was it", ts=2))
>>> first.decision.value, first.summary
('continue', 'auth clock skew service returns 401 valid tokens')
>>> turn = Turn(actor="user", text="unrelated: recommend a lasagna recipe with spinach", ts=3)
>>> judge.judge(first.summary, recent, turn).decision.value
'boundary'
>>> judge.calls
2
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from numbers import Integral, Real

import numpy as np

from episeg.errors import ConfigError, JudgeError
from episeg.text import content_words_any_script, is_tool_error
from episeg.types import Actor, Decision, JudgeAnswer, Turn
from episeg.typing import Embedder

__all__ = ["LocalJudge"]


class LocalJudge:
    """Approximates the LLM judge with embedding novelty and lexical novelty.

    What it approximates: the LLM's "does this turn diverge from what the
    episode summary predicts?" It answers ``new`` (``Decision.BOUNDARY``) only
    when the turn is novel in *both* senses:

    * embedding novelty ``1 - max(cos(turn, summary), cos(turn, mean(recent)))``,
      the embedder's view of topical distance to the running summary and to
      the (normalised) mean of the recent turns, at least ``embed_threshold``;
    * lexical novelty: the share of the turn's content words (English
      stopwords removed; any script: :func:`~episeg.text.content_words_any_script`,
      character pairs in Chinese, Japanese, Korean, Thai...) absent from the
      episode vocabulary (the summary's keywords plus the recent turns' content
      words), at least ``lexical_threshold``;

    and the turn has at least ``min_content_words`` content words (so "ok,
    thanks" never opens an episode). Otherwise ``continue``.

    The updated summary is the episode's top ``summary_words`` keywords by
    frequency (summary keywords count double, ties by first appearance); after
    ``new`` it is the new turn's keywords.

    What it cannot do: it has no world knowledge (it cannot tell that "rollback"
    belongs to a "deploy" episode unless the embedder places them close), it
    does not read intent, and it detects sub-episodes only through one rule,
    off by default because the structural signal already applies it: with
    ``tool_error_rule=True`` a non-novel user turn right after a tool error
    answers ``sub-episode``.

    Parameters
    ----------
    embedder : Embedder
        Any episeg embedder; MiniLM in production, ``HashingEmbedder`` in tests.
    embed_threshold : float, default 0.7
        Minimum embedding novelty (cosine distance, in [0, 2]) for ``new``.
        0.7 means cosine similarity below 0.3 to both references, which for
        all-MiniLM-L6-v2 separates unrelated topics from related ones.
    lexical_threshold : float, default 0.6
        Minimum share of unseen content words, in [0, 1], for ``new``.
    min_content_words : int, default 3
        Shorter turns always continue.
    summary_words : int, default 8
        Keywords kept in the running summary.
    max_recent : int, default 4
        Recent turns compared against.
    tool_error_rule : bool, default False
        Enable the sub-episode rule above.

    Raises
    ------
    ConfigError
        A threshold that is not a number in its range, a count that is not an
        integer >= 1 (also a ``ValueError``).
    JudgeError
        From :meth:`judge` when the embedder fails (any exception it raises is
        wrapped), so the prediction signal records a failed call (abstain)
        instead of the error escaping the segmenter.
    """

    name = "local"

    def __init__(
        self,
        embedder: Embedder,
        *,
        embed_threshold: float = 0.7,
        lexical_threshold: float = 0.6,
        min_content_words: int = 3,
        summary_words: int = 8,
        max_recent: int = 4,
        tool_error_rule: bool = False,
    ) -> None:
        if not isinstance(embedder, Embedder):
            raise TypeError(f"embedder must implement Embedder, got {type(embedder)!r}")
        for label, value, high in (
            ("embed_threshold", embed_threshold, 2.0),
            ("lexical_threshold", lexical_threshold, 1.0),
        ):
            if isinstance(value, bool) or not isinstance(value, Real) or not 0.0 <= value <= high:
                raise ConfigError(f"{label} must be a number in [0, {high:g}], got {value!r}")
        for label, count in (
            ("min_content_words", min_content_words),
            ("summary_words", summary_words),
            ("max_recent", max_recent),
        ):
            if isinstance(count, bool) or not isinstance(count, Integral) or count < 1:
                raise ConfigError(f"{label} must be an integer >= 1, got {count!r}")
        self._embedder = embedder
        self._embed_threshold = float(embed_threshold)
        self._lexical_threshold = float(lexical_threshold)
        self._min_words = int(min_content_words)
        self._summary_words = int(summary_words)
        self._max_recent = int(max_recent)
        self._tool_error_rule = tool_error_rule
        self._calls = 0

    @property
    def calls(self) -> int:
        """Judgements made (no model server is ever called)."""
        return self._calls

    def judge(self, summary: str, recent: Sequence[Turn], turn: Turn) -> JudgeAnswer:
        """``continue`` / ``boundary`` / (optionally) ``sub-episode`` plus a keyword summary."""
        self._calls += 1
        shown = list(recent)[-self._max_recent :]
        summary_kw = content_words_any_script(summary)
        recent_words = [w for t in shown for w in content_words_any_script(t.text)]
        words = content_words_any_script(turn.text)
        vocabulary = set(summary_kw) | set(recent_words)
        if not vocabulary:
            return JudgeAnswer(
                Decision.CONTINUE,
                self._keywords([], [], words),
                reason="local: no episode context yet",
            )
        lexical = sum(w not in vocabulary for w in words) / len(words) if words else 0.0
        embed = self._embedding_novelty(summary, shown, turn)
        detail = (
            f"embedding novelty {embed:.2f} (>= {self._embed_threshold:g} needed), "
            f"lexical novelty {lexical:.2f} (>= {self._lexical_threshold:g} needed), "
            f"{len(words)} content words"
        )
        if (
            embed >= self._embed_threshold
            and lexical >= self._lexical_threshold
            and len(words) >= self._min_words
        ):
            return JudgeAnswer(
                Decision.BOUNDARY,
                self._keywords([], [], words),
                reason=f"local: new topic: {detail}",
            )
        updated = self._keywords(summary_kw, recent_words, words)
        if (
            self._tool_error_rule
            and shown
            and is_tool_error(shown[-1])
            and turn.actor is Actor.USER
        ):
            return JudgeAnswer(
                Decision.SUB_EPISODE,
                updated,
                reason=f"local: user turn after a tool error; {detail}",
            )
        return JudgeAnswer(Decision.CONTINUE, updated, reason=f"local: continues: {detail}")

    def _embedding_novelty(self, summary: str, recent: list[Turn], turn: Turn) -> float:
        texts = [t.text for t in recent] + [turn.text]
        has_summary = bool(summary.strip())
        if has_summary:
            texts.append(summary)
        try:
            vectors = np.asarray(self._embedder.embed(texts), dtype=np.float64)
        except Exception as exc:  # the judge's contract: a failure is a JudgeError
            raise JudgeError(f"local judge: the embedder failed: {exc!r}") from exc
        new = vectors[len(recent)]
        sims: list[float] = []
        if recent:
            mean = vectors[: len(recent)].mean(axis=0)
            norm = float(np.linalg.norm(mean))
            if norm > 0.0:
                sims.append(float(new @ mean) / norm)
        if has_summary:
            sims.append(float(new @ vectors[-1]))
        return 1.0 - max(sims) if sims else 0.0

    def _keywords(self, summary_kw: list[str], recent_words: list[str], words: list[str]) -> str:
        counts: Counter[str] = Counter()
        first: dict[str, int] = {}
        for index, word in enumerate([*summary_kw, *summary_kw, *recent_words, *words]):
            counts[word] += 1
            first.setdefault(word, index)
        ranked = sorted(counts, key=lambda w: (-counts[w], first[w]))
        return " ".join(ranked[: self._summary_words])
