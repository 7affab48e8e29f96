"""Your own history in a real browser: a ChatGPT export picked on the Sessions page, facts
suggested from an imported log on the survival page, a LoCoMo-format file on the Long recall
page. No model is needed. Saves test-artifacts/history_sessions_pick.png,
history_survival_suggested.png and history_long_recall_locomo.png.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser_support import ARTIFACTS, chromium, running_app, wait_for_idle

pytestmark = [pytest.mark.browser]

FIXTURES = Path(__file__).resolve().parents[1] / "scenarios" / "fixtures"


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    db = tmp_path_factory.mktemp("db") / "sessions.sqlite3"
    with running_app(
        env={"MEMORY_LAB_DB_URL": f"sqlite:///{db}"},
        log=ARTIFACTS / "history_browser_streamlit.log",
    ) as url:
        yield url


def shot(page, name: str) -> None:
    """Once every table on screen is drawn (the grid sizes itself after its data arrives)."""
    ARTIFACTS.mkdir(exist_ok=True)
    page.wait_for_function(
        """() => !document.querySelector('[data-testid=stSkeleton]') &&
                 [...document.querySelectorAll('[data-testid=stDataFrame]')].every(
                     e => [...e.querySelectorAll('canvas')].some(
                         c => c.getBoundingClientRect().width > 400))""",
        timeout=30_000,
    )
    page.wait_for_timeout(1500)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def test_sessions_lists_a_chatgpt_export_and_imports_the_one_picked(app_url):
    from playwright.sync_api import expect

    with chromium(1500, 1300) as page:
        page.goto(app_url + "/Sessions", wait_until="domcontentloaded")
        page.get_by_role("tab", name="Import a transcript").click()
        page.locator("input[type=file]").first.set_input_files(
            str(FIXTURES / "chatgpt_export.json")
        )
        expect(page.get_by_text("holds 3 conversations: pick one.")).to_be_visible(timeout=60_000)
        wait_for_idle(page)
        picked = page.get_by_role("combobox", name="Conversation")
        expect(picked).to_have_value("#1 · Budget plan · 2024-06-01 · 2 turns", timeout=30_000)
        picked.click()
        page.get_by_role("option", name="#2 · Trip to Goa · 2024-06-02 · 1 turn").click()
        expect(page.get_by_text("Read 1 turn, 1 recorded reply")).to_be_visible(timeout=30_000)
        expect(page.get_by_text("Conversation 2: Trip to Goa · 2024-06-02")).to_be_visible()
        wait_for_idle(page)
        page.get_by_text("holds 3 conversations: pick one.").scroll_into_view_if_needed()
        shot(page, "history_sessions_pick")
        search = page.get_by_label("Search titles and ids")
        search.fill("edited")
        search.press("Enter")
        expect(page.get_by_text("Read 2 turns, 1 recorded reply")).to_be_visible(timeout=30_000)
        expect(picked).to_have_value("#3 · Edited prompt · 2024-06-03 · 2 turns")


def test_survival_suggests_the_facts_of_an_imported_log(app_url):
    from playwright.sync_api import expect

    with chromium(1500, 1500) as page:
        page.goto(app_url + "/Fact_survival", wait_until="domcontentloaded")
        expect(page.get_by_role("heading", name="Fact survival")).to_be_visible(timeout=60_000)
        page.get_by_text("Probe facts from your own log").click()
        page.locator("input[type=file]").first.set_input_files(str(FIXTURES / "own_log.json"))
        expect(page.get_by_text("the user stated (rule-based, no model)")).to_be_visible(
            timeout=60_000
        )
        expect(page.get_by_text("6 of 6 ticked · probed at N = 2, 5, 8, 10, 13")).to_be_visible()
        wait_for_idle(page)
        page.get_by_role("button", name="Test the ticked facts on this conversation").click()
        expect(page.get_by_text("played as it was; each fact is probed")).to_be_visible(
            timeout=60_000
        )
        expect(page.get_by_text("6 facts × 6 strategies × 5 probe turns")).to_be_visible()
        wait_for_idle(page)
        page.get_by_text("Probe facts from your own log").scroll_into_view_if_needed()
        shot(page, "history_survival_suggested")


def test_long_recall_runs_a_locomo_file(app_url):
    from playwright.sync_api import expect

    with chromium(1900, 1300) as page:
        page.goto(app_url + "/Long_recall", wait_until="domcontentloaded")
        expect(page.get_by_role("heading", name="Long-conversation recall")).to_be_visible(
            timeout=60_000
        )
        page.get_by_text("A benchmark file (LoCoMo, LongMemEval").click()
        wait_for_idle(page)
        page.locator("input[type=file]").first.set_input_files(str(FIXTURES / "locomo_sample.json"))
        expect(page.get_by_text("LoCoMo: 2 conversation(s), 10 questions.")).to_be_visible(
            timeout=60_000
        )
        wait_for_idle(page)
        page.get_by_role("button", name="Run", exact=True).click()
        expect(page.get_by_text("LoCoMo · 10 questions, payload only")).to_be_visible(
            timeout=120_000
        )
        expect(page.get_by_role("button", name="Download the table (CSV)")).to_be_visible(
            timeout=60_000
        )
        wait_for_idle(page)
        page.get_by_text("LoCoMo · 10 questions, payload only").scroll_into_view_if_needed()
        shot(page, "history_long_recall_locomo")
