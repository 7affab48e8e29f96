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
from memory.choices import StrategyChoice
from providers import preset
from storage.sweeps import SweepStore
from tests.browser_support import ARTIFACTS, chromium, running_app
from tests.providers.fake_batch_server import FakeBatchServer

pytestmark = [pytest.mark.browser]
KEY = "browser-test-key-0123456789"


def test_a_submitted_sweep_is_collected_on_the_page(tmp_path, monkeypatch):
    from playwright.sync_api import expect

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    server = FakeBatchServer().start()
    server.polls_before_done = 0
    db = f"sqlite:///{tmp_path / 'browser.sqlite3'}"
    settings = preset("anthropic").settings("claude-haiku-4-5", base_url=server.url, api_key=KEY)
    config = SurvivalConfig(
        facts=DEFAULT_FACTS,
        probe_turns=(2, 5, 10, 20),
        strategies=tuple(
            StrategyChoice(n, p)
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
            page.goto(url + "/Sweeps", wait_until="domcontentloaded")
            expect(page.get_by_role("heading", name="Sweeps", exact=True)).to_be_visible(timeout=60_000)  # fmt: skip
            expect(page.get_by_text("FinCoach facts · 4 strategies").first).to_be_visible()
            page.get_by_label("API key", exact=False).fill(KEY)
            page.keyboard.press("Enter")  # with the key, the open sweep is polled and collected
            expect(page.get_by_text("Results · claude-haiku-4-5")).to_be_visible(timeout=120_000)
            expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=60_000)
            heat = page.locator(".js-plotly-plot").first
            texts = heat.locator("text").all_text_contents()
            cells = [c for c in texts if re.fullmatch(r"\d+/\d+", c)]
            assert cells and all(c.endswith("/4") for c in cells), cells
            page.wait_for_timeout(1500)
            page.set_viewport_size({"width": 1500, "height": 2200})
            page.wait_for_timeout(1000)
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "sweeps_page.png"), full_page=True)
        assert SweepStore(db).sweep(sweep_id).status == "collected"
    finally:
        server.stop()
