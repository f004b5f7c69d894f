"""Deterministic fakes for unit tests of logic (never a substitute for the real parts).

:class:`HashingEmbedder` lives in :mod:`episeg.embedders` (library code uses it
too) and is re-exported here.

>>> import numpy as np
>>> from episeg.testing import HashingEmbedder
>>> emb = HashingEmbedder(dim=64)
>>> v = emb.embed(["deploy the prod version", "deploy prod"])
>>> v.shape, round(float(np.linalg.norm(v[0])), 6)
((2, 64), 1.0)
>>> float(v[0] @ v[1]) > 0.5
True
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from episeg.embedders import HashingEmbedder
from episeg.errors import JudgeError
from episeg.types import Decision, JudgeAnswer, Turn

__all__ = ["HashingEmbedder", "MiniLMShaped", "ScriptedJudge"]


class MiniLMShaped(HashingEmbedder):
    """Hashing vectors under the bundled model's name and width (384).

    It passes the learned combiner's embedder check, so unit tests of the
    learned path's logic run without loading MiniLM. Its vectors mean nothing
    to the boundary model: never use it to judge segmentation quality.

    >>> from episeg.segmentation import Segmenter
    >>> Segmenter(embedder=MiniLMShaped()).learned is not None
    True
    """

    name = "all-MiniLM-L6-v2"

    def __init__(self, dim: int = 384) -> None:
        super().__init__(dim=dim)


class ScriptedJudge:
    """A judge that replays a script of decisions (or raises ``JudgeError``).

    Each script item is a :class:`Decision` value string, or ``"error"``.
    When the script runs out it answers ``continue``.
    """

    name = "scripted"

    def __init__(self, script: Iterable[str] = ()) -> None:
        self._script = list(script)
        self._calls = 0
        self.seen: list[tuple[str, str]] = []

    @property
    def calls(self) -> int:
        return self._calls

    def judge(self, summary: str, recent: Sequence[Turn], turn: Turn) -> JudgeAnswer:
        self._calls += 1
        self.seen.append((summary, turn.text))
        item = self._script.pop(0) if self._script else "continue"
        if item == "error":
            raise JudgeError("scripted failure")
        return JudgeAnswer(
            decision=Decision.parse(item), summary=f"about: {turn.text[:40]}", reason="scripted"
        )
