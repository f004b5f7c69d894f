"""Settings from the environment and a TOML file choose the judge and scorer of every interface.

``open_memory`` (what the CLI, the HTTP service and the MCP server call) reads
them, so an LLM judge or scorer is reachable without writing Python. The LLM
is ``LoopbackLLMServer`` (a real HTTP server speaking both APIs).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from episeg.config import RecallConfig
from episeg.errors import ConfigError
from episeg.interfaces.runtime import open_memory
from episeg.interfaces.settings import load_settings
from episeg.judges import AnthropicJudge, OpenAICompatibleJudge
from episeg.testing import HashingEmbedder, LoopbackLLMServer, Reply
from episeg.types import Actor, Turn


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for name in list(os.environ):
        if name.startswith("EPISEG_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)  # no stray ./episeg.toml
    yield


class TestSources:
    def test_defaults_are_the_offline_stack(self) -> None:
        settings = load_settings()
        assert (settings.judge.kind, settings.scorer.kind) == ("local", "anchored")

    def test_toml_file_then_environment_wins(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        toml = tmp_path / "conf.toml"
        toml.write_text(
            'embedding_backend = "torch"\n'
            '[judge]\nkind = "anthropic"\nbase_url = "http://127.0.0.1:9"\n'
            'api_key_env = "MY_KEY"\n'
            '[scorer]\nkind = "none"\n'
        )
        monkeypatch.setenv("EPISEG_CONFIG", str(toml))
        monkeypatch.setenv("MY_KEY", "k-test")
        settings = load_settings()
        assert settings.embedding_backend.value == "torch"
        assert isinstance(settings.build_judge(), AnthropicJudge)
        assert settings.build_scorer() is None
        monkeypatch.setenv("EPISEG_JUDGE__KIND", "none")
        assert load_settings().build_judge() is None

    @pytest.mark.parametrize(
        ("env", "says"),
        [
            ({"EPISEG_JUDGE__KIND": "gpt"}, "invalid episeg settings"),
            ({"EPISEG_JUDGE__KIND": "openai"}, "needs a model"),
            ({"EPISEG_CONFIG": "/nonexistent/episeg.toml"}, "no such file"),
        ],
    )
    def test_invalid_settings_are_config_errors(
        self, monkeypatch: pytest.MonkeyPatch, env: dict[str, str], says: str
    ) -> None:
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        with pytest.raises(ConfigError, match=says):
            load_settings()

    def test_recall_cache_from_the_file_reaches_the_memory_config(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        assert load_settings().config().recall == RecallConfig()
        toml = tmp_path / "conf.toml"
        toml.write_text("[recall]\nwarm_cache = true\ncache_episodes = 200000\n")
        monkeypatch.setenv("EPISEG_CONFIG", str(toml))
        recall = load_settings().config().recall
        assert (recall.warm_cache, recall.cache_episodes) == (True, 200_000)
        memory = open_memory(tmp_path / "mem", embedder=HashingEmbedder(dim=32))
        try:
            assert memory.config.recall.warm_cache is True
            store = memory.store("alice")
            assert (store.warm_cache, store.recent.capacity) == (True, 200_000)
        finally:
            memory.close()
        for bad in ("cache_episodes = -1", "warm_cache = 3", "cache = 1"):
            toml.write_text(f"[recall]\n{bad}\n")
            with pytest.raises(ConfigError, match="invalid episeg settings"):
                load_settings()

    @pytest.mark.parametrize(
        ("text", "key"),
        [
            ("idle_timeot = 5\n", "idle_timeot"),  # a misspelt field
            ("[recal]\nwarm_cache = true\n", "recal"),  # a misspelt section
            ('[judge]\nkind = "local"\nmodle = "x"\n', "judge.modle"),
        ],
    )
    def test_an_unknown_key_in_the_file_is_an_error_not_ignored(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, key: str
    ) -> None:
        toml = tmp_path / "episeg.toml"
        toml.write_text(text)
        with pytest.raises(ConfigError, match=rf"{key}\s+Extra inputs are not permitted"):
            load_settings()  # ./episeg.toml, found in the working directory
        monkeypatch.setenv("EPISEG_CONFIG", str(toml))
        with pytest.raises(ConfigError, match=re.escape(f"(file {toml}, environment EPISEG_*)")):
            load_settings()

    def test_a_missing_key_variable_is_named(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("EPISEG_JUDGE__KIND", "anthropic")
        monkeypatch.setenv("EPISEG_JUDGE__API_KEY_ENV", "NOT_SET_ANYWHERE")
        with pytest.raises(ConfigError, match="NOT_SET_ANYWHERE"):
            load_settings().build_judge()


class TestThroughOpenMemory:
    def test_llm_judge_and_scorer_from_the_environment(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        with LoopbackLLMServer(default=Reply.json({"score": 7})) as server:
            for part in ("JUDGE", "SCORER"):
                monkeypatch.setenv(f"EPISEG_{part}__KIND", "openai")
                monkeypatch.setenv(f"EPISEG_{part}__MODEL", "m")
                monkeypatch.setenv(f"EPISEG_{part}__BASE_URL", server.openai_url)
                monkeypatch.setenv(f"EPISEG_{part}__API_KEY_ENV", "LOOPBACK_KEY")
            monkeypatch.setenv("LOOPBACK_KEY", "k")
            memory = open_memory(tmp_path / "store", embedder=HashingEmbedder())
            assert isinstance(memory.judge, OpenAICompatibleJudge)
            memory.observe(Turn(actor=Actor.USER, text="deploy prod", ts=1.0, user="alice"))
            stored = memory.flush()
            asked = len(server.requests)
        assert asked >= 1
        assert [e.salience.score for e in stored if e.salience] == [7]
