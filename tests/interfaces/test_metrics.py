"""GET /metrics on the real service: counters move with the API, latency by route template."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from episeg.client import Client
from episeg.interfaces.runtime import open_memory
from episeg.interfaces.service import create_app
from episeg.testing import HashingEmbedder
from tests.interfaces.helpers import KEY_A, KEYS, LiveServer


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    memory = open_memory(tmp_path_factory.mktemp("metrics"), embedder=HashingEmbedder(dim=64))
    live = LiveServer(create_app(memory, KEYS))
    yield live
    live.stop()


def _samples(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = httpx.get(url + "/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(response.text)
        for s in family.samples
    }


class TestMetrics:
    def test_counters_gauges_and_latency(self, server: LiveServer) -> None:
        before = _samples(server.url)
        assert before[("episeg_turns_total", ())] == 0
        with Client(server.url, KEY_A) as c:
            c.observe_batch(
                [
                    {"actor": "user", "text": "the login fails with 401", "session": "m"},
                    {
                        "actor": "assistant",
                        "text": "rotate the key <episode_boundary>",
                        "session": "m",
                    },
                    {"actor": "user", "text": "now the deploy", "session": "m"},
                ]
            )
            c.flush("m")
            episode = c.episodes()[0]["id"]
            c.forget(episode)
        after = _samples(server.url)
        assert after[("episeg_turns_total", ())] == 3
        assert after[("episeg_episodes_closed_total", ())] == 2
        assert after[("episeg_outbox_depth", ())] == 0
        assert ("episeg_judge_calls", ()) in after
        forget_count = [
            v
            for (name, labels), v in after.items()
            if name == "episeg_request_seconds_count"
            and ("route", "/v1/episode") in labels
            and ("method", "DELETE") in labels
        ]
        assert forget_count == [1.0]  # one label set: the route, not the id
        routes = {dict(labels).get("route") for (name, labels) in after if "request" in name}
        assert not any(r and re.search(episode, r) for r in routes)

    def test_metrics_needs_no_key_and_is_not_in_the_openapi(self, server: LiveServer) -> None:
        paths = httpx.get(server.url + "/openapi.json").json()["paths"]
        assert "/metrics" not in paths and "/ui" not in paths
