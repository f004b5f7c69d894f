"""The per-turn fast paths give exactly what the plain formulations they replace gave.

Each shortcut on the streaming hot path (issue 13: streaming segmentation at >= 0.95
of the single-turn encode) is checked here against the straightforward code it
stands for, on generated inputs, so a later edit that changes a value fails.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from episeg.segmentation.episode import OpenEpisode
from episeg.segmentation.intake import SessionIntake, _with_id, turn_fingerprint
from episeg.segmentation.learned import BoundaryModel
from episeg.segmentation.segmenter import Segmenter
from episeg.testing import HashingEmbedder
from episeg.text import _WORD, STOPWORDS, content_words
from episeg.types import Turn
from tests.property_budget import examples

ACTORS = st.sampled_from(["user", "assistant", "tool", "system"])
KINDS = st.sampled_from([None, "tool-error", "user-question", "assistant-answer"])
TEXTS = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=60) | st.sampled_from(
    ["Done. <episode_boundary>", "<new_subtask> next", 'say "hi"\\n', ""]
)
TIMES = st.floats(min_value=-1e11, max_value=1e11, allow_nan=False) | st.integers(0, 10**9)


def _json_fingerprint(turn: Turn) -> int:
    """The original formulation: blake2b-64 of json.dumps([actor, type, text, ts])."""
    kind = None if turn.type is None else turn.type.value
    data = json.dumps([turn.actor.value, kind, turn.text, turn.ts], ensure_ascii=False)
    digest = hashlib.blake2b(data.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


@settings(max_examples=examples(300))
@given(actor=ACTORS, kind=KINDS, text=TEXTS, ts=TIMES)
def test_fingerprint_equals_the_json_formulation(actor, kind, text, ts):
    turn = Turn(actor=actor, text=text, ts=ts, type=kind)
    assert turn_fingerprint(turn) == _json_fingerprint(turn)


@settings(max_examples=examples(200))
@given(actor=ACTORS, kind=KINDS, text=TEXTS, given_id=st.sampled_from([None, "c:7", "x"]))
def test_prepared_turn_equals_dataclasses_replace(actor, kind, text, given_id):
    turn = Turn(actor=actor, text=text, ts=1.0, type=kind, id=given_id, session="s1")
    prepared = SessionIntake(session_key=("default", "s1")).accept(turn, max_turn_chars=10_000)
    assert prepared is not None
    expected = dataclasses.replace(turn, text=prepared.turn.text, id=prepared.turn.id)
    assert prepared.turn == expected
    assert [getattr(prepared.turn, f.name) for f in dataclasses.fields(Turn)] == [
        getattr(expected, f.name) for f in dataclasses.fields(Turn)
    ]


def test_with_id_keeps_the_turn_when_nothing_changes_and_copies_otherwise():
    turn = Turn(actor="assistant", text="Done.", ts=2.0, id="s:0", type="assistant-answer")
    assert _with_id(turn, text=turn.text, turn_id="s:0") is turn
    other = _with_id(turn, text="Done", turn_id="s:1")
    assert (other.text, other.id, other.type, turn.text, turn.id) == (
        "Done",
        "s:1",
        turn.type,
        "Done.",
        "s:0",
    )


@settings(max_examples=examples(300))
@given(st.text(alphabet="abcXYZ019_-' .,\n:İé", max_size=80))
def test_content_words_equal_the_stripping_formulation(text):
    stripped = (w.strip("'-_") for w in _WORD.findall(text.lower()))
    expected = [w for w in stripped if len(w) >= 3 and w not in STOPWORDS]
    assert content_words(text) == expected


def test_contributions_equal_the_per_feature_products():
    rng = np.random.default_rng(3)
    names = tuple(f"f{i}" for i in range(12))
    weights, means, x = rng.normal(size=12), rng.normal(size=12), rng.normal(size=12)
    model = BoundaryModel(
        names=names, weights=weights, bias=0.0, vectors={}, lookahead=0, threshold=0.0,
        band=0.5, means=means, vector_means={},
    )  # fmt: skip
    expected = sorted(
        ((n, float(w * (v - m))) for n, w, v, m in zip(names, weights, x, means, strict=True)),
        key=lambda p: -abs(p[1]),
    )
    e = np.zeros(3)
    assert model.contributions(x, e, e, e, top=12) == expected
    try:
        model.contributions(x[:5], e, e, e)
    except ValueError as exc:
        assert "5 feature values for 12 weights" in str(exc)
    else:  # pragma: no cover - the check above must raise
        raise AssertionError("a short feature vector was accepted")


def test_closed_episode_keeps_its_stacked_embeddings_and_their_normalised_mean():
    rng = np.random.default_rng(5)
    open_ep = OpenEpisode(user="u", session="s")
    vectors = rng.normal(size=(4, 6)).astype(np.float32)
    for i, vec in enumerate(vectors):
        open_ep.add(Turn(actor="user", text=f"t{i}", ts=float(i), id=f"s:{i}"), vec)
    episode = open_ep.close(closing_verdicts=())
    mean = np.mean(np.stack(list(vectors)), axis=0)
    assert episode.turn_embeddings is not None and episode.embedding is not None
    assert np.array_equal(episode.turn_embeddings, vectors)
    assert np.array_equal(episode.embedding, (mean / np.linalg.norm(mean)).astype(np.float32))


def test_streaming_still_equals_batch_with_markers_and_given_ids():
    texts = ["auth login 401", "Rotate the key. <episode_boundary>", "deploy prod now",
             "Edit version.tf", "bake bread", "<new_subtask> proof the dough"]  # fmt: skip
    turns = [
        Turn(actor="user" if i % 2 == 0 else "assistant", text=t, ts=float(i),
             id=f"c{i}" if i % 3 == 0 else None)
        for i, t in enumerate(texts)
    ]  # fmt: skip
    streaming = Segmenter(embedder=HashingEmbedder())
    closed = [e for t in turns for e in streaming.observe(t)] + streaming.flush()
    batch = Segmenter(embedder=HashingEmbedder()).segment(turns)
    assert [[t.id for t in e.turns] for e in closed] == [[t.id for t in e.turns] for e in batch]
    assert [t.text for e in closed for t in e.turns][1] == "Rotate the key."
