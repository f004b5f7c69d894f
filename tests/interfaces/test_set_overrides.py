"""``--set`` values the config must refuse, through the real ``episeg`` entry point (review 2).

R2-3: infinities (``--set`` reads JSON, and ``json.loads`` reads ``Infinity``)
passed every bound check and made NaN recall scores or an ``inf`` strength no
export could write; a string or a mapping was read as three numbers. R2-4: a
dotted entry of a field that is not a mapping was a bare ``TypeError``.
Each is now exit 2 naming the field, with no traceback.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from episeg.config import EpisegConfig, RecallConfig
from episeg.errors import ConfigError
from episeg.interfaces.cli import EXIT_BAD_INPUT, main


@pytest.mark.parametrize(
    ("override", "says"),
    [
        ("recall.weights=[Infinity,0,1]", "recall.weights must be 3 finite non-negative numbers"),
        ('recall.weights="123"', "recall.weights must be 3 finite non-negative numbers"),
        ('recall.min_span={"1":0,"2":0,"3":0}', "recall.min_span must be 3 finite"),
        ("recall.weights=[true,0,1]", "recall.weights must be 3 finite"),
        ("recall.reinforcement_weight=Infinity", "recall.reinforcement_weight must be a finite"),
        ("forgetting.initial_days=Infinity", "forgetting.initial_days must be a finite number > 0"),
        ("forgetting.growth_days=Infinity", "forgetting.growth_days must be a finite number >= 0"),
        ("window.max_seconds=1e400", "window.max_seconds must be a finite number > 0, got inf"),
        ("window.hard_factor=Infinity", "window.hard_factor must be a finite number >= 1"),
        ("drift.threshold=Infinity", "drift.threshold must be a finite number > 0"),
        ("policy.boundary_evidence=Infinity", "policy.boundary_evidence must be a finite"),
        ("policy.weights.drift=Infinity", "policy.weights.drift must be a finite number >= 0"),
        (
            "combiner.threshold=-Infinity",
            "combiner.threshold must be a finite number, got '-Infinity'",
        ),
        ("window.max_turns.x=1", "window.max_turns is not a mapping, so it has no entry 'x'"),
        ("recall.weights.0=1", "recall.weights is not a mapping, so it has no entry '0'"),
    ],
)
def test_refused_as_exit_2_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], override: str, says: str
) -> None:
    data = tmp_path / "locomo.json"
    data.write_text("[]")  # never read: the overrides are checked first
    assert main(["eval", "memory", "--data", str(data), "--set", override]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert says in err
    assert "Traceback" not in err


def test_three_numbers_are_floats_and_a_mapping_entry_still_works() -> None:
    assert RecallConfig(weights=[1, 0, 2]).weights == (1.0, 0.0, 2.0)  # type: ignore[arg-type]
    assert isinstance(RecallConfig(weights=(1, 0, 2)).weights[0], float)
    numpy_weights = np.array([0, 0, 1], dtype=np.float32)
    assert RecallConfig(weights=numpy_weights).weights == (0.0, 0.0, 1.0)  # type: ignore[arg-type]
    config = EpisegConfig().with_overrides(**{"policy.weights.drift": 0, "recall.rrf_k": 5})
    assert config.policy.weights["drift"] == 0.0 and config.recall.rrf_k == 5


@pytest.mark.parametrize(
    "changes",
    [
        {"window": {"bogus": 1}, "window.max_turns": 5},  # a whole section with an unknown key
        {"policy.weights": 5, "policy.weights.drift": 0},  # an entry of a number given first
    ],
)
def test_with_overrides_refuses_with_a_config_error(changes: dict[str, object]) -> None:
    with pytest.raises(ConfigError, match=r"bogus|policy\.weights is not a mapping"):
        EpisegConfig().with_overrides(**changes)
