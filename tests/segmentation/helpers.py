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


AUTOID_WORDS = ["auth", "jwt", "deploy", "terraform", "postgres"]
AUTOID_WORDS += ["replica", "pytest", "fixture", "invoice", "pod"]
"""Words of the random turns of the auto-id resume tests."""

AUTOID_REVIEW: list[tuple[str | None, str, str]] = [
    (None, "user", "deploy prod api"),  # auto: s:0
    ("s:2", "assistant", "running terraform"),  # a client's id in the auto form
    (None, "user", "and the jwt key"),  # auto, skips 2: s:3
    ("x", "assistant", "rotated the key"),
    (None, "user", "check the replica"),  # auto: s:5 (s:4 is a later client id)
    ("s:4", "assistant", "replica is fine"),
]
"""The review's case (id or None, actor, text): a resume must give the live run's ids."""


def autoid_turns(spec: list[tuple[str | None, str, str]], *, user: str = "default") -> list[Turn]:
    """Turns of session ``s`` from ``(id or None, actor, text)``, one second apart."""
    return [
        Turn(actor=actor, text=text, ts=float(i), id=tid, user=user, session="s")
        for i, (tid, actor, text) in enumerate(spec)
    ]
