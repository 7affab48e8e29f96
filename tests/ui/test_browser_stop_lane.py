"""One lane stopped mid-stream in a real browser on the real embedded model: that lane says it
stopped and keeps the turn out of its memory; the other lanes go on streaming (their text is
not cut off and started again) and record the turn; the stopped lane keeps what it had written
on screen, marked ■."""

from __future__ import annotations

import time

import pytest

from tests.browser_support import ARTIFACTS, chromium, wait_for_idle
from tests.ui.test_browser_main import (
    LANES,
    TURN_TIMEOUT_MS,
    app_url,  # noqa: F401 (the module's app, shared)
    lane_column,
    open_page,
    wait_for_turn,
)

pytestmark = [pytest.mark.browser, pytest.mark.embedded]

STOPPED = "Stopped: this turn is not in this lane's memory."


def streaming_text(column) -> str:
    """The reply a lane is streaming, as its box shows it (cursor dropped); '' if none."""
    box = column.locator('[data-testid="stMarkdownContainer"]').filter(has_text="▌")
    return box.first.inner_text().replace("▌", "").strip() if box.count() else ""


def first_line(text: str) -> str:
    return text.strip().split("\n", 1)[0].strip()


def words(text: str) -> str:
    return " ".join(text.replace("▌", "").split())


def grew_from(page, title: str, before: str) -> bool:
    """Whether lane `title` shows, in an element of the running page run (not a stale one
    left from the run the click cut off), a reply that starts with `before` and goes on."""
    heading = page.get_by_role("heading", name=title, exact=True)
    live = (
        page.locator('[data-testid="stColumn"]')
        .filter(has=heading)
        .locator(
            '[data-testid="stElementContainer"]:not([data-stale="true"]) '
            '[data-testid="stMarkdownContainer"]'
        )
    )
    start = words(before)
    return any(
        words(text).startswith(start) and len(words(text)) > len(start)
        for text in live.all_inner_texts()
    )


def two_streaming_lanes(page, timeout_ms: int) -> tuple[str, str, str]:
    """(a lane to stop, another lane streaming, that other lane's text so far), as soon as
    two lanes show a reply on its way in with some text."""
    deadline = time.monotonic() + timeout_ms / 1000
    while time.monotonic() < deadline:
        texts = {title: streaming_text(lane_column(page, title)) for title in LANES}
        going = [title for title, text in texts.items() if len(first_line(text)) >= 16]
        if len(going) >= 2:
            return going[0], going[1], texts[going[1]]
        page.wait_for_timeout(200)
    raise AssertionError("no two lanes were streaming at once")


@pytest.mark.timeout(1800)
def test_stop_lane_stops_one_lane_mid_stream_and_the_others_record_the_turn(app_url):  # noqa: F811
    from playwright.sync_api import expect

    with chromium() as page:
        page.set_viewport_size({"width": 1600, "height": 1400})
        open_page(page, app_url, max_tokens=200)  # replies that take seconds to stream
        box = page.get_by_placeholder("Message every lane at once…")
        box.fill("Tell me everything about saving money, in detail.")
        box.press("Enter")
        stopped, other, before = two_streaming_lanes(page, TURN_TIMEOUT_MS)
        # the lanes keep their place while they stream: no faded copy of the page before the
        # turn above them (notes that come and go are in containers drawn on every run)
        for title in LANES:
            assert page.get_by_role("heading", name=title, exact=True).count() == 1, title
        # nor a warm-up note left over from before the turn (its lanes waited for it)
        assert page.get_by_text("Warming the model").count() == 0
        column = lane_column(page, stopped)
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "main-stop-lane-before.png"))
        written = streaming_text(column)  # the stopped lane's text: it stays on screen
        column.get_by_role("button", name="■ Stop lane").click()
        column.get_by_text(STOPPED).wait_for(timeout=60_000)  # drawn by the click's page run
        # clicked once: disabled by the click's page run (waited for, as the note above is:
        # a CI run under load read the button before that run's redraw of it reached it)
        expect(column.get_by_role("button", name="■ Stop lane")).to_be_disabled(timeout=10_000)
        # in that page run the other lane's reply goes on from where it was: not cut off and
        # started again (a restart would come after the page's 3 s stall check, from nothing)
        shown = time.monotonic()
        while not grew_from(page, other, before):
            assert time.monotonic() - shown < 3.0, f"{other} did not go on from: {before}"
            page.wait_for_timeout(100)
        page.get_by_text("You · turn 1:").scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "main-stop-lane-after-click.png"))
        for title in LANES:
            if title != stopped:
                lane_column(page, title).get_by_text("Payload · turn 1", exact=True).first.wait_for(
                    timeout=TURN_TIMEOUT_MS
                )
        wait_for_turn(page, 1)  # every lane, the stopped one too, is done: input enabled
        # and the page run that follows the turn is over: until it ends, elements of the runs
        # before it (a Stop button, a streaming box) can still be on the page
        wait_for_idle(page)
        assert column.get_by_text(STOPPED).count() == 1
        for title in LANES:
            if title != stopped:
                assert lane_column(page, title).get_by_text(STOPPED).count() == 0, title
        assert page.get_by_role("button", name="■ Stop lane").count() == 0
        kept = column.locator('[data-testid="stMarkdownContainer"]').filter(has_text="■")
        shown = kept.all_inner_texts()
        assert len(shown) == 1 and words(shown[0]).startswith(words(written)), (written, shown)
        assert kept.inner_text().rstrip().endswith("■")
        page.get_by_text("You · turn 1:").scroll_into_view_if_needed()
        page.wait_for_timeout(1000)
        page.screenshot(path=str(ARTIFACTS / "main-stop-lane.png"))
