"""Builders for segmentation tests."""

from __future__ import annotations

import numpy as np

from episeg.types import ObservedTurn, Turn, TurnType


def observed(
    text: str = "topic",
    *,
    actor: str = "user",
    ts: float = 0.0,
    vector: list[float] | None = None,
    kind: str | None = None,
    markers: tuple[str, ...] = (),
    position: int = 0,
) -> ObservedTurn:
    turn = Turn(actor=actor, text=text, ts=ts, type=kind)
    inferred = TurnType.parse(kind) if kind else TurnType.USER_QUESTION
    vec = np.asarray(vector if vector is not None else [1.0, 0.0], dtype=np.float64)
    return ObservedTurn(
        turn=turn,
        text=text,
        embedding=vec,
        position=position,
        inferred_type=inferred,
        markers=markers,
    )
