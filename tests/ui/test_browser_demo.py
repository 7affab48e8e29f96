"""The FinCoach demo in a real browser on the real embedded model: stopped mid-way through a
turn (every lane marked stopped, the demo halts, memory never sees the turn), then played
again to the end."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from tests.browser_support import ARTIFACTS, chromium, wait_for_chat_input
from tests.ui.test_browser_main import (
    LANE_COLUMN_JS,
    LANES,
    TURN_TIMEOUT_MS,
    app_url,  # noqa: F401 (the module's app, shared)
    lane_column,
    message_counts,
    open_page,
    wait_for_turn,
)

pytestmark = [pytest.mark.browser, pytest.mark.embedded]

SHOTS = Path(os.environ.get("MEMORY_LAB_SHOTS", ARTIFACTS))


def every_lane_charted_while_streaming(page, timeout_s: float = 600.0) -> bool:
    """Whether, at some moment of the demo's turn 2 with a reply streaming, every lane's
    column holds a chart (all read in one script); False once turn 3 has begun."""
    snap_js = f"""() => {{
        const column = {LANE_COLUMN_JS};
        const columns = {json.dumps(LANES)}.map(column);
        return [columns.some(c => c?.innerText.includes('▌')),
                columns.every(c => c?.querySelector('.js-plotly-plot')),
                document.body.innerText.includes('You · turn 3:')];
    }}"""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        streaming, charted, turn_3 = page.evaluate(snap_js)
        if streaming and charted:
            return True
        if turn_3:
            return False
        page.wait_for_timeout(50)
    raise AssertionError("the demo's turn 2 never ended")


@pytest.mark.timeout(3600)  # five six-lane turns on 2 cores: minutes when other work runs
def test_the_demo_stops_mid_turn_then_plays_to_the_end(app_url):  # noqa: F811
    with chromium() as page:
        page.set_viewport_size({"width": 1600, "height": 1400})
        open_page(page, app_url, max_tokens=48)
        play = page.get_by_role("button", name="▶ Play the FinCoach demo")
        play.click()
        # turn 2 under way (not wait_for_turn: the chat input stays disabled while the demo
        # goes on): every lane keeps its chart in view while replies stream, then Stop
        page.get_by_text("You · turn 2:").wait_for(timeout=2 * TURN_TIMEOUT_MS)
        assert every_lane_charted_while_streaming(page), "a lane showed no chart in turn 2"
        stop = page.get_by_role("button", name="■ Stop this turn")
        stop.wait_for(timeout=TURN_TIMEOUT_MS)
        page.get_by_text("▌").first.wait_for(timeout=TURN_TIMEOUT_MS)
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "demo-mid.png"))
        stop.click()
        for title in LANES:
            lane_column(page, title).get_by_text(
                "Stopped: this turn is not in this lane's memory."
            ).wait_for(timeout=TURN_TIMEOUT_MS)
        wait_for_chat_input(page, TURN_TIMEOUT_MS)
        page.wait_for_timeout(3000)
        assert page.get_by_text("Payload · turn 3", exact=True).count() == 0  # the demo halted
        # played again: a new conversation, all five turns
        play.click()
        wait_for_turn(page, 5, timeout_ms=5 * TURN_TIMEOUT_MS)
        assert message_counts(page, "Full buffer") == [2, 4, 6, 8, 10]
        assert message_counts(page, "Sliding window") == [2, 4, 6, 8, 8]
        page.set_viewport_size({"width": 1600, "height": 2600})
        page.wait_for_timeout(1500)
        page.screenshot(path=str(SHOTS / "demo.png"))
        if SHOTS != ARTIFACTS:
            ARTIFACTS.mkdir(exist_ok=True)
            shutil.copy(SHOTS / "demo.png", ARTIFACTS / "main-demo-after-stop.png")
