"""The main page in a real browser, answered by the real embedded model (no key, no internet)."""

from __future__ import annotations

import json
import time

import pytest

from scenarios import fincoach
from tests.browser_support import (
    ARTIFACTS,
    chromium,
    running_app,
    wait_for_chat_input,
    wait_for_idle,
)
from ui.lane_view import DETAILS_LATER

pytestmark = [pytest.mark.browser, pytest.mark.embedded]

LANES = [
    "Full buffer",
    "Sliding window",
    "Token window",
    "Summary buffer",
    "Entity memory",
    "Hybrid",
]
TURN_TIMEOUT_MS = 420_000  # six lanes on a 2-core machine with a 135M model


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    data = tmp_path_factory.mktemp("data")
    env = {"MEMORY_LAB_DB_URL": f"sqlite:///{data / 'sessions.db'}"}
    with running_app(env=env) as url:
        yield url


def lane_column(page, title: str):
    heading = page.get_by_role("heading", name=title, exact=True)
    return page.locator('[data-testid="stColumn"]').filter(has=heading).last


def open_page(page, url: str, max_tokens: int = 48, *, timeout_ms: int = 90_000) -> None:
    page.goto(url)
    page.get_by_placeholder("Message every lane at once…").wait_for(timeout=timeout_ms)
    # shorter replies keep the test quick; this also drives the sidebar form for real
    box = page.get_by_label("Max reply tokens")
    box.fill(str(max_tokens))
    page.get_by_role("button", name="Apply (starts a new conversation)").click()
    page.wait_for_timeout(1500)


def wait_for_turn(page, turn: int, timeout_ms: int = TURN_TIMEOUT_MS) -> None:
    """Every lane has recorded `turn`: each column shows that turn's payload expander."""
    for title in LANES:
        column = lane_column(page, title)
        # .first: while the page run after a turn replaces the lanes' elements, the previous
        # run's copy can be on the page beside the new one for a moment
        column.get_by_text(f"Payload · turn {turn}", exact=True).first.wait_for(timeout=timeout_ms)
    wait_for_chat_input(page, timeout_ms)
    wait_for_idle(page, timeout_ms=timeout_ms)  # the page run after the turn is over too


def send(page, text: str, turn: int) -> None:
    box = page.get_by_placeholder("Message every lane at once…")
    box.fill(text)
    box.press("Enter")
    wait_for_turn(page, turn)


def shown_payload(page, title: str, turn: int) -> dict:
    """The JSON body a lane's column shows for `turn` (its payload expander, opened)."""
    column = lane_column(page, title)
    column.get_by_text(f"Payload · turn {turn}", exact=True).click()
    code = column.locator('[data-testid="stCode"] code').first
    code.wait_for()
    return json.loads(code.inner_text())


LANE_CHARTS_JS = """[...document.querySelectorAll('.js-plotly-plot')]
    .filter(el => (el.layout?.title?.text || '').includes('Tokens per turn'))"""


def lane_chart_points(page) -> list[list[int]]:
    """x values of the 'prompt (counted)' trace of each lane chart, read from Plotly itself,
    once the page shows one chart per lane. While a rerun is under way the browser still
    holds the last run's charts beside the new ones (a CI run once read 16), so the count
    is waited for; charts that never settle to one per lane fail here."""
    page.wait_for_function(f"() => {LANE_CHARTS_JS}.length === {len(LANES)}", timeout=60_000)
    return page.evaluate(
        f"() => {LANE_CHARTS_JS}.map(el => el.data.find(t => t.name === 'prompt (counted)').x)"
    )


# a lane's column (the last one drawn: a page run's previous copy can still be there)
LANE_COLUMN_JS = """title => {
    const columns = [...document.querySelectorAll('[data-testid="stColumn"]')].filter(c =>
        [...c.querySelectorAll('h4')].some(h => h.innerText.trim() === title));
    return columns.length ? columns[columns.length - 1] : null;
}"""


def finished_lane_while_others_keep_memory(page, timeout_s: float = 300.0) -> str:
    """The Full buffer column's text at the first moment it has ended turn 1 (its details,
    or the note that they come later) while the Entity memory lane still runs its upkeep;
    read in one script, so both columns are seen at the same instant."""
    snap_js = f"""() => {{
        const column = {LANE_COLUMN_JS};
        return ['Entity memory', 'Full buffer'].map(t => column(t)?.innerText || '');
    }}"""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        entity, full = page.evaluate(snap_js)
        ended = DETAILS_LATER in full or "Payload · turn 1" in full
        if "upkeep (summary / facts) running" in entity and ended:
            return full
        assert "Payload · turn 1" not in entity, "never saw Full buffer end before Entity memory"
        page.wait_for_timeout(50)
    raise AssertionError("Entity memory's upkeep was never seen running")


