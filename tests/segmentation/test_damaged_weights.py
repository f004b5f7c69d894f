"""A damaged weights file is a ConfigError naming it, however it is damaged (F147).

Only garbage bytes were: a truncated file raised ``zipfile.BadZipFile``, an empty
one ``EOFError``, a missing array ``KeyError``, bad meta ``JSONDecodeError``,
three scalars instead of four an unpacking ``ValueError``, also through
``Segmenter(config with combiner.weights=...)``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from episeg.config import EpisegConfig
from episeg.errors import ConfigError
from episeg.segmentation import Segmenter
from episeg.segmentation.model import DEFAULT_WEIGHTS, BoundaryModel
from episeg.testing import HashingEmbedder


def _rewritten(
    change: Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]],
) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        with np.load(DEFAULT_WEIGHTS, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
        arrays = change(arrays)
        np.savez_compressed(path, **arrays)  # type: ignore[arg-type]  # the stub types **kwds as allow_pickle

    return write


def _bytes(change: Callable[[bytes], bytes]) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        path.write_bytes(change(DEFAULT_WEIGHTS.read_bytes()))

    return write


def _flipped(raw: bytes) -> bytes:
    mid = len(raw) // 3
    return raw[:mid] + bytes(b ^ 0xFF for b in raw[mid : mid + 64]) + raw[mid + 64 :]


DAMAGE = {
    "truncated": _bytes(lambda raw: raw[: len(raw) // 2]),
    "empty": _bytes(lambda raw: b""),
    "garbage": _bytes(lambda raw: b"not a weights file"),
    "flipped bytes": _bytes(_flipped),
    "no scalars": _rewritten(lambda a: {k: v for k, v in a.items() if k != "scalars"}),
    "no mean_turn": _rewritten(lambda a: {k: v for k, v in a.items() if k != "mean_turn"}),
    "meta not JSON": _rewritten(lambda a: {**a, "meta": np.array("{oops")}),
    "three scalars": _rewritten(lambda a: {**a, "scalars": a["scalars"][:3]}),
    "object array": _rewritten(lambda a: {**a, "names": np.array([object()], dtype=object)}),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_file_is_a_config_error_naming_it(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "weights.npz"
    DAMAGE[damage](path)
    with pytest.raises(ConfigError, match=r"weights\.npz"):
        BoundaryModel.load(path)


@pytest.mark.parametrize("kind", ["learned", "auto"])
def test_a_segmenter_configured_with_a_damaged_file_refuses_it(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "weights.npz"
    DAMAGE["truncated"](path)
    config = EpisegConfig().with_overrides(**{"combiner.weights": str(path), "combiner.kind": kind})
    with pytest.raises(ConfigError, match="retrain"):
        Segmenter(config=config, embedder=HashingEmbedder())
