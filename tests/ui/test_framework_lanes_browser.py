"""The framework-defaults lane set in a real browser on the real embedded model: one click
puts every framework lane beside hybrid, the FinCoach demo plays through all five turns in
every column, and a user's strategy file that breaks a contract is listed, marked."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memory.registry import REGISTRY
from plugins.loading import load_frameworks
from tests.browser_support import ARTIFACTS, chromium, running_app
from tests.ui.test_browser_main import TURN_TIMEOUT_MS, lane_column, open_page
from ui.strategy_sources import framework_defaults

pytestmark = [pytest.mark.browser, pytest.mark.embedded]
pytest.importorskip("langchain_core")

SHOTS = Path(os.environ.get("MEMORY_LAB_SHOTS", ARTIFACTS))
SEED = Path(__file__).parents[1] / "plugins" / "fixtures" / "seed_memory.py"


@pytest.mark.timeout(3600)
def test_framework_defaults_play_the_demo_and_a_broken_user_lane_is_marked(tmp_path):
    load_frameworks()
    titles = [REGISTRY[name].title for name in framework_defaults()]
    assert len(titles) == 10  # nine framework lanes and hybrid
    env = {
        "MEMORY_LAB_DB_URL": f"sqlite:///{tmp_path / 'sessions.db'}",
        "MEMORY_LAB_STRATEGY_FILES": f"{SEED}:SlidingWindowMemory",
    }
    with running_app(env=env) as url, chromium(width=2400, height=1600) as page:
        # the first page run imports the framework packages and loads the user's strategy
        # file in a fresh server: a full CI run once saw it take over 90 s on 2 busy cores
        open_page(page, url, max_tokens=32, timeout_ms=240_000)
        page.get_by_role("button", name="Framework defaults lane set").click()
        for title in titles:
            lane_column(page, title).wait_for(timeout=60_000)
        page.get_by_role("button", name="▶ Play the FinCoach demo").click()
        for title in titles:
            lane_column(page, title).get_by_text("Payload · turn 5", exact=True).first.wait_for(
                timeout=5 * TURN_TIMEOUT_MS
            )
        page.wait_for_timeout(2000)
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.set_viewport_size({"width": 2400, "height": 2600})
        page.screenshot(path=str(SHOTS / "framework-defaults-demo.png"))
        sidebar = page.locator('[data-testid="stSidebar"]')
        sidebar.get_by_text("Strategies from outside the lab").click()
        marked = sidebar.get_by_text("sliding_window_memory: file")
        marked.wait_for(timeout=30_000)
        assert "breaks: roles alternate" in marked.inner_text()
        page.set_viewport_size({"width": 1600, "height": 1600})
        sidebar.screenshot(path=str(SHOTS / "user-lane-marked.png"))
