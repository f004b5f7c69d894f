"""Builders shared by the reliability tests: transcripts, episodes and store snapshots."""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Mapping, Sequence

from episeg.testing import HashingEmbedder
from episeg.types import Actor, Episode, Turn, TurnType, Verdict
from episeg.typing import StoreBackend

_TOPICS = [
    "oauth login returns 401 after the jwt key rotation",
    "deploy the prod release with terraform apply",
    "postgres replication lag on the read replica",
    "flaky pytest fixture leaks a temp directory",
    "kubernetes pod stuck in crashloopbackoff on start",
    "invoice pdf export renders the wrong currency",
]
_FILLER = ["please check", "the log says", "try again with", "what about", "I see", "done with"]


def make_transcript(n: int, *, seed: int = 0, users: int = 3, sessions: int = 2) -> list[Turn]:
    """``n`` turns interleaved over users x sessions, topic shifts, markers, explicit ids."""
    rng = random.Random(seed)
    streams = [(f"user{u}", f"s{s}") for u in range(users) for s in range(sessions)]
    topic = {k: rng.randrange(len(_TOPICS)) for k in streams}
    count = dict.fromkeys(streams, 0)
    turns: list[Turn] = []
    for i in range(n):
        key = rng.choice(streams)
        if rng.random() < 0.08:
            topic[key] = rng.randrange(len(_TOPICS))
        actor = ("user", "assistant", "tool")[count[key] % 3]
        text = f"{rng.choice(_FILLER)} {_TOPICS[topic[key]]} step {rng.randrange(50)}"
        kind = None
        if actor == "assistant" and rng.random() < 0.05:
            text += " <episode_boundary>"
        if actor == "tool" and rng.random() < 0.1:
            kind = "tool-error"
        turns.append(
            Turn(
                actor=Actor(actor),
                text=text,
                ts=float(i),
                type=TurnType(kind) if kind else None,
                user=key[0],
                session=key[1],
                id=f"{key[1]}-{count[key]}",
            )
        )
        count[key] += 1
    return turns


def one_turn_episode(user: str, eid: str, text: str, turn_id: str = "t0") -> Episode:
    """A closed one-turn episode of ``user`` in session "s" under a caller-chosen id ``eid``."""
    turn = Turn(actor="user", text=text, ts=10.0, id=turn_id, user=user, session="s")
    vector = HashingEmbedder().embed([text])  # the width of a Memory with HashingEmbedder()
    return Episode(
        id=eid,
        user=user,
        session="s",
        turns=(turn,),
        summary=text,
        opened_at=10.0,
        closed_at=10.0,
        embedding=vector[0],
        turn_embeddings=vector,
    )


def snapshot(backend: StoreBackend, users: list[str]) -> dict[str, Episode]:
    """Every stored episode of ``users`` by id (recall state reset for comparison)."""
    out: dict[str, Episode] = {}
    for user in users:
        store = backend.store_for(user)
        total = store.count()
        for episode in store.list_episodes(limit=max(total, 1), include_archived=True):
            assert episode.id not in out, f"episode {episode.id} listed twice"
            out[episode.id] = episode
    return out


def by_turns(rows: Mapping[str, Episode]) -> dict[str, Episode]:
    """Episodes keyed by ``user/session/first turn id``, their ids and parents' ids replaced by it.

    Two runs with separate journals name the same episode differently (each
    journal folds its own node id into episode ids), so runs are compared by
    what the episodes hold.
    """
    key = {eid: f"{e.user}/{e.session}/{e.turn_ids[0]}" for eid, e in rows.items()}
    return {
        key[eid]: dataclasses.replace(
            e, id=key[eid], parent_id=None if e.parent_id is None else key.get(e.parent_id, "?")
        )
        for eid, e in rows.items()
    }


def assert_same_verdicts(got: Sequence[Verdict], want: Sequence[Verdict], where: str) -> None:
    """Same signals, decisions and reasons; scores equal up to float rounding.

    A store written by an older build (the archived torn store) holds scores
    computed in float32 where the current segmenter works in float64, so they
    agree to a few parts per million (the drift statistic accumulates the
    rounding over an episode), not bit for bit; decisions and reasons must match.
    """
    assert len(got) == len(want), where
    for mine, theirs in zip(got, want, strict=True):
        assert dataclasses.replace(mine, score=0.0) == dataclasses.replace(theirs, score=0.0), where
        assert math.isclose(mine.score, theirs.score, rel_tol=1e-5, abs_tol=1e-6), where


def assert_same_store(got: dict[str, Episode], want: dict[str, Episode]) -> None:
    """Same episodes (by first turn), same turn ids, same content (embeddings within rounding)."""
    got, want = by_turns(got), by_turns(want)
    assert sorted(got) == sorted(want), (
        f"missing {sorted(set(want) - set(got))[:5]}, extra {sorted(set(got) - set(want))[:5]}"
    )
    for eid, episode in want.items():
        other = got[eid]
        assert other.turn_ids == episode.turn_ids, eid
        for field in ("boundary_verdicts", "closing_verdicts"):
            assert_same_verdicts(getattr(other, field), getattr(episode, field), f"{eid} {field}")
        without_trail = dataclasses.replace(other, boundary_verdicts=(), closing_verdicts=())
        assert without_trail == dataclasses.replace(
            episode, boundary_verdicts=(), closing_verdicts=()
        ), eid
        assert episode.embedding is not None and other.embedding is not None
        assert float(abs(other.embedding - episode.embedding).max()) < 1e-6, eid
