"""Review 4, R4-S8: a segmentation setting that would do nothing is refused (or warned of).

``policy.weights`` for a signal that is never weighed, ``judge.every=0`` with a
gate that reads it, and learned-only ``combiner`` fields next to
``kind="layered"`` used to be accepted and silently ignored.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from episeg.config import CombinerConfig, EpisegConfig, JudgeConfig, PolicyConfig
from episeg.errors import ConfigError
from episeg.evaluation.configs import LEARNED_NAMES, SEGMENTER_NAMES, build_segment_fn
from episeg.segmentation.segmenter import Segmenter
from episeg.testing import HashingEmbedder, MiniLMShaped, ScriptedJudge
from episeg.types import Turn

IGNORED = "episeg.segmentation.arguments"


@pytest.mark.parametrize("signal", ["window", "marker", "prediction", "combiner"])
def test_a_weight_for_a_signal_never_weighed_is_refused(signal: str) -> None:
    with pytest.raises(ConfigError, match=rf"policy\.weights\.{signal} does nothing.*semantic"):
        PolicyConfig(weights={"semantic": 1.0, signal: 50.0})
    with pytest.raises(ConfigError, match=rf"policy\.weights\.{signal}"):
        EpisegConfig().with_overrides(**{f"policy.weights.{signal}": 0.0})


def test_the_hint_weights_are_still_taken() -> None:
    config = EpisegConfig().with_overrides(**{"policy.weights.drift": 0})
    assert config.policy.weights == {"semantic": 1.0, "drift": 0.0, "structural": 1.0}


def test_an_unknown_weight_name_is_still_an_enum_error() -> None:
    with pytest.raises(ConfigError, match="valid"):
        PolicyConfig(weights={"vibes": 1.0})


@pytest.mark.parametrize(("gate", "instead"), [("periodic", "never"), ("both", "ambiguous")])
def test_every_zero_with_a_gate_that_reads_it_is_refused(gate: str, instead: str) -> None:
    with pytest.raises(ConfigError, match=rf"judge\.every=0 .*judge\.gate={instead!r}"):
        JudgeConfig(gate=gate, every=0)
    with pytest.raises(ConfigError, match=r"judge\.every"):
        EpisegConfig().with_overrides(**{"judge.gate": gate, "judge.every": 0})


@pytest.mark.parametrize("gate", ["ambiguous", "never"])
def test_every_zero_is_fine_with_the_gates_that_do_not_read_it(gate: str) -> None:
    assert JudgeConfig(gate=gate, every=0).every == 0


def test_the_periodic_gate_asks_the_judge() -> None:
    config = EpisegConfig(
        combiner=CombinerConfig(kind="layered"), judge=JudgeConfig(gate="periodic", every=2)
    )
    judge = ScriptedJudge(["continue"] * 100)
    seg = Segmenter(config=config, embedder=HashingEmbedder(), judge=judge)
    seg.segment([Turn(actor="user", text=f"deploy prod {i}", ts=float(i)) for i in range(10)])
    assert seg.stats["judge_calls"] > 0


@pytest.mark.parametrize(
    "field", [("threshold", 9.0), ("threshold", 0.0), ("band", 5.0), ("min_turns", 50)]
)
def test_learned_only_fields_with_the_layered_combiner_are_refused(
    field: tuple[str, Any],
) -> None:
    name, value = field
    with pytest.raises(ConfigError, match=rf"'layered' would ignore combiner\.{name}"):
        CombinerConfig(kind="layered", **{name: value})
    with pytest.raises(ConfigError, match=rf"combiner\.{name}"):
        EpisegConfig().with_overrides(**{"combiner.kind": "layered", f"combiner.{name}": value})


def test_a_weights_file_with_the_layered_combiner_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"combiner\.weights"):
        CombinerConfig(kind="layered", weights="chat")


@pytest.mark.parametrize("kind", ["auto", "learned"])
def test_learned_fields_are_taken_by_the_combiners_that_read_them(kind: str) -> None:
    spec = CombinerConfig(kind=kind, weights="chat", threshold=1.0, band=0.5, min_turns=3)
    assert spec.learned_only() == ("weights", "threshold", "band", "min_turns")


def test_roles_unknown_with_the_layered_combiner_is_warned_of(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Kept valid (the evaluation's layered configurations set it), but named as ignored."""
    config = EpisegConfig(combiner=CombinerConfig(kind="layered", roles_known=False))
    with caplog.at_level(logging.WARNING, logger=IGNORED):
        Segmenter(config=config, embedder=HashingEmbedder())
    assert "combiner.roles_known is ignored" in caplog.text
    assert "'layered'" in caplog.text


def test_auto_falling_back_to_layered_warns_of_the_ignored_fields(
    caplog: pytest.LogCaptureFixture,
) -> None:
    config = EpisegConfig(combiner=CombinerConfig(threshold=2.0, min_turns=3))
    with caplog.at_level(logging.WARNING, logger=IGNORED):
        seg = Segmenter(config=config, embedder=HashingEmbedder())  # not the model's embedder
    assert seg.learned is None
    assert "combiner.threshold, combiner.min_turns is ignored" in caplog.text


def test_no_warning_when_nothing_is_ignored(caplog: pytest.LogCaptureFixture) -> None:
    learned = EpisegConfig(combiner=CombinerConfig(kind="learned", threshold=2.0))
    with caplog.at_level(logging.WARNING, logger=IGNORED):
        Segmenter(embedder=HashingEmbedder())
        layered = EpisegConfig(combiner=CombinerConfig(kind="layered"))
        Segmenter(config=layered, embedder=HashingEmbedder())
        assert Segmenter(config=learned, embedder=MiniLMShaped()).learned is not None
    assert caplog.records == []


@pytest.mark.parametrize("name", [*SEGMENTER_NAMES, *LEARNED_NAMES])
def test_every_shipped_evaluation_configuration_stays_valid(name: str) -> None:
    """The presets of ``episeg evaluate`` (roles unknown and known) all build."""
    for roles_known in (False, True):
        build_segment_fn(
            name,
            overrides={"window.max_turns": 8} if name == "window" else None,
            embedder=MiniLMShaped(),
            roles_known=roles_known,
        )
