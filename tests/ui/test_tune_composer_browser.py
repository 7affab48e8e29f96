"""The Composer and Tune pages in a real browser: a composition built on the page (a block's
budget edited in the table) and the tuner's winner each become a lane on the main page.

Screenshots go to test-artifacts/composer-lane.png and tune-lane.png.
"""

from __future__ import annotations

import re

import pytest

from tests.browser_support import ARTIFACTS, chromium, running_app

pytestmark = pytest.mark.browser
ROW, HEADER = 35, 35  # the data editor's row and header heights, in pixels


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    data = tmp_path_factory.mktemp("data")
    with running_app(env={"MEMORY_LAB_DB_URL": f"sqlite:///{data / 'sessions.db'}"}) as url:
        yield url


def cells(page, row: int) -> dict[int, str]:
    """The text of one row of the first data grid, by column (the grid's accessible table)."""
    found = page.evaluate(
        "(row) => [...document.querySelectorAll('td[id^=glide-cell-]')]"
        ".filter(e => e.id.endsWith('-' + row)).map(e => [e.id, e.textContent])",
        row,
    )
    out: dict[int, str] = {}
    for cell_id, text in found:
        col = int(cell_id.split("-")[2])
        out.setdefault(col, text)  # the first grid on the page comes first
    return out


def edit_cell(page, row: int, right: int, value: str) -> None:
    """Type `value` into the blocks table: row `row`, `right` columns right of 'order'."""
    canvas = page.locator("[data-testid='stDataFrame'] canvas").first
    box = canvas.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + 60, box["y"] + HEADER + row * ROW + ROW / 2)
    for _ in range(right):
        page.keyboard.press("ArrowRight")
    page.wait_for_timeout(500)
    page.keyboard.press("Enter")  # open the cell's editor
    page.wait_for_timeout(500)
    page.keyboard.type(value)
    page.wait_for_timeout(500)
    page.keyboard.press("Enter")


def edit_cell_until(page, row: int, right: int, value: str) -> None:
    """`edit_cell`, then wait for the grid to show `value` there; typed again if it does not
    (a click on the canvas while the page still settles can land on another cell)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    shown = (
        f"() => document.querySelector('#glide-cell-{right + 1}-{row}')?.textContent === '{value}'"
    )
    for attempt in range(3):
        edit_cell(page, row, right, value)
        try:
            page.wait_for_function(shown, timeout=15_000)
            return
        except PlaywrightTimeout:
            if attempt == 2:
                raise
            page.keyboard.press("Escape")
            page.wait_for_timeout(1000)


def fill(page, label: str, value: str) -> None:
    field = page.get_by_label(label, exact=True)
    field.fill(value)
    field.press("Enter")
    page.wait_for_timeout(800)


def test_a_composition_built_on_the_page_becomes_a_lane(app_url):
    with chromium(1600, 1500) as page:
        page.goto(f"{app_url}/Composer")
        page.wait_for_selector(".js-plotly-plot", timeout=90_000)
        # the grid attaches its accessible cells before it fills them: wait for any text
        page.wait_for_function(
            "() => document.querySelector('#glide-cell-2-3')?.textContent", timeout=30_000
        )
        assert cells(page, 3)[2] == "recent"
        edit_cell_until(page, 3, 2, "300")  # the recent block's own budget
        fill(page, "Name (lowercase letters, digits, _)", "lean_mix")
        fill(page, "Title (shown on lanes)", "Lean mix")
        page.get_by_text("Lean mix (this composition)").first.wait_for(timeout=30_000)
        payload = page.locator("[data-testid='stCode']").first.inner_text()
        assert '"role": "system"' in payload
        page.get_by_role("button", name="Add as lane").click()
        page.get_by_text(re.compile(r"lean_mix is registered\. Added the lane")).wait_for(
            timeout=30_000
        )
        page.screenshot(path=str(ARTIFACTS / "composer-lane.png"))
        page.get_by_role("link", name="Open Compare strategies →").click()
        page.get_by_role("heading", name="Lean mix").wait_for(timeout=60_000)
        page.get_by_text(re.compile(r"Added the lane lean_mix")).first.wait_for(timeout=10_000)


def test_the_tuner_runs_and_its_winner_becomes_a_lane(app_url):
    with chromium(1600, 1500) as page:
        page.goto(f"{app_url}/Tune")
        page.get_by_role("button", name="Apply settings").wait_for(timeout=90_000)
        fill(page, "Probe turns N", "2, 5, 10")
        page.get_by_role("button", name="Apply settings").click()
        page.get_by_text(re.compile("4 facts probed at N = 2, 5, 10")).wait_for(timeout=30_000)
        page.get_by_role("button", name="▶ Search").click()
        found = page.get_by_text(re.compile("Cheapest setting that meets the target"))
        found.wait_for(timeout=120_000)
        winner = found.locator("strong").first.inner_text()  # e.g. "token_window (budget=389)"
        page.wait_for_selector(".js-plotly-plot", timeout=30_000)
        names = page.evaluate(
            "() => [...document.querySelectorAll('.js-plotly-plot')]"
            ".flatMap(el => el.data.map(t => t.name))"
        )
        assert "cheapest meeting the target" in names and "frontier" in names
        page.get_by_role("button", name="Add as lane").click()
        page.get_by_text(re.compile("Added the lane")).first.wait_for(timeout=30_000)
        page.screenshot(path=str(ARTIFACTS / "tune-lane.png"))
        page.get_by_role("link", name="Open Compare strategies →").click()
        setting = winner.split("(", 1)[1].rstrip(")")  # "budget=389"
        page.get_by_text(re.compile(re.escape(setting))).first.wait_for(timeout=60_000)
