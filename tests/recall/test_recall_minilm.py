"""Recall through the real MiniLM embedder and a real (embedded) Chroma."""

from __future__ import annotations

from pathlib import Path

import pytest

from episeg.config import EpisegConfig
from episeg.embedders import MiniLMEmbedder
from episeg.recall.rerank import Recaller
from episeg.store import ChromaBackend
from episeg.types import Actor, Episode, Salience, Turn

TOPICS = {
    "auth": (
        "why does the login endpoint return 401 after the token refresh?",
        "the JWT secret was rotated; the auth service needs the new key",
    ),
    "deploy": (
        "roll out release 2.4.1 of the api to production",
        "deployment finished, the new version is live on all pods",
    ),
    "cooking": (
        "what is a good recipe for a tomato pasta sauce?",
        "simmer tomatoes with garlic and olive oil for twenty minutes",
    ),
    "retry": (
        "add exponential backoff to the webhook retry logger",
        "retries now wait 1, 2, 4 seconds and log each attempt",
    ),
}


@pytest.mark.slow
def test_deploy_query_returns_deploy_episode_first(tmp_path: Path) -> None:
    emb = MiniLMEmbedder.default()
    store = ChromaBackend.persistent(tmp_path / "db").store_for("alice")
    episodes = []
    for n, (name, (q, a)) in enumerate(TOPICS.items()):
        turns = (
            Turn(actor=Actor.USER, text=q, ts=n * 100.0),
            Turn(actor=Actor.ASSISTANT, text=a, ts=n * 100.0 + 5),
        )
        text = "\n".join(t.text for t in turns)
        episodes.append(
            Episode(
                id=name,
                user="alice",
                session="s",
                turns=turns,
                summary=q,
                opened_at=n * 100.0,
                closed_at=n * 100.0 + 5,
                embedding=emb.embed([text])[0],
                salience=Salience.scored(5, scorer="t"),
            )
        )
    store.add(episodes)
    rec = Recaller(store, emb, config=EpisegConfig(), clock=lambda: 1000.0)
    out = rec.recall("deploy version", k=2)
    assert out[0].episode.id == "deploy"
    assert out[0].raw_similarity > out[1].raw_similarity
