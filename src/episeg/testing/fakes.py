"""Deterministic fakes for unit tests of logic (never a substitute for the real parts).

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

import hashlib
import re
from collections.abc import Iterable, Sequence

import numpy as np

from episeg.errors import JudgeError
from episeg.types import Decision, Turn
from episeg.typing import JudgeAnswer

__all__ = ["HashingEmbedder", "ScriptedJudge"]

_WORD = re.compile(r"[a-z0-9]+")


class HashingEmbedder:
    """Bag-of-words feature hashing: same words, same vector; no model.

    Texts without words map to a fixed unit vector so the output is always
    normalised.
    """

    name = "hashing"

    def __init__(self, dim: int = 64) -> None:
        if dim < 2:
            raise ValueError(f"dim must be >= 2, got {dim}")
        self._dim = dim
        self.calls = 0
        self.texts_embedded = 0

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        self.texts_embedded += len(texts)
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            words = _WORD.findall(text.lower())
            for word in words:
                digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
                bucket = int.from_bytes(digest[:4], "little") % self._dim
                sign = 1.0 if digest[4] & 1 else -1.0
                out[row, bucket] += sign
            norm = float(np.linalg.norm(out[row]))
            if norm == 0.0:
                out[row, 0] = 1.0
            else:
                out[row] /= norm
        return out


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
