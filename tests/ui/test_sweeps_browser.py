"""The Sweeps page in a real browser: a sweep submitted by another process (this test, through
the engine) is listed after the app starts, polled, collected and drawn as heat maps.

Saves test-artifacts/sweeps_page.png (the collected sweep, looked at for the closing note).
"""

from __future__ import annotations

import re

import pytest

from engines.survival import DEFAULT_FACTS, SurvivalConfig
from engines.sweep import prepare_sweep
from engines.sweep_run import start
from memory.lane_spec import LaneSpec
from providers import preset
from storage.store import SweepStore
from tests.browser_support import ARTIFACTS, chromium, running_app
from tests.providers.fake_batch_server import FakeBatchServer

pytestmark = [pytest.mark.browser]
KEY = "browser-test-key-0123456789"


def open_and_collect(page, url: str, name: str, heading: str, endpoint: str) -> None:
    """Open the Sweeps page, see the sweep `name` listed, type the key (the open sweep is
    then polled and collected) and wait for its results `heading` and first figure."""
    from playwright.sync_api import expect

    page.goto(url + "/Sweeps", wait_until="domcontentloaded")
    expect(page.get_by_role("heading", name="Sweeps", exact=True)).to_be_visible(timeout=60_000)
    # the server's first visit is this page's own URL: the page list is still app.py's titled
    # one (Streamlit's automatic list would show file names and "app")
    nav = page.get_by_test_id("stSidebarNav")
    expect(nav.get_by_role("link", name="Auto-tune")).to_be_visible()
    expect(nav.get_by_role("link", name="app", exact=True)).to_have_count(0)
    # the open sweep's heading line; its row in the saved-sweeps grid is a canvas cell that
    # the accessibility tree reports as hidden, so a bare text match may land on it
    # a saved sweep never chooses its endpoint: the fake batch server's URL is typed again
    page.get_by_label("Endpoint URL of this sweep", exact=False).fill(endpoint)
    page.keyboard.press("Enter")
    expect(page.locator("strong", has_text=name).first).to_be_visible()
    page.get_by_label("API key", exact=False).fill(KEY)
    page.keyboard.press("Enter")
    expect(page.get_by_text(heading)).to_be_visible(timeout=120_000)
    expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=60_000)


def save_full_page(page, name: str, height: int) -> None:
    page.wait_for_timeout(1500)
    page.set_viewport_size({"width": 1500, "height": height})
    page.wait_for_timeout(1000)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name), full_page=True)


def test_a_submitted_sweep_is_collected_on_the_page(tmp_path, monkeypatch):

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    server = FakeBatchServer().start()
    server.polls_before_done = 0
    db = f"sqlite:///{tmp_path / 'browser.sqlite3'}"
    settings = preset("anthropic").settings("claude-haiku-4-5", base_url=server.url, api_key=KEY)
    config = SurvivalConfig(
        facts=DEFAULT_FACTS,
        probe_turns=(2, 5, 10, 20),
        strategies=tuple(
            LaneSpec(n, p)
            for n, p in (
                ("full", {}),
                ("window", {"k": 3}),
                ("summary_buffer", {"budget": 400}),
                ("entity", {}),
            )  # fmt: skip
        ),
    )
    store = SweepStore(db)
    sweep_id = start(store, prepare_sweep(config, settings), name="FinCoach facts · 4 strategies")
    store.close()
    try:
        with (
            running_app(
                env={"MEMORY_LAB_DB_URL": db}, log=ARTIFACTS / "sweeps_streamlit.log"
            ) as url,
            chromium(1500, 1000) as page,
        ):
            open_and_collect(
                page, url, "FinCoach facts · 4 strategies", "Results · claude-haiku-4-5", server.url
            )
            heat = page.locator(".js-plotly-plot").first
            texts = heat.locator("text").all_text_contents()
            cells = [c for c in texts if re.fullmatch(r"\d+/\d+", c)]
            assert cells and all(c.endswith("/4") for c in cells), cells
            save_full_page(page, "sweeps_page.png", 2200)
        assert SweepStore(db).sweep(sweep_id).status == "collected"
    finally:
        server.stop()


def test_a_two_model_recall_sweep_is_collected_on_the_page(tmp_path, monkeypatch):
    """A recall sweep (two models, one Anthropic batch) submitted elsewhere, collected and
    drawn on the page. Saves test-artifacts/recall_sweep.png."""
    from playwright.sync_api import expect

    from engines.recall import default_settings
    from engines.sweep_recall import RecallGrid, prepare_recall_sweeps
    from scenarios.longmem_world import generate

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    # the 'model' answers with every message it was sent: it knows what its payload holds
    server = FakeBatchServer().start()
    server.polls_before_done = 0
    db = f"sqlite:///{tmp_path / 'recall.sqlite3'}"
    arms = [preset("anthropic").settings(m, base_url=server.url, api_key=KEY)
            for m in ("claude-haiku-4-5", "claude-sonnet-4-5")]  # fmt: skip
    wanted = ("full", "window (k=10)", "token_window (budget=5.0% of full)", "summary_buffer (budget=10.0% of full)",
              "entity", "retrieval (recall_budget=5.0% of full)")  # fmt: skip
    settings = tuple(s for s in default_settings() if s.label in wanted)
    grid = RecallGrid(generate(0, sessions=12), settings)
    store = SweepStore(db)
    sweep_id = start(store, prepare_recall_sweeps(grid, arms), name="Recall · 12 sessions")
    store.close()
    try:
        with (
            running_app(env={"MEMORY_LAB_DB_URL": db}, log=ARTIFACTS / "recall_sweep.log") as url,
            chromium(1500, 1000) as page,
        ):
            heading = "Results · claude-haiku-4-5 vs claude-sonnet-4-5"
            open_and_collect(page, url, "Recall · 12 sessions", heading, server.url)
            expect(
                page.get_by_text("whether the model's reply held the answer", exact=False)
            ).to_be_visible()
            save_full_page(page, "recall_sweep.png", 2300)
        assert SweepStore(db).sweep(sweep_id).status == "collected"
    finally:
        server.stop()
