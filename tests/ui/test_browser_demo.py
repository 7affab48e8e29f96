"""The FinCoach demo in a real browser on the real embedded model: it plays to the end while
one lane's turn is stopped mid-reply, and that turn never reaches the lane's memory."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.browser_support import ARTIFACTS, chromium
from tests.ui.test_browser_main import (
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


@pytest.mark.timeout(3600)  # five six-lane turns on 2 cores: minutes when other work runs
def test_the_demo_plays_to_the_end_with_a_lane_stopped_mid_turn(app_url):  # noqa: F811
    with chromium() as page:
        page.set_viewport_size({"width": 1600, "height": 1400})
        open_page(page, app_url, max_tokens=48)
        page.get_by_role("button", name="▶ Play the FinCoach demo").click()
        # turn 1 is under way in every lane: stop the full buffer's (its reply, or its request
        # if it has not gone out yet), while the other five lanes go on
        full = lane_column(page, "Full buffer")
        stop = full.get_by_role("button", name="■ Stop lane")
        stop.wait_for(timeout=TURN_TIMEOUT_MS)
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "demo-mid.png"))
        stop.click()
        full.get_by_text("Stopped: this turn is not in this lane's memory.").wait_for(
            timeout=TURN_TIMEOUT_MS
        )
        # the other lanes answer turn 1, and the demo goes on to its end
        wait_for_turn(page, 5, timeout_ms=5 * TURN_TIMEOUT_MS)
        caption = full.get_by_text("messages per turn:").inner_text()
        counts = [part.strip() for part in caption.split(":", 1)[1].split("→")]
        # turn 1 left no trace in memory: turn 2 sends only itself (system + 1 message)
        assert counts[0] in {"–", "2"} and counts[1:] == ["2", "4", "6", "8"], caption
        assert message_counts(page, "Sliding window") == [2, 4, 6, 8, 8]
        for title in LANES:
            lane_column(page, title).get_by_text("Payload · turn 5", exact=True).wait_for()
        page.set_viewport_size({"width": 1600, "height": 2600})
        page.wait_for_timeout(1500)
        page.screenshot(path=str(SHOTS / "demo.png"))
        if SHOTS != ARTIFACTS:
            ARTIFACTS.mkdir(exist_ok=True)
            shutil.copy(SHOTS / "demo.png", ARTIFACTS / "main-demo-stopped-lane.png")
