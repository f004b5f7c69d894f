"""User metadata rules (episeg.store.usermeta) and the edit value object (episeg.store.edit)."""

from __future__ import annotations

import math

import pytest

from episeg.errors import EpisodeEditError, MetadataError
from episeg.store.edit import USER_SCORER, EpisodeEdit, is_user_salience, unarchived
from episeg.store.usermeta import (
    MAX_KEYS,
    MAX_VALUE_LENGTH,
    PREFIX,
    MetaScalar,
    from_chroma,
    matches,
    to_chroma,
    validate_metadata,
)
from episeg.types import Episode, Salience


def _episode(**kw: object) -> Episode:
    base: dict[str, object] = dict(
        id="e1",
        user="alice",
        session="s",
        turns=(),
        summary="deploy",
        opened_at=0.0,
        closed_at=1.0,
    )
    base.update(kw)
    return Episode(**base)  # type: ignore[arg-type]


class TestValidate:
    def test_scalars_pass_and_keep_their_type(self) -> None:
        meta = {"s": "auth", "i": -(2**63), "f": 0.1, "b": False, "big": 2**63 - 1}
        assert validate_metadata(meta) == meta
        assert type(validate_metadata({"b": True})["b"]) is bool

    @pytest.mark.parametrize(
        ("meta", "says"),
        [
            ({"k": None}, "got None"),
            ({"k": [1]}, "got list"),
            ({"k": {"a": 1}}, "got dict"),
            ({"k": math.nan}, "finite"),
            ({"k": math.inf}, "finite"),
            ({"k": 2**63}, "64-bit"),
            ({"k": "x" * (MAX_VALUE_LENGTH + 1)}, "at most"),
            ({"k": "a\udc80"}, "not valid text"),
            ({"": 1}, "key ''"),
            ({"has space": 1}, "key 'has space'"),
            ({"-lead": 1}, "key '-lead'"),
            ({"x" * 65: 1}, "1-64"),
            ({f"k{n}": n for n in range(MAX_KEYS + 1)}, "at most 32"),
            (["k"], "mapping"),
        ],
    )
    def test_bad_metadata_is_a_typed_error_naming_the_problem(
        self, meta: object, says: str
    ) -> None:
        with pytest.raises(MetadataError, match=says.replace("(", r"\(")):
            validate_metadata(meta)

    def test_non_string_key_is_refused(self) -> None:
        with pytest.raises(MetadataError):
            validate_metadata({1: "x"})


class TestChromaForm:
    def test_round_trip_is_exact_for_every_type(self) -> None:
        meta = validate_metadata({"f": 9007.876897497723, "i": 2**62, "b": True, "s": "é"})
        stored = to_chroma(meta)
        assert all(k.startswith(PREFIX) for k in stored)
        back = from_chroma({**stored, "summary": "not user metadata", "pinned": True})
        assert back == meta
        assert [type(back[k]) for k in ("f", "i", "b", "s")] == [float, int, bool, str]

    def test_a_tampered_entry_is_an_error(self) -> None:
        with pytest.raises(MetadataError):
            from_chroma({PREFIX + "k": "not json"})

    def test_user_keys_cannot_collide_with_episegs(self) -> None:
        stored = to_chroma({"summary": "mine", "tenant": "bob", "archived": True})
        assert set(stored) == {"meta.summary", "meta.tenant", "meta.archived"}


class TestMatches:
    def test_exact_match_type_included(self) -> None:
        meta: dict[str, MetaScalar] = {"project": "auth", "n": 1, "ok": True, "x": 1.5}
        assert matches(meta, {"project": "auth", "n": 1})
        assert not matches(meta, {"n": 1.0})
        assert not matches(meta, {"ok": 1})
        assert not matches(meta, {"project": "Auth"})
        assert not matches(meta, {"missing": "x"})
        assert matches(meta, {})


class TestEpisodeEdit:
    def test_fields_given_change_the_rest_stay(self) -> None:
        ep = _episode(salience=Salience.scored(3, scorer="anchored"), metadata={"a": 1})
        out = EpisodeEdit(pinned=True).apply(ep)
        assert out.pinned and out.summary == "deploy" and out.metadata == {"a": 1}
        assert out.salience == ep.salience
        assert EpisodeEdit().empty and EpisodeEdit().apply(ep) is ep

    def test_salience_override_is_marked_and_keeps_what_it_replaced(self) -> None:
        ep = _episode(salience=Salience.scored(3, scorer="anchored"))
        once = EpisodeEdit(salience=9).apply(ep)
        assert once.salience is not None and once.salience.scorer == USER_SCORER
        assert is_user_salience(once.salience) and not is_user_salience(ep.salience)
        twice = EpisodeEdit(salience=2).apply(once)
        assert twice.salience == Salience.scored(
            2, scorer=USER_SCORER, reason="set by the user (was 3/10 by anchored)"
        )
        unscored = EpisodeEdit(salience=5).apply(_episode())
        assert unscored.salience is not None and "was unscored" in unscored.salience.reason

    @pytest.mark.parametrize(
        "kw",
        [
            {"salience": 0},
            {"salience": 11},
            {"salience": True},
            {"salience": 5.0},
            {"summary": ""},
            {"summary": "   "},
            {"summary": "x" * 10_001},
            {"summary": "\udc80"},
            {"pinned": 1},
            {"metadata": {"k": [1]}},
        ],
    )
    def test_bad_edits_are_refused_at_construction(self, kw: dict[str, object]) -> None:
        with pytest.raises(EpisodeEditError):
            EpisodeEdit(**kw)  # type: ignore[arg-type]

    def test_unarchived_counts_as_accessed_now(self) -> None:
        out = unarchived(_episode(archived=True, last_accessed=None), now=50.0)
        assert not out.archived and out.last_accessed == 50.0
