"""Episode <-> Chroma record codec round-trips exactly, in memory and through Chroma."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from episeg.errors import StoreError
from episeg.store import ChromaBackend
from episeg.store.codec import CODEC_VERSION, decode, encode
from episeg.types import MAX_TS, Decision, Episode, Salience, Turn, TurnType, Verdict
from tests.property_budget import examples

_runs = itertools.count()


@pytest.fixture(scope="module")
def shared_backend(tmp_path_factory: pytest.TempPathFactory) -> ChromaBackend:
    return ChromaBackend.persistent(tmp_path_factory.mktemp("codec"))


finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
names = st.text(min_size=1, max_size=12).filter(lambda s: s.strip() != "")
# Turn refuses ids with control/format/surrogate characters and |ts| > MAX_TS (c75c7e3)
id_names = st.text(
    st.characters(blacklist_categories=("Cc", "Cf", "Zl", "Zp", "Cs")), min_size=1, max_size=12
).filter(lambda s: s.strip() != "")
turns = st.builds(
    Turn,
    actor=st.sampled_from(["user", "assistant", "tool", "system"]),
    text=st.text(max_size=40),
    ts=st.floats(-MAX_TS, MAX_TS, allow_nan=False),
    type=st.none() | st.sampled_from(list(TurnType)),
    id=st.none() | id_names,
    user=names,
    session=id_names,
)
verdicts = st.builds(
    Verdict,
    signal=names,
    decision=st.sampled_from(list(Decision)),
    score=st.floats(0, 1),
    reason=st.text(max_size=20),
    authoritative=st.booleans(),
)
saliences = st.none() | st.builds(
    Salience, score=st.none() | st.integers(1, 10), scorer=names, reason=st.text(max_size=20)
)
episodes = st.builds(
    Episode,
    id=names,
    user=names,
    session=names,
    turns=st.lists(turns, max_size=4).map(tuple),
    summary=st.text(max_size=40),
    opened_at=finite,
    closed_at=finite,
    embedding=st.lists(st.floats(-1, 1, width=32), min_size=4, max_size=4).map(
        lambda v: np.array([*v, 1.0], dtype=np.float32)
    ),
    salience=saliences,
    parent_id=st.none() | names,
    boundary_verdicts=st.lists(verdicts, max_size=2).map(tuple),
    closing_verdicts=st.lists(verdicts, max_size=2).map(tuple),
    recall_count=st.integers(0, 2**40),
    last_accessed=st.none() | finite,
    strength=st.floats(0.001, 1e6),
    archived=st.booleans(),
)


class TestCodec:
    @given(ep=episodes)
    def test_round_trip_in_memory(self, ep: Episode) -> None:
        rec = encode(ep, tenant="t")
        assert all(isinstance(v, str | int | float | bool) for v in rec.metadata.values())
        back = decode(rec.id, rec.document, rec.metadata, rec.embedding)
        assert back == ep
        assert back.embedding is not None and ep.embedding is not None
        np.testing.assert_array_equal(back.embedding, ep.embedding)

    @settings(
        max_examples=examples(40),
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(ep=episodes)
    def test_round_trip_through_chroma(self, shared_backend: ChromaBackend, ep: Episode) -> None:
        store = shared_backend.store_for(f"t{next(_runs)}")
        store.add([ep])
        (back,) = store.get([ep.id])
        assert back == ep
        assert back.embedding is not None and ep.embedding is not None
        # Chroma's cosine space stores vectors in normalised form: equal to float32 rounding.
        np.testing.assert_allclose(back.embedding, ep.embedding, rtol=1e-6, atol=1e-6)

    def test_refuses_foreign_or_damaged_records(self, tmp_path: Path) -> None:
        rec = encode(
            Episode(
                id="e",
                user="u",
                session="s",
                turns=(),
                summary="",
                opened_at=0.0,
                closed_at=0.0,
                embedding=np.ones(2, np.float32),
            ),
            tenant="t",
        )
        with pytest.raises(StoreError, match="codec"):
            decode("e", "", {**rec.metadata, "codec": CODEC_VERSION + 1})
        with pytest.raises(StoreError, match="malformed"):
            decode("e", "", {**rec.metadata, "turns": "not json"})
        with pytest.raises(StoreError, match="no metadata"):
            decode("e", "", None)
        with pytest.raises(StoreError, match="non-finite"):
            encode(
                Episode(
                    id="e",
                    user="u",
                    session="s",
                    turns=(),
                    summary="",
                    opened_at=0.0,
                    closed_at=0.0,
                    embedding=np.array([np.nan, 1.0]),
                ),
                tenant="t",
            )
