"""The ONNX Runtime MiniLM against the torch one: same vectors, and a corrupt cache heals."""

from __future__ import annotations

import logging
import shutil

import numpy as np
import pytest

from episeg.embedders import MiniLMEmbedder, OnnxMiniLMEmbedder

pytestmark = pytest.mark.slow

LONG = " ".join(f"token{i} and some filler words" for i in range(120))  # >> 256 word pieces

TURNS = [
    "",
    " ",
    "ok",
    "?",
    "\n\t\n",
    "  leading and trailing spaces  ",
    "I'm getting a 401 on the auth callback. Stack trace?",
    "Looks like the JWT signing key got rotated.",
    "config/auth.yml, look for jwt_secret_rotation.",
    "Different question — how do I bump the prod deploy version?",
    "Edit infra/prod/version.tf and run terraform apply.",
    "naïve café résumé über straße",
    "日本語のテキストを埋め込みます。",
    "Привет, как дела? Всё хорошо.",
    "مرحبا بالعالم",
    "emoji only 🚀🔥✨🎉",
    "def f(x):\n    return x ** 2  # squares",
    "SELECT * FROM users WHERE id = 42;",
    "Traceback (most recent call last):\n  File 'app.py', line 3\nKeyError: 'token'",
    "UPPER CASE SHOUTING ABOUT THE BUILD",
    "https://example.com/a/b?c=d&e=f#frag",
    "1 2 3 4 5 6 7 8 9 10",
    "a" * 3000,
    LONG,
    LONG + " tail that is truncated away",
    "word " * 300,
    *(f"turn {i}: the deploy of service {i % 7} failed with code {i * 13}" for i in range(24)),
]


@pytest.fixture(scope="module")
def onnx_minilm() -> OnnxMiniLMEmbedder:
    return OnnxMiniLMEmbedder.default()


def test_vectors_equal_torch_within_1e5_cosine(onnx_minilm, minilm):
    assert len(TURNS) >= 50
    want = minilm.embed(TURNS)
    got = onnx_minilm.embed(TURNS)
    assert got.shape == want.shape == (len(TURNS), 384)
    assert got.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    cosines = (got * want).sum(axis=1)
    assert cosines.min() >= 1 - 1e-5, [TURNS[i][:40] for i in np.argsort(cosines)[:3]]


def test_one_at_a_time_equals_batched(onnx_minilm):
    batched = onnx_minilm.embed(TURNS)
    single = np.stack([onnx_minilm.embed([t])[0] for t in TURNS])
    assert (single * batched).sum(axis=1).min() >= 1 - 1e-5


def test_intra_op_threads_do_not_spin_unless_asked(onnx_minilm):
    key = "session.intra_op.allow_spinning"
    options = onnx_minilm._session.get_session_options()
    assert options.get_session_config_entry(key) == "0"
    spinning = OnnxMiniLMEmbedder(spin=True)
    assert spinning._session.get_session_options().get_session_config_entry(key) == "1"
    assert float(spinning.embed(TURNS[:3])[2] @ onnx_minilm.embed(TURNS[:3])[2]) >= 1 - 1e-6


def test_truncates_like_sentence_transformers(onnx_minilm):
    a, b = onnx_minilm.embed([LONG, LONG + " tail that is truncated away"])
    assert float(a @ b) >= 1 - 1e-6


def test_corrupt_cache_is_reexported(tmp_path, onnx_minilm, caplog):
    key = onnx_minilm.cache_path.parent.name
    copy = tmp_path / "onnx" / key / "model.onnx"
    copy.parent.mkdir(parents=True)
    shutil.copyfile(onnx_minilm.cache_path, copy)
    with copy.open("r+b") as handle:  # flip bytes in the middle: weights, not the header
        handle.seek(copy.stat().st_size // 2)
        handle.write(b"\xff" * 4096)
    with caplog.at_level(logging.WARNING):
        healed = OnnxMiniLMEmbedder(cache_dir=tmp_path)
    assert "unusable" in caplog.text
    assert float(healed.embed(["hello"])[0] @ onnx_minilm.embed(["hello"])[0]) >= 1 - 1e-5


def test_torch_and_onnx_are_both_selectable():
    assert isinstance(MiniLMEmbedder.default(), MiniLMEmbedder)
    assert OnnxMiniLMEmbedder.default().threads >= 1
