"""The HTML report: its timeline from the real segmenter, rendered in real headless Chromium."""

from __future__ import annotations

import itertools
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from episeg.config import CombinerConfig, EpisegConfig, WindowConfig
from episeg.interfaces.cli import main
from episeg.interfaces.report import SessionTimeline, build_timelines
from episeg.interfaces.transcript import read_transcript
from episeg.typing import Embedder
from tests.interfaces.helpers import SAMPLE

pytestmark = pytest.mark.slow

ATTACK = "<script>document.title='pwned'</script><img src=x onerror=\"document.title='img'\">"


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.fail(
            "chromium is not installed (apt-get install -y chromium); the report "
            "browser tests need it",
            pytrace=False,
        )
    profile = tmp_path / "chromium-profile"
    return subprocess.run(
        [
            exe,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={profile}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


@pytest.fixture(scope="module")
def sample_timeline(real_embedder: Embedder) -> SessionTimeline:
    [timeline] = build_timelines(read_transcript(SAMPLE), embedder=real_embedder)
    return timeline


@pytest.fixture(scope="module")
def layered_timeline(real_embedder: Embedder) -> SessionTimeline:
    """The hand-set ``layered`` policy still opens a sub-episode at the terraform lock."""
    config = EpisegConfig(
        combiner=CombinerConfig(kind="layered"), window=WindowConfig(max_turns=24)
    )
    [timeline] = build_timelines(read_transcript(SAMPLE), embedder=real_embedder, config=config)
    return timeline


@pytest.fixture(scope="module")
def report(
    tmp_path_factory: pytest.TempPathFactory, real_embedder: Embedder
) -> tuple[Path, dict[str, int]]:
    """The sample plus a hostile session, written through ``episeg report``."""
    folder = tmp_path_factory.mktemp("report")
    transcript = folder / "chat.jsonl"
    hostile = [
        {
            "actor": "user",
            "text": f"please print {ATTACK}",
            "ts": 0.0,
            "user": "eve",
            "session": "attack",
        },
        {
            "actor": "assistant",
            "text": "I will show it as text.",
            "ts": 1.0,
            "user": "eve",
            "session": "attack",
        },
    ]
    lines = SAMPLE.read_text().splitlines() + [json.dumps(t) for t in hostile]
    transcript.write_text("\n".join(lines) + "\n")
    output = folder / "report.html"
    assert main(["report", str(transcript), "-o", str(output), "--title", "chat report"]) == 0
    return output, {"turns": 22}


class TestReportTimeline:
    def test_bands_tile_the_turns(self, sample_timeline: SessionTimeline) -> None:
        bands, rows = sample_timeline.bands, sample_timeline.rows
        assert len(rows) == 20 and bands[0].first == 0 and bands[-1].last == 19
        for before, after in itertools.pairwise(bands):
            assert after.first == before.last + 1
        for band in bands:
            assert band.last - band.first + 1 == len(band.episode.turns)
            assert all(r.episode_index == band.index for r in rows[band.first : band.last + 1])

    def test_boundaries_carry_the_signals_that_fired(
        self, sample_timeline: SessionTimeline
    ) -> None:
        opening = [r.position for r in sample_timeline.rows if r.opens_episode]
        assert opening == [b.first for b in sample_timeline.bands[1:]]
        for position in opening:
            assert sample_timeline.rows[position].fired, position
        assert sample_timeline.threshold == EpisegConfig().semantic.threshold
        assert sum(r.distance is not None for r in sample_timeline.rows) >= 15
        assert all(b.episode.salience is not None for b in sample_timeline.bands)

    def test_a_sub_episode_is_drawn_as_one(self, layered_timeline: SessionTimeline) -> None:
        # The learned default keeps the lock inside the deploy (a tool error does not
        # split a task), so the sub-episode band is checked with the layered preset.
        subs = [b for b in layered_timeline.bands if b.is_sub_episode]
        assert subs
        for band in subs:  # each sub-episode band starts at a row whose signals fired
            assert layered_timeline.rows[band.first].opens_episode
            assert layered_timeline.rows[band.first].fired


class TestReportInBrowser:
    def test_dom_has_one_band_per_episode_and_the_attack_is_text(
        self, report: tuple[Path, dict[str, int]], tmp_path: Path
    ) -> None:
        output, expected = report
        dom = chromium(tmp_path, "--dump-dom", output.as_uri()).stdout
        assert "<title>chat report</title>" in dom  # the injected script did not run
        assert 'data-scripts-ran="1"' in dom  # ... while the page's own script did
        assert "<img" not in dom and "&lt;img src=x onerror=" in dom
        assert "&lt;script&gt;document.title='pwned'&lt;/script&gt;" in dom
        sections = dom.split('<section class="session"')[1:]
        assert len(sections) == 2
        total_turns = 0
        for section in sections:
            articles = section.split("<article ")[1:]
            bands = re.findall(r'<rect class="band"', section)
            assert len(articles) == len(bands) >= 1
            for article in articles:
                found = re.search(r'data-turn-count="(\d+)"', article)
                assert found is not None
                declared = int(found.group(1))
                assert article.count('<div class="turn"') == declared
                total_turns += declared
        assert total_turns == expected["turns"]
        assert dom.count('class="threshold"') == 2 and 'class="distance"' in dom

    def test_screenshot_renders(self, report: tuple[Path, dict[str, int]], tmp_path: Path) -> None:
        output, _ = report
        shot = tmp_path / "report.png"
        chromium(tmp_path, f"--screenshot={shot}", "--window-size=1200,1400", output.as_uri())
        data = shot.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000

    def test_control_an_unescaped_script_would_be_caught(self, tmp_path: Path) -> None:
        page = tmp_path / "raw.html"
        page.write_text(f"<html><head><title>safe</title></head><body>{ATTACK}</body></html>")
        dom = chromium(tmp_path, "--dump-dom", page.as_uri()).stdout
        assert "<title>pwned</title>" in dom or "<title>img</title>" in dom
