"""The memory browser (/ui) in headless Chromium, driven by Playwright, on a loopback server.

Proves: the page renders a tenant's timeline (sessions, salience, dates, boundary reasons,
recall counts), shows only the key's tenant, search shows the score breakdown, pin / unpin
changes the stored episode (and the page shows pins, user salience and labels), forget removes
the episode from the store, turn text cannot inject markup. Screenshots go to docs/img/.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from episeg.client import Client
from episeg.interfaces.runtime import open_memory
from episeg.interfaces.service import create_app
from episeg.interfaces.transcript import read_transcript
from episeg.testing import HashingEmbedder
from tests.interfaces.helpers import KEY_A, KEY_B, KEYS, SAMPLE, LiveServer

pytestmark = pytest.mark.slow
playwright = pytest.importorskip("playwright.sync_api", reason="pip install playwright (dev extra)")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
IMG = Path(__file__).resolve().parents[2] / "docs" / "img"
BOB_SECRET = "bob's private zebra rotation plan"
HOSTILE = 'look <img src=x onerror="document.title=1"> here'


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    memory = open_memory(tmp_path_factory.mktemp("browser"), embedder=HashingEmbedder(dim=64))
    live = LiveServer(create_app(memory, KEYS))
    with Client(live.url, KEY_A) as alice:
        alice.observe_batch(read_transcript(SAMPLE))
        alice.observe_batch(
            [
                {"actor": "user", "text": HOSTILE, "session": "notes", "ts": 1764800000.0},
                {"actor": "assistant", "text": "noted", "session": "notes", "ts": 1764800010.0},
            ]
        )
        alice.flush()
        hit = alice.recall("OAuth 401 callback", k=1)[0]
        alice.used([hit["episode"]["id"]])  # one confirmed use to show as a recall count
    with Client(live.url, KEY_B) as bob:
        bob.observe({"actor": "user", "text": BOB_SECRET, "session": "b"})
        bob.flush()
    yield live
    live.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if CHROMIUM is None:
        pytest.fail("chromium is not installed (apt-get install -y chromium); .ci/run installs it")
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        yield b
        b.close()


def _open(browser: Any, server: LiveServer, key: str) -> Any:
    page = browser.new_page(viewport={"width": 1200, "height": 1100})
    page.goto(server.url + "/ui")
    page.fill("#key", key)
    page.click("#login button[type=submit]")
    return page


class TestBrowser:
    def test_timeline_shows_only_the_keys_tenant(self, browser: Any, server: LiveServer) -> None:
        page = _open(browser, server, KEY_A)
        page.wait_for_selector(".card")
        with Client(server.url, KEY_A) as alice:
            stored = alice.episodes(limit=1000)
        cards = page.locator(".card")
        assert cards.count() == len(stored)
        assert page.locator(".session").count() == len({e["session"] for e in stored})
        body = page.inner_text("body")
        assert "tenant: alice" in body and BOB_SECRET not in body
        assert "salience" in body and "recalled 1×" in body
        assert any(r in body for e in stored for r in e["boundary_reasons"])
        assert HOSTILE.split("<")[0] in body  # shown as text ...
        assert page.locator("img").count() == 0 and page.title() != "1"  # ... never as markup
        IMG.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(IMG / "ui-timeline.png"), full_page=True)
        page.close()

    def test_bob_sees_only_bob(self, browser: Any, server: LiveServer) -> None:
        page = _open(browser, server, KEY_B)
        page.wait_for_selector(".card")
        body = page.inner_text("body")
        assert BOB_SECRET in body and "OAuth" not in body and "tenant: bob" in body
        page.close()

    def test_a_wrong_key_shows_an_error_and_no_data(self, browser: Any, server: LiveServer) -> None:
        page = _open(browser, server, "wrong-key-0123456789")
        page.wait_for_selector("#error:not([hidden])")
        assert "401" in page.inner_text("#error")
        assert page.locator(".card").count() == 0
        page.close()

    def test_search_shows_the_score_breakdown(self, browser: Any, server: LiveServer) -> None:
        page = _open(browser, server, KEY_A)
        page.wait_for_selector(".card")
        page.fill("#query", "deploy version")
        page.fill("#k", "3")
        page.click("#search button[type=submit]")
        page.wait_for_selector(".hit")
        hits = page.inner_text("#hits")
        for term in ("score", "recency", "importance", "similarity", "raw cosine"):
            assert term in hits
        assert page.locator(".hit").count() == 3
        page.screenshot(path=str(IMG / "ui-search.png"), full_page=False)
        page.close()

    def test_pin_and_unpin_from_the_page(self, browser: Any, server: LiveServer) -> None:
        with Client(server.url, KEY_A) as alice:
            target = alice.recall("deploy version", k=1)[0]["episode"]["id"]
            alice.update_episode(target, salience=9, metadata={"project": "deploy"})
        page = _open(browser, server, KEY_A)
        page.wait_for_selector(".card")
        card = page.locator(f'.card[data-id="{target}"]')
        playwright.expect(card).to_have_attribute("data-pinned", "false")
        assert "salience 9/10 (set by you)" in card.inner_text()
        assert 'project="deploy"' in card.inner_text()
        card.locator("button.pin").click()
        playwright.expect(card).to_have_attribute("data-pinned", "true")
        assert "pinned" in card.inner_text() and card.locator("button.pin").inner_text() == "Unpin"
        with Client(server.url, KEY_A) as alice:
            assert alice.episode(target)["pinned"] is True
        card.screenshot(path=str(IMG / "ui-pinned.png"))
        card.locator("button.pin").click()
        playwright.expect(card).to_have_attribute("data-pinned", "false")
        with Client(server.url, KEY_A) as alice:
            assert alice.episode(target)["pinned"] is False
        page.close()

    def test_forget_removes_the_episode(self, browser: Any, server: LiveServer) -> None:
        page = _open(browser, server, KEY_A)
        page.wait_for_selector(".card")
        page.on("dialog", lambda dialog: dialog.accept())
        target = page.locator(".card").first.get_attribute("data-id")
        before = page.locator(".card").count()
        page.locator(f'.card[data-id="{target}"] button.forget').click()
        playwright.expect(page.locator(".card")).to_have_count(
            before - 1
        )  # the page's CSP forbids eval
        assert page.locator(f'.card[data-id="{target}"]').count() == 0
        with Client(server.url, KEY_A) as alice:
            assert target not in {e["id"] for e in alice.episodes(limit=1000)}
        page.close()


def test_the_browser_shows_every_episode_past_one_page(browser: Any, tmp_path: Path) -> None:
    """F193: the page read one page of 1,000 episodes and showed it as the whole memory."""
    import json

    from episeg.memory import Memory
    from episeg.testing import InMemoryBackend
    from episeg.types import Turn

    memory = Memory(
        path=tmp_path,
        embedder=HashingEmbedder(dim=64),
        judge=None,
        scorer=None,
        backend=InMemoryBackend(),
    )
    memory.observe(Turn(actor="user", text="seed episode", ts=1000.0, user="alice", session="s0"))
    memory.flush("alice")
    lines = list(memory.export("alice"))
    seed = json.loads(lines[1])
    out = [lines[0]]
    for n in range(1, 1002):
        t, session = 1000.0 + n * 100, f"day-{n:04d}"
        turn = dict(seed["turns"][0], ts=t, session=session, id=f"t{n}", text=f"note {n}")
        record = {**seed, "id": f"ep-{n:04d}", "session": session, "turns": [turn]}
        out.append(json.dumps({**record, "opened_at": t, "closed_at": t}) + "\n")
    out.append(json.dumps({"end": "episeg-export", "episodes": 1001}) + "\n")
    memory.forget("alice", all=True)
    assert len(memory.import_episodes("alice", out).imported) == 1001
    live = LiveServer(create_app(memory, KEYS))
    try:
        page = _open(browser, live, KEY_A)
        page.wait_for_selector(".card")
        assert page.inner_text("#count") == "1001 episodes in 1001 sessions"
        assert page.locator('[data-session="day-1001"]').count() == 1
        page.close()
    finally:
        live.stop()
        memory.close()
