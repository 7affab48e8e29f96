"""The fact-survival page in a real browser, with the embedded model, to the heat maps.

Starts `streamlit run app.py` on a free loopback port, opens the survival page in headless
Chromium, narrows the grid (2 facts x 2 strategies x N in {2, 4}), runs it on the embedded
SmolLM2 model and waits for both heat maps. Saves test-artifacts/survival_page.png.
"""

from __future__ import annotations

import pytest

from tests.browser_support import ARTIFACTS, chromium, running_app

pytestmark = [pytest.mark.browser, pytest.mark.embedded]


@pytest.fixture(scope="module")
def app_url():
    with running_app(log=ARTIFACTS / "survival_browser_streamlit.log") as url:
        yield url


def pill(page, text: str):
    return page.locator('button[data-variant="pills"]').filter(
        has=page.get_by_text(text, exact=True)
    )


def test_a_small_grid_on_the_embedded_model_reaches_the_heat_maps(app_url):
    from playwright.sync_api import expect

    with chromium(1600, 1000) as page:
        page.goto(app_url + "/Fact_survival", wait_until="domcontentloaded")
        expect(page.get_by_role("heading", name="Fact survival")).to_be_visible(timeout=60_000)
        expect(page.get_by_text("in-payload is the fair test, recall is noisy")).to_be_visible()

        for name in ("token_window (budget=600)", "summary_buffer (budget=600)", "entity (k=2)",
                     "hybrid (budget=800)", "expenses", "fd"):  # fmt: skip
            pill(page, name).click()
        turns = page.get_by_role("textbox", name="Probe turns N")
        turns.fill("2, 4")
        page.get_by_role("button", name="Apply settings").click()
        expect(page.get_by_text("2 facts × 2 strategies × 2 probe turns = 8 probes")).to_be_visible(
            timeout=30_000
        )

        page.get_by_role("button", name="▶ Run").click()
        expect(page.get_by_text("Calls done")).to_be_visible(timeout=60_000)
        expect(page.get_by_text("Recalled by the model", exact=True)).to_be_visible(timeout=420_000)
        expect(page.get_by_text("In the payload (deterministic)")).to_be_visible()
        expect(page.get_by_role("button", name="Download CSV")).to_be_visible()

        # 8 cells (2 strategies x 2 N, two verdicts); window (k=3) still has turn 1 at
        # N=2 and N=4, so all four in-payload cells read 2/2
        heat = page.locator(".js-plotly-plot").first
        cells = [c for c in heat.locator("text").all_text_contents() if c[:1].isdigit()]
        assert len(cells) == 8 and cells.count("2/2") >= 4, cells
        assert "Results · Embedded (offline)" in page.locator("h3").all_text_contents()[-1]
        page.wait_for_timeout(1000)
        page.set_viewport_size({"width": 1600, "height": 2600})
        page.wait_for_timeout(1500)
        page.screenshot(path=str(ARTIFACTS / "survival_page.png"))
