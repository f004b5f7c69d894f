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

from episeg.config import ForgettingConfig, RecallConfig
from episeg.errors import ConfigError
from episeg.interfaces.cli import EXIT_BAD_INPUT, main
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
            # a misspelt section was ignored: the offline judge silently kept (review 10)
            ({"EPISEG_JUDG__KIND": "openai"}, "EPISEG_JUDG__KIND: no settings section 'judg'"),
            ({"EPISEG_RECAL__WARM_CACHE": "true"}, "no settings section 'recal'"),
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

    def test_forgetting_from_the_file_reaches_maintain(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """`[forgetting]` was no settings section: a CLI or service user could not lengthen
        the ~2-day horizon after which `maintain --archive` hides unconfirmed episodes."""
        assert load_settings().config().forgetting == ForgettingConfig()

        def archived_by_maintain(folder: str) -> int:
            memory = open_memory(tmp_path / folder, embedder=HashingEmbedder(dim=32))
            try:
                for n in range(3):  # a conversation of 2023: older than two days
                    memory.observe(Turn(actor="user", text=f"deploy step {n}", ts=1.7e9 + n))
                memory.flush()
                return memory.maintain("default", archive=True).archived
            finally:
                memory.close()

        assert archived_by_maintain("default") == 1
        toml = tmp_path / "conf.toml"
        toml.write_text("[forgetting]\ninitial_days = 36500\narchive_floor = 0.01\n")
        monkeypatch.setenv("EPISEG_CONFIG", str(toml))
        forgetting = load_settings().config().forgetting
        assert (forgetting.initial_days, forgetting.archive_floor) == (36500.0, 0.01)
        assert archived_by_maintain("long") == 0
        monkeypatch.setenv("EPISEG_FORGETTING__INITIAL_DAYS", "0")
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

    @pytest.mark.parametrize(
        ("content", "says"),
        [
            (b'embedding_backend = "onnx\n', "TOMLDecodeError"),  # an unclosed string
            (b"idle_timeout = 5\n# \xff\xfe\n", "UnicodeDecodeError"),  # not UTF-8
        ],
    )
    def test_an_unreadable_file_is_exit_2_naming_it_not_a_traceback(
        self,
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
        content: bytes,
        says: str,
    ) -> None:
        """R2-5: the TOML source raised ``TOMLDecodeError`` / ``UnicodeDecodeError`` (exit 1)."""
        (tmp_path / "episeg.toml").write_bytes(content)
        with pytest.raises(ConfigError, match=f"settings file episeg.toml .*{says}"):
            load_settings()
        argv = ["recall", "--user", "alice", "--path", str(tmp_path / "store"), "login"]
        assert main(argv) == EXIT_BAD_INPUT
        err = capsys.readouterr().err
        assert err.startswith("episeg: error: cannot read the episeg settings file episeg.toml")
        assert "Traceback" not in err
        elsewhere = tmp_path / "conf.toml"
        (tmp_path / "episeg.toml").rename(elsewhere)
        monkeypatch.setenv("EPISEG_CONFIG", str(elsewhere))
        with pytest.raises(ConfigError, match=re.escape(f"settings file {elsewhere} ")):
            load_settings()

    @pytest.mark.parametrize(
        ("name", "value", "field"),
        [
            ("EPISEG_RECALL__WARM_CACHE", "yes", "recall.warm_cache"),
            ("EPISEG_RECALL__WARM_CACHE", "1", "recall.warm_cache"),
            ("EPISEG_RECALL__WARM_CACHE", "True", "recall.warm_cache"),
            ("EPISEG_RECALL__CACHE_EPISODES", "1.0", "recall.cache_episodes"),
            ("EPISEG_STORE__SYNC_THRESHOLD", "true", "store.sync_threshold"),
            ("EPISEG_IDLE_TIMEOUT", "true", "idle_timeout"),
        ],
    )
    def test_values_are_read_as_set_reads_them(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, value: str, field: str
    ) -> None:
        """Loose words ``--set``, HTTP and MCP refuse ("yes", 1 for true, 1.0 for 1) are refused.

        The JSON spellings still pass, in the environment as in the file.
        """
        monkeypatch.setenv(name, value)
        with pytest.raises(ConfigError, match=re.escape(field)):
            load_settings()
        monkeypatch.delenv(name)
        section, _, key = field.rpartition(".")
        (tmp_path / "episeg.toml").write_text(
            f"[{section}]\n" * bool(section) + f"{key} = {value}\n"
        )
        if value not in ("yes", "True"):  # not TOML values at all
            with pytest.raises(ConfigError, match=re.escape(field)):
                load_settings()
        (tmp_path / "episeg.toml").unlink()
        monkeypatch.setenv("EPISEG_RECALL__WARM_CACHE", "true")
        monkeypatch.setenv("EPISEG_RECALL__CACHE_EPISODES", "1000")
        monkeypatch.setenv("EPISEG_IDLE_TIMEOUT", "120")
        settings = load_settings()
        assert (settings.recall.warm_cache, settings.recall.cache_episodes) == (True, 1000)
        assert settings.idle_timeout == 120.0

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
