"""Episode builders shared by the store tests, and a reader of Chroma's vector files."""

from __future__ import annotations

from pathlib import Path

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


def stored_vectors(folder: Path) -> np.ndarray:
    """Every vector in the slots in use of every Chroma segment under ``folder``, deleted too."""
    from episeg.store.scrub import Layout

    out = [np.zeros((0, 1), dtype=np.float32)]
    for header in folder.rglob("header.bin"):
        s = Layout.read(header.parent)
        raw = np.fromfile(header.with_name("data_level0.bin"), dtype=np.uint8)
        slots = raw[: s.count * s.per_element].reshape(s.count, s.per_element)
        out.append(np.ascontiguousarray(slots[:, s.vector_at : s.label_at]).view(np.float32))
    dim = max(v.shape[1] for v in out)
    return np.concatenate([v for v in out if v.shape[1] == dim])


def held_vector(stored: np.ndarray, vec: np.ndarray) -> bool:
    """Whether ``stored`` holds ``vec`` as Chroma keeps it (normalised, float32)."""
    unit = np.asarray(vec, dtype=np.float64) / np.linalg.norm(vec)
    if stored.shape[1] != len(unit):
        return False
    return bool(np.any(np.abs(stored - unit).max(axis=1) < 1e-6))
