"""The HTML report opens offline in headless Chromium with every chart drawn, and
presentation mode runs in the real app (screenshots under test-artifacts/)."""

from __future__ import annotations

import pytest

from engines.survival import SurvivalConfig, run_survival
from present import export
from scenarios import fincoach
from storage.store import SavedSession, Store
from tests.browser_support import ARTIFACTS, chromium, running_app
from tests.storage.store_support import make_session

pytestmark = pytest.mark.browser


def demo_session():
    session = make_session()
    for text in fincoach.DEMO_TURNS:
        session.run_turn(text)
    return session


def test_the_report_renders_every_chart_with_no_network():
    session = demo_session()
    survival = run_survival(SurvivalConfig(probe_turns=(2, 4, 6)).validate()).as_dict()
    saved = SavedSession.from_session(session, survival=survival)
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / "session_report.html"
    path.write_text(export.to_html(saved, payloads=True), encoding="utf-8")

    requests: list[str] = []
    with chromium(width=1400, height=1000) as page:

        def block(route):
            requests.append(route.request.url)
            if route.request.url.startswith("file://"):
                route.continue_()
            else:
                route.abort()

        page.route("**/*", block)
        page.goto(path.as_uri())
        page.wait_for_function(
            "() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= 9",
            timeout=30_000,
        )
        plots = page.eval_on_selector_all(
            ".js-plotly-plot",
            "els => els.map(e => [e.id, e.querySelectorAll('.trace, .hm').length])",
        )
        lines = page.eval_on_selector_all(
            "#fig-comparison .scatterlayer .trace", "els => els.length"
        )
        heat = page.eval_on_selector_all("#fig-survival-0 .hm", "els => els.length")
        page.screenshot(path=str(ARTIFACTS / "session_report.png"), full_page=True)
        page.screenshot(path=str(ARTIFACTS / "session_report_top.png"))
    assert [p for p in requests if not p.startswith("file://")] == []
    assert [p[0] for p in plots] == [
        "fig-comparison",
        "fig-cumulative",
        "fig-anatomy-turn",
        "fig-anatomy-grid",
        *[f"fig-lane-{i}" for i in range(6)],
        "fig-survival-0",
    ]
    assert all(drawn > 0 for _, drawn in plots)  # traces (or the heat map image) drawn
    assert lines == 6  # one line per strategy
    assert dict(plots)["fig-lane-0"] == 4  # upkeep bars, counted, billed, running total
    assert heat == 1


def test_presentation_mode_steps_through_a_saved_session_in_the_real_app(tmp_path):
    url = f"sqlite:///{tmp_path / 'sessions.sqlite3'}"
    store = Store(url)
    session = make_session()
    store.track(session)
    for text in fincoach.DEMO_TURNS:
        session.run_turn(text)
    store.rename(session.id, "FinCoach for the board")
    with running_app(env={"MEMORY_LAB_DB_URL": url}) as app, chromium(1600, 1300) as page:
        page.goto(f"{app}/Sessions")
        page.get_by_role("button", name="Present (presentation mode)").click()
        page.get_by_text("Turn 1 of 5").wait_for(timeout=60_000)
        page.get_by_role("button", name="Next ▶").click()
        page.get_by_text("Turn 2 of 5").wait_for(timeout=30_000)
        page.keyboard.press("ArrowRight")
        page.get_by_text("Turn 3 of 5").wait_for(timeout=30_000)
        page.wait_for_function(
            "() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= 8",
            timeout=30_000,
        )
        page.wait_for_timeout(800)
        heading = page.get_by_role("heading", name="FinCoach for the board")
        assert heading.is_visible()
        assert page.get_by_text("Payload · ").count() == 0  # payloads hidden
        page.screenshot(path=str(ARTIFACTS / "presentation_mode.png"))