def test_two_messages_stream_into_six_lanes_with_exact_payloads(app_url):
    with chromium() as page:
        open_page(page, app_url)
        box = page.get_by_placeholder("Message every lane at once…")
        box.fill("Hi! I'm Chiru. My monthly take-home salary is ₹1,20,000.")
        box.press("Enter")
        # a lane that has answered while another keeps its memory draws no figures, payload
        # or chart yet: drawn then, they took the cores from the model's upkeep calls
        full = finished_lane_while_others_keep_memory(page)
        assert DETAILS_LATER in full and "Payload · turn 1" not in full, full
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "main-details-later.png"))
        wait_for_turn(page, 1)
        send(page, "What is my name?", 2)

        body = shown_payload(page, "Full buffer", 2)
        roles = [m["role"] for m in body["messages"]]
        assert roles == ["system", "user", "assistant", "user"]
        assert body["messages"][0]["content"] == fincoach.SYSTEM_PROMPT
        assert body["messages"][1]["content"].startswith("Hi! I'm Chiru.")
        assert body["messages"][-1]["content"] == "What is my name?"
        assert body["stream"] is True and body["max_tokens"] == 48
        assert "api_key" not in json.dumps(body)

        points = lane_chart_points(page)
        assert len(points) == 6
        assert all(xs == [1, 2] for xs in points), points

        page.set_viewport_size({"width": 1600, "height": 2600})
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "main-two-turns.png"))


def message_counts(page, title: str) -> list[int]:
    caption = lane_column(page, title).get_by_text("messages per turn:").inner_text()
    return [int(n) for n in caption.split(":", 1)[1].split("→")]


def test_fincoach_demo_grows_the_buffer_and_caps_the_window(app_url):
    with chromium() as page:
        open_page(page, app_url, max_tokens=32)
        page.get_by_role("button", name="▶ Play the FinCoach demo").click()
        wait_for_turn(page, 5, timeout_ms=5 * TURN_TIMEOUT_MS)
        assert message_counts(page, "Full buffer") == [2, 4, 6, 8, 10]
        # the window keeps K=3 turns: it stops growing at 3 x 2 + 2 messages
        assert message_counts(page, "Sliding window") == [2, 4, 6, 8, 8]
        page.set_viewport_size({"width": 1600, "height": 2600})
        page.screenshot(path=str(ARTIFACTS / "main-fincoach-demo.png"))


def test_the_recorded_demo_plays_to_the_end_at_once(app_url):
    with chromium() as page:
        page.goto(app_url)
        page.get_by_placeholder("Message every lane at once…").wait_for(timeout=90_000)
        page.get_by_role("button", name="▷ Recorded demo (instant)").click()
        wait_for_turn(page, 5, timeout_ms=60_000)  # no model call: seconds, not minutes
        page.get_by_text("Recorded", exact=True).first.wait_for()
        assert message_counts(page, "Full buffer") == [2, 4, 6, 8, 10]
        page.set_viewport_size({"width": 1600, "height": 2600})  # charts draw when in view
        points = lane_chart_points(page)
        assert len(points) == 6 and all(xs == [1, 2, 3, 4, 5] for xs in points), points
        page.screenshot(path=str(ARTIFACTS / "main-recorded-demo.png"))


QUIET_WHILE_STREAMING = """() => {
    const badge = document.querySelector('[data-testid=stStatusWidget]');
    const input = document.querySelector('[data-testid=stChatInput]');
    return Boolean(input) && !input.closest('[data-testid=stBottom]')
        && (!badge || getComputedStyle(badge).display === 'none');
}"""


def test_stop_cancels_a_turn_mid_way_and_memory_never_sees_it(app_url):
    with chromium() as page:
        open_page(page, app_url, max_tokens=400)  # long replies: there is time to stop
        box = page.get_by_placeholder("Message every lane at once…")
        box.fill("Tell me everything about saving money, in detail.")
        box.press("Enter")
        stop = page.get_by_role("button", name="■ Stop this turn")
        stop.wait_for(timeout=TURN_TIMEOUT_MS)
        # wait for a lane to be visibly streaming (its cursor), then stop mid-reply
        page.get_by_text("▌").first.wait_for(timeout=TURN_TIMEOUT_MS)
        # nothing animates or polls the page's height while the lanes stream: Streamlit's
        # running badge is hidden and the input is not pinned to the bottom (both took the
        # model's cores)
        assert page.evaluate(QUIET_WHILE_STREAMING), "the page repaints while lanes stream"
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "main-stop-before.png"))
        stop.click()
        for title in LANES:
            column = lane_column(page, title)
            column.get_by_text("Stopped: this turn is not in this lane's memory.").wait_for(
                timeout=TURN_TIMEOUT_MS
            )
        wait_for_chat_input(page, TURN_TIMEOUT_MS)
        page.screenshot(path=str(ARTIFACTS / "main-stop-after.png"))
        send(page, "What is my name?", 2)
        body = shown_payload(page, "Full buffer", 2)
        # the stopped turn is in no lane's memory: the full buffer sends only the new message
        assert [m["role"] for m in body["messages"]] == ["system", "user"]
        assert body["messages"][-1]["content"] == "What is my name?"
