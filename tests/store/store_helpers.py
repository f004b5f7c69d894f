"""Episode builders shared by the store tests."""

from __future__ import annotations

import numpy as np

from episeg.types import Decision, Episode, Salience, Turn, Verdict


def unit(v: list[float] | np.ndarray) -> np.ndarray:
    arr = np.asarray(v, dtype=np.float32)
    return arr / np.linalg.norm(arr)


def make_episode(
    id: str,
    vec: list[float] | np.ndarray,
    *,
    text: str = "hello",
    closed_at: float = 1000.0,
    score: int | None = 5,
    **kw: object,
) -> Episode:
    sal = None if score is None else Salience.scored(score, scorer="test")
    return Episode(
        id=id,
        user="u",
        session="s",
        turns=(
            Turn(actor="user", text=text, ts=closed_at - 10, id=f"{id}:0"),
            Turn(actor="assistant", text="ok " + text, ts=closed_at, type="assistant-answer"),
        ),
        summary=text,
        opened_at=closed_at - 10,
        closed_at=closed_at,
        embedding=unit(vec),
        salience=sal,
        closing_verdicts=(Verdict("window", Decision.BOUNDARY, 0.9, "max turns"),),
        **kw,  # type: ignore[arg-type]
    )
