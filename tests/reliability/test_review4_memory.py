"""Review 4 (core), the Memory facade: batches, erasure and plug-ins (R4-C1 to R4-C4).

Each test names the finding it covers; the repro scripts are in the review's folder.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from episeg.config import EpisegConfig, JudgeConfig
from episeg.errors import ArgumentError, ConfigError, TurnConflictError, TurnValidationError
from episeg.memory import Memory
from episeg.testing import HashingEmbedder, ScriptedJudge
from episeg.types import Episode, Turn

from .memstore import MemBackend


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    mem = Memory(path=tmp_path, embedder=HashingEmbedder(dim=64), judge=None, scorer=None)
    yield mem
    mem.close()


def _turn(text: str, ts: float, **kw: Any) -> Turn:
    kw.setdefault("user", "alice")
    kw.setdefault("session", "s")
    return Turn(actor="user", text=text, ts=ts, **kw)


def _stored_texts(mem: Memory, user: str) -> list[str]:
    return [t.text for e in mem.episodes(user, limit=100) for t in e.turns]


class TestIngestIsAllOrNothing:
    """R4-C1: a refused turn in the middle of ``ingest`` kept the turns before it."""

    def test_a_ts_going_backwards_records_nothing_and_names_the_turn(self, memory: Memory) -> None:
        batch = [_turn("deploy v2 to staging", 10.0), _turn("started", 11.0), _turn("prod?", 5.0)]
        with pytest.raises(TurnValidationError, match=r"^turn 2 of the batch \(no id\) refused"):
            memory.ingest(batch)
        assert memory.journal.counts()["open_turns"] == 0
        fixed = [*batch[:2], _turn("prod?", 12.0)]
        assert memory.ingest(fixed) == []  # the corrected batch goes in whole
        assert memory.journal.counts()["open_turns"] == 3

    def test_the_corrected_batch_sent_again_stores_no_turn_twice(self, memory: Memory) -> None:
        same = [_turn(f"step {i}", 1.0, user="bob") for i in range(3)]
        bad = [*same[:2], _turn("x" * 10**6, 1.0, user="bob")]
        with pytest.raises(TurnValidationError, match=r"turn 2 of the batch .* characters"):
            memory.ingest(bad)
        memory.ingest(same)
        memory.flush("bob")
        assert _stored_texts(memory, "bob") == ["step 0", "step 1", "step 2"]

    def test_an_id_conflict_keeps_its_class_and_names_the_id(self, memory: Memory) -> None:
        memory.observe(_turn("deploy", 1.0, id="t1"))
        batch = [_turn("next", 2.0, id="t2"), _turn("deploy, edited", 1.0, id="t1")]
        with pytest.raises(TurnConflictError, match=r"turn 1 of the batch \(id 't1'\)") as err:
            memory.ingest(batch)
        assert err.value.turn_id == "t1"
        assert memory.journal.counts()["open_turns"] == 1  # only the turn observed before

    def test_every_tenant_and_session_of_the_batch_is_checked_first(self, memory: Memory) -> None:
        batch = [
            _turn("alice one", 1.0),
            _turn("bob one", 1.0, user="bob", session="b"),
            _turn("bob earlier", 0.5, user="bob", session="b"),
        ]
        with pytest.raises(TurnValidationError, match="turn 2 of the batch"):
            memory.ingest(batch)
        assert memory.journal.counts()["open_turns"] == 0

    def test_a_batch_item_that_is_not_a_turn_records_nothing(self, memory: Memory) -> None:
        with pytest.raises(TurnValidationError, match=r"turn 1 of the batch .* got dict"):
            memory.ingest([_turn("deploy", 1.0), {"actor": "user", "text": "x", "ts": 2.0}])  # type: ignore[list-item]
        with pytest.raises(TurnValidationError, match="iterable of Turns, got str"):
            memory.ingest("hello")  # type: ignore[arg-type]
        assert memory.journal.counts()["open_turns"] == 0


class TestForgetChecksItsArguments:
    """R4-C2 (and R4-C11 for forget): a session that is not a string half-erased it."""

    def test_a_non_string_session_erases_nothing(self, memory: Memory) -> None:
        memory.observe(_turn("my card number is 4111 1111", 1.0, session="123"))
        memory.flush("alice")
        memory.observe(_turn("and my pin is 9876", 2.0, session="123"))
        with pytest.raises(ArgumentError, match="session must be a string, got int 123"):
            memory.forget("alice", session=123)  # type: ignore[arg-type]
        assert memory.journal.counts()["open_turns"] == 1  # nothing erased, nothing reported
        report = memory.forget("alice", session="123")
        assert report.turns == 1 and len(report.episodes) == 1
        assert memory.episodes("alice") == [] and memory.journal.counts()["open_turns"] == 0

    @pytest.mark.parametrize(
        ("kwargs", "message"),
        [
            ({"episode": 123}, "episode must be a string"),
            ({"episode": ""}, "non-empty id"),
            ({"all": "no"}, "all must be True or False"),
            ({"all": 1}, "all must be True or False"),
        ],
    )
    def test_other_malformed_arguments(
        self, memory: Memory, kwargs: dict[str, Any], message: str
    ) -> None:
        memory.observe(_turn("keep me", 1.0))
        with pytest.raises(ArgumentError, match=message):
            memory.forget("alice", **kwargs)
        assert memory.journal.counts()["open_turns"] == 1


class TestPlugins:
    """R4-C3: a scorer or judge that is not one wedged the tenant with AttributeErrors."""

    @pytest.mark.parametrize("kind", ["judge", "scorer"])
    def test_a_name_instead_of_a_plugin_is_refused_at_construction(
        self, tmp_path: Path, kind: str
    ) -> None:
        plugins: dict[str, Any] = {kind: "local"}
        with pytest.raises(ConfigError, match=f"{kind} must be DEFAULT, None or an episeg"):
            Memory(path=tmp_path, embedder=HashingEmbedder(), **plugins)
        Memory(path=tmp_path, embedder=HashingEmbedder(), judge=None, scorer=None).close()

    def test_a_scorer_returning_a_bare_int_stores_the_episode_unscored(
        self, tmp_path: Path, caplog: pytest.LogCaptureFixture
    ) -> None:
        class IntScorer:
            name = "int"

            def score(self, episode: Episode) -> int:
                return 7

        backend = MemBackend()
        mem = Memory(
            path=tmp_path, embedder=HashingEmbedder(), judge=None, scorer=IntScorer(),  # type: ignore[arg-type]
            backend=backend,
        )  # fmt: skip
        mem.observe(_turn("deploy v2 to staging", 1.0))
        with caplog.at_level(logging.WARNING, logger="episeg.memory"):
            closed = mem.observe(
                Turn(actor="system", text="restarted", ts=2.0, type="system-event", user="alice",
                     session="s")
            )  # fmt: skip
        [episode] = closed
        assert episode.salience is not None and episode.salience.score is None
        assert episode.salience.reason == "scorer returned int, not a Salience"
        assert "not a Salience" in caplog.text
        assert [len(e.turns) for e in mem.flush("alice")] == [1]  # the session still flushes
        mem.close()


class TestForgetAnOpenEpisode:
    """R4-C4: recall shows an open hit's id; forget(episode=) called it missing."""

    def test_the_open_hit_is_erased_and_never_stored(self, memory: Memory) -> None:
        memory.observe(_turn("my passport number is X1234567", 1.0))
        [hit] = memory.recall("alice", "passport number", k=1)
        assert hit.open
        report = memory.forget("alice", episode=hit.episode.id)
        assert report.episodes == (hit.episode.id,) and report.turns == 1 and report.found
        assert report.missing == ()
        assert memory.journal.counts()["open_turns"] == 0
        assert memory.recall("alice", "passport number") == []
        assert memory.flush("alice") == [] and memory.episodes("alice") == []

    def test_the_session_goes_on_and_its_stored_episodes_stay(self, memory: Memory) -> None:
        memory.observe(_turn("renew the TLS cert", 1.0, id="t1"))
        [kept] = memory.flush("alice")
        memory.observe(_turn("the secret is hunter2", 2.0, id="t2"))
        [hit] = [h for h in memory.recall("alice", "secret hunter2", k=2) if h.open]
        assert memory.forget("alice", episode=hit.episode.id).turns == 1
        assert memory.journal.counts()["open_turns"] == 0
        assert [e.id for e in memory.episodes("alice")] == [kept.id]
        memory.observe(_turn("renew the TLS cert", 1.0, id="t1"))  # still a duplicate: skipped
        memory.observe(_turn("the secret is hunter2", 2.0, id="t2"))  # erased: taken again
        memory.observe(_turn("rotate the keys", 3.0, id="t3"))
        [again] = memory.flush("alice")
        assert [t.id for t in again.turns] == ["t2", "t3"]

    def test_another_tenants_open_id_is_missing(self, memory: Memory) -> None:
        memory.observe(_turn("bob's open note", 1.0, user="bob"))
        [hit] = memory.recall("bob", "open note", k=1)
        report = memory.forget("alice", episode=hit.episode.id)
        assert report.missing == (hit.episode.id,) and report.turns == 0
        assert memory.journal.counts()["open_turns"] == 1

    def test_the_erasure_holds_after_a_restart(self, tmp_path: Path) -> None:
        mem = Memory(path=tmp_path, embedder=HashingEmbedder(dim=64), judge=None, scorer=None)
        mem.observe(_turn("my passport number is X1234567", 1.0, id="p1"))
        [hit] = mem.recall("alice", "passport number", k=1)
        mem.forget("alice", episode=hit.episode.id)
        mem.close()
        again = Memory(path=tmp_path, embedder=HashingEmbedder(dim=64), judge=None, scorer=None)
        assert again.recall("alice", "passport number") == []
        again.observe(_turn("book a flight", 2.0, id="f1"))
        assert [[t.id for t in e.turns] for e in again.flush("alice")] == [["f1"]]
        again.close()


class TestForgetLeavesNoJudgeSummary:
    """The judge's running summary stays in the session's checkpoint after a close."""

    def test_forgetting_a_stored_episode_blanks_the_summary_that_quotes_it(
        self, tmp_path: Path
    ) -> None:
        config = EpisegConfig(judge=JudgeConfig(every=1, gate="periodic"))  # asked every turn
        mem = Memory(
            path=tmp_path,
            embedder=HashingEmbedder(dim=64),
            scorer=None,
            judge=ScriptedJudge(),
            config=config,
        )
        for n, text in enumerate(["deploy kubernetes cluster", "kubernetes nodes fail"]):
            mem.observe(_turn(text, float(n)))
        [stored] = mem.flush("alice")

        def summary() -> str:
            [session] = mem.journal.sessions(("alice", "s"))
            return session.checkpoint.prediction_summary

        assert "kubernetes" in summary()  # the judge's summary of the closed episode
        mem.forget("alice", episode=stored.id)
        assert summary() == ""
        mem.observe(_turn("rotate the keys", 9.0))  # the session goes on
        assert [t.text for e in mem.flush("alice") for t in e.turns] == ["rotate the keys"]
        mem.close()
