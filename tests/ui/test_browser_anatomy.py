"""The context anatomy in a real browser: after the FinCoach demo on the embedded model, and on a
30-turn saved conversation (fake provider) opened on the main page and in presentation mode.

Screenshots at 1280×720 and 1920×1080 go to test-artifacts/anatomy-*.png.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

import providers
from lanes.session import Session
from memory.lane_spec import LaneSpec
from memory.registry import DEFAULT_LANES
from memory.types import Completion, Request
from present.anatomy import PART_LABELS, UPKEEP_LABEL
from providers.fake import FakeTransport
from scenarios import filler, fincoach
from storage.store import Store
from tests.browser_support import ARTIFACTS, chromium, running_app
from tests.ui.test_browser_main import LANES, TURN_TIMEOUT_MS, lane_column, open_page, wait_for_turn

pytestmark = pytest.mark.browser
SIZES = ((1280, 720), (1920, 1080))

# the figures as Plotly holds them in the page: [title, [[trace name, y (lanes), x (tokens)]]]
TITLE_OF = "const title_of = el => (el.layout?.title?.text || '').replace(/<[^>]+>/g, '');"
READ_BARS = """(title) => { TITLE_OF return [...document.querySelectorAll('.js-plotly-plot')]
    .filter(el => title_of(el).startsWith(title))
    .map(el => el.data.filter(t => t.type === 'bar').map(t => [t.name, t.y, t.x])) }"""
CURVE = """([title, trace]) => { TITLE_OF
    const el = [...document.querySelectorAll('.js-plotly-plot')]
        .find(e => title_of(e).startsWith(title));
    return el.data.findIndex(t => t.name === trace);
}"""
READ_BARS, CURVE = (js.replace("TITLE_OF", TITLE_OF) for js in (READ_BARS, CURVE))


def wait_chart(page, title: str, timeout_ms: int = 60_000) -> None:
    page.wait_for_function(
        f"(title) => {{ {TITLE_OF} return [...document.querySelectorAll('.js-plotly-plot')]"
        ".some(el => title_of(el).startsWith(title)) }",
        arg=title,
        timeout=timeout_ms,
    )


def hover(page, title: str, trace: str, point: int, tries: int = 6) -> str:
    """Move the mouse onto one bar segment and return the hover label Plotly shows.

    The app may still rerun after a turn (upkeep finishing redraws the figures), which can
    replace the chart between the move and the label; so each try finds the bar afresh, comes
    in from outside the chart (Plotly only reacts to a move) and waits a few seconds.
    """
    curve = page.evaluate(CURVE, [title, trace])
    chart = page.locator(".js-plotly-plot", has_text=title).first
    label = chart.locator(".hoverlayer .hovertext").first
    for attempt in range(tries):
        chart.scroll_into_view_if_needed()
        bar = chart.locator(".barlayer .trace").nth(curve).locator(".point").nth(point)
        bar.scroll_into_view_if_needed()
        box = bar.bounding_box()
        assert box is not None
        page.mouse.move(1, 1)
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2, steps=4)
        try:
            label.wait_for(timeout=4_000)
            return label.text_content() or ""
        except PlaywrightTimeout:
            if attempt == tries - 1:
                raise
    raise AssertionError("unreachable")


def counted_in_table(page, title: str) -> int:
    """The 'counted' row of a lane's table (the request's content tokens, as the lane shows)."""
    cell = lane_column(page, title).locator("tr", has_text="counted").locator("td").nth(1)
    return int(re.sub(r"[^0-9]", "", cell.inner_text()))


def shoot(page, name: str, title: str) -> None:
    """Viewport screenshots with the named figure scrolled to the top, at both sizes."""
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(900)  # Plotly redraws on resize
        chart = page.locator(".js-plotly-plot", has_text=title).first
        chart.scroll_into_view_if_needed()
        page.wait_for_timeout(400)
        page.screenshot(path=str(ARTIFACTS / f"anatomy-{name}-{width}x{height}.png"))


@pytest.mark.embedded
@pytest.mark.timeout(3000)  # five turns x six lanes on the embedded model, on a busy machine
def test_the_demo_shows_what_fills_each_request(tmp_path):
    env = {"MEMORY_LAB_DB_URL": f"sqlite:///{tmp_path / 'sessions.db'}"}
    with running_app(env=env) as url, chromium() as page:
        open_page(page, url, max_tokens=32)
        page.get_by_role("button", name="▶ Play the FinCoach demo").click()
        wait_for_turn(page, 5, timeout_ms=5 * TURN_TIMEOUT_MS)
        page.get_by_text("What fills each request", exact=True).wait_for(timeout=60_000)
        wait_chart(page, "What each lane sends at turn 5")
        bars = page.evaluate(READ_BARS, "What each lane sends at turn 5")
        assert len(bars) == 1, bars
        traces = {name: (lanes, tokens) for name, lanes, tokens in bars[0]}
        labels = list(PART_LABELS.values())
        # one trace per part, then the reply reserve, the free space and the upkeep beside
        assert [t[0] for t in bars[0]] == [*labels, "Reply reserve", "Free space", UPKEEP_LABEL]
        filled = [sum(tokens[i] for _, _, tokens in bars[0][:-1]) for i in range(len(LANES))]
        assert len(set(filled)) == 1 and filled[0] >= 2048  # every bar spans the same window
        lanes = traces[labels[0]][0]
        assert lanes == LANES
        for i, title in enumerate(lanes):
            content = sum(traces[label][1][i] for label in labels if label != "Chat framing")
            assert content == counted_in_table(page, title), title
        # the full buffer's recent turns are turns 1-4, and hovering says so
        text = hover(page, "What each lane sends at turn 5", "Recent turns", 0)
        assert "turns 1–4" in text, text
        grid = page.evaluate(READ_BARS, "What fills each request, turn by turn")
        assert len(grid) == 1
        recent = [t for t in grid[0] if t[0] == "Recent turns"]
        assert len(recent) == 6  # one trace per part in each lane's panel
        ARTIFACTS.mkdir(exist_ok=True)
        shoot(page, "demo-turn5", "What each lane sends at turn 5")
        shoot(page, "demo-grid", "What fills each request, turn by turn")


class TalkativeFake(FakeTransport):
    """Upkeep calls that do something visible: facts are set, the summary grows."""

    def as_model_fn(self, settings):
        def model(request: Request) -> Completion:
            if "JSON" in request.system:
                user = request.messages[-1].content.rsplit("User:", 1)[-1]
                key = f"note_{sum(map(ord, user)) % 23}"
                return Completion(f'{{"set": {{"{key}": "{user[:40].strip()}"}}, "delete": []}}')
            return Completion(
                "Chiru, salary 1,20,000, saves for a house; discussed budgets, loans and "
                "insurance; " + request.messages[-1].content[-160:].replace("\n", " ")
            )

        return model


def thirty_turns(url: str) -> Session:
    store = Store(url)
    session = Session(
        system_prompt=fincoach.SYSTEM_PROMPT,
        lanes=[LaneSpec(n) for n in DEFAULT_LANES],
        provider=providers.preset("embedded").settings(max_tokens=200),
        transport=TalkativeFake(
            reply_fn=lambda r: "Here is a short answer about that, with a number or two. " * 2
        ),
    )
    store.track(session)
    texts = [*fincoach.DEMO_TURNS, *(t.user for t in filler.builtin(25))]
    for text in texts:
        session.run_turn(text)
    store.rename(session.id, "Thirty turns")
    return session


def test_a_thirty_turn_conversation_on_the_main_page_and_in_presentation(tmp_path):
    url = f"sqlite:///{tmp_path / 'sessions.sqlite3'}"
    session = thirty_turns(url)
    assert session.turn == 30
    ARTIFACTS.mkdir(exist_ok=True)
    with running_app(env={"MEMORY_LAB_DB_URL": url}) as app, chromium(1600, 1300) as page:
        page.goto(f"{app}/Sessions")
        page.get_by_role("button", name="Continue on the main page").click()
        page.get_by_text("What fills each request", exact=True).wait_for(timeout=90_000)
        wait_chart(page, "What each lane sends at turn 30")
        bars = page.evaluate(READ_BARS, "What each lane sends at turn 30")
        assert len(bars) == 1
        records = session.records()
        traces = {name: tokens for name, _, tokens in bars[0]}
        for i, name in enumerate(DEFAULT_LANES):
            total = sum(traces[label][i] for label in PART_LABELS.values())
            assert total == records[name][-1].counted_overhead
        text = hover(page, "What each lane sends at turn 30", "Summary", 3)
        summarised = records["summary_buffer"][-1].account.summarised
        assert f"summarises turns 1–{summarised[-1]}" in text, text
        shoot(page, "thirty-turn30", "What each lane sends at turn 30")
        shoot(page, "thirty-grid", "What fills each request, turn by turn")

        page.set_viewport_size({"width": 1600, "height": 1300})
        page.goto(f"{app}/Sessions")
        page.get_by_role("button", name="Present (presentation mode)").click()
        page.get_by_text("Turn 1 of 30").wait_for(timeout=60_000)
        wait_chart(page, "What each lane sends at turn 1")
        for turn in range(2, 31):
            page.get_by_role("button", name="Next ▶").click()
            page.get_by_text(f"Turn {turn} of 30").wait_for(timeout=30_000)
        page.get_by_text("Turn 30 of 30").wait_for(timeout=60_000)
        wait_chart(page, "What each lane sends at turn 30")
        shoot(page, "present-turn30", "What each lane sends at turn 30")
