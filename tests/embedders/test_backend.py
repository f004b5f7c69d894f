"""Choosing the embedder backend: config parsing, defaults, a clear error without onnxruntime."""

from __future__ import annotations

import sys

import pytest

from episeg.config import EpisegConfig
from episeg.embedders import OnnxMiniLMEmbedder
from episeg.errors import BackendUnavailableError, InvalidConfigEnum
from episeg.types import EmbedderBackend


class TestEmbeddingBackendConfig:
    def test_onnx_is_the_default(self):
        assert EpisegConfig().embedding.backend is EmbedderBackend.ONNX
        assert EpisegConfig().embedding.threads is None

    def test_torch_is_selectable_by_string(self):
        cfg = EpisegConfig().with_overrides(**{"embedding.backend": "Torch"})
        assert cfg.embedding.backend is EmbedderBackend.TORCH

    def test_unknown_backend_names_the_valid_ones(self):
        with pytest.raises(InvalidConfigEnum, match="valid: onnx, torch"):
            EpisegConfig().with_overrides(**{"embedding.backend": "tensorflow"})

    @pytest.mark.parametrize("threads", [0, -1, 1.5, True])
    def test_threads_must_be_a_positive_integer(self, threads):
        with pytest.raises(ValueError, match=r"embedding\.threads"):
            EpisegConfig().with_overrides(**{"embedding.threads": threads})


class TestMissingRuntime:
    def test_without_onnxruntime_the_error_says_how_to_fix_it(self, monkeypatch):
        monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import now raises ImportError
        with pytest.raises(BackendUnavailableError, match=r"onnxruntime.*torch"):
            OnnxMiniLMEmbedder()

    @pytest.mark.parametrize("kwargs", [{"threads": 0}, {"batch_size": 0}])
    def test_bad_settings_fail_before_loading(self, kwargs):
        with pytest.raises(ValueError, match=">= 1"):
            OnnxMiniLMEmbedder(**kwargs)
