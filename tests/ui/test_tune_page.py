"""The Tune page through AppTest: a small search, its frontier and winner, cancel, bad
settings, and "Add as lane" putting the winner on the main page."""

from __future__ import annotations

import json
import re

import pytest
from streamlit.testing.v1 import AppTest

from engines.survival import SurvivalConfig
from engines.tune import Target, tune
from memory.lane_spec import LaneSpec
from tests.engines.test_tune_evaluators import facts_json, transcript_text
from tests.ui.conftest import ROOT, shown
from tests.ui.test_survival_page import button, run_until, text_input
from ui.app_state import AppConfig
from ui.navigation import MAIN_PAGE

PAGE = "pages/6_Tune.py"
SMALL = ("window", "token_window")


def app_page(path: str = PAGE) -> AppTest:
    """The whole app (navigation included), switched to the page `path`."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page(path)
    at.run()
    assert not at.exception, at.exception
    return at


def apply(
    at: AppTest, *, turns: str | None = "2, 5, 10", strategies=SMALL, at_n: str | None = ""
) -> AppTest:
    if turns is not None:
        text_input(at, "Probe turns N").set_value(turns)
    if at_n is not None:
        text_input(at, "Judge the target at N (blank: everywhere judged)").set_value(at_n)
    at.button_group(key="tune-strategies").set_value(list(strategies))
    button(at, "Apply settings").click().run()
    assert not at.exception, at.exception
    return at


def search(at: AppTest) -> AppTest:
    button(at, "▶ Search").click().run()
    run_until(at, lambda a: bool(a.session_state.tune_result), timeout=120)
    return at


def test_a_small_search_shows_why_it_stopped_the_frontier_and_the_winner():
    at = search(apply(app_page()))
    expected = tune(SurvivalConfig(probe_turns=(2, 5, 10)), Target(1.0), strategies=SMALL)
    assert expected.winner is not None
    text = " ".join(m.value for m in at.markdown)
    assert f"**{len(expected.trials)} settings tried**" in text
    assert "stopped because **every planned setting was tried**" in text
    assert any(expected.winner.label in shown(s.value) for s in at.success)
    figure = json.loads(at.get("plotly_chart")[0].proto.spec)
    star = next(t for t in figure["data"] if t["name"] == "cheapest meeting the target")
    assert star["x"] == [pytest.approx(expected.winner.tokens_per_turn, abs=0.01)]
    assert {t["name"] for t in figure["data"]} >= {*SMALL, "frontier"}
    table = at.dataframe[0].value
    assert len(table) == len(expected.trials)
    assert list(table.loc[table["winner"], "setting"]) == [expected.winner.label]
    # no tried setting that met the target was cheaper than the one starred
    met = table[table["meets target"]]
    assert met["tokens/turn"].min() == table.loc[table["winner"], "tokens/turn"].iloc[0]
    labels = [d.label for d in at.get("download_button")]
    assert "Download CSV" in labels and "Download JSON" in labels


def test_cancel_stops_the_search_and_keeps_what_was_tried():
    at = apply(app_page(), turns="2, 200, 600, 1000", strategies=["full", "summary_buffer"])
    button(at, "▶ Search").click().run()
    assert any("settings tried" in (p.proto.text or "") or "Starting" in (p.proto.text or "")
               for p in at.get("progress"))  # fmt: skip
    at.button(key="tune-cancel").click().run()
    run_until(at, lambda a: bool(a.session_state.tune_result), timeout=120)
    result = at.session_state.tune_result
    assert result["stop_reason"] == "cancelled"
    assert "stopped because **cancelled**" in " ".join(m.value for m in at.markdown)
    assert len(at.dataframe[0].value) == result["tried"]


@pytest.mark.parametrize(
    ("turns", "at_n", "message"),
    [
        ("2, x", "", "probe turns are whole numbers"),
        ("2, 5", "7", "N=7, which is not a probe turn"),
        ("1", "", "probe turns start at 2"),
    ],
)
def test_bad_settings_are_named_and_nothing_runs(turns, at_n, message):
    at = apply(app_page(), turns=turns, at_n=at_n)
    assert any(message in shown(e.value) for e in at.error), [shown(e.value) for e in at.error]
    assert not [b for b in at.button if b.label == "▶ Search"]


def test_a_malformed_facts_file_is_named_and_the_facts_are_kept():
    at = app_page()
    at.file_uploader(key="tune-facts-file").upload("facts.json", b"{not json", "application/json")
    button(at, "Apply settings").click().run()
    assert any("Could not read facts.json" in shown(e.value) and "not valid JSON" in shown(e.value)
               for e in at.error)  # fmt: skip
    assert len(at.session_state.tune_settings.use_facts) == 4  # FinCoach's, untouched


def test_add_as_lane_puts_the_winner_on_the_main_page_next_to_the_lanes():
    at = app_page()
    start = (LaneSpec("full"), LaneSpec("token_window", {"budget": 600}))
    at.session_state["config"] = AppConfig.default().replace(lanes=start)
    at = search(apply(at, at_n="10"))
    winner = at.session_state.tune_result["winner"]
    assert winner["strategy"] == "token_window" and winner["params"] != {"budget": 600}
    at.button(key="tune-add-lane").click().run()
    assert any("Added the lane" in s.value for s in at.success)
    lanes = at.session_state.config.lanes
    assert lanes[:2] == start and len(lanes) == 3  # the same strategy twice, two settings
    assert lanes[2].name == "token_window" and lanes[2].params == winner["params"]
    at.button(key="tune-add-lane").click().run()  # twice: not added again
    assert any("already on the main page" in s.value for s in at.success)
    assert len(at.session_state.config.lanes) == 3
    at.switch_page(MAIN_PAGE)
    at.run()
    assert not at.exception, at.exception
    headers = [m.value for m in at.markdown if m.value.startswith("#### ")]
    assert len(headers) == 3 and headers[0] == "#### Full buffer"
    assert any("Added the lane" in i.value for i in at.info)
    budget = f"budget={winner['params']['budget']}"
    assert any(budget in shown(c.value) for c in at.caption), [shown(c.value) for c in at.caption]


def source(at: AppTest, name: str) -> AppTest:
    at.radio(key="tune-source").set_value(name).run()
    assert not at.exception, at.exception
    return at


def uploader(at: AppTest, label_start: str):
    return next(u for u in at.file_uploader if u.label.startswith(label_start))


def test_the_long_memory_benchmark_is_tuned_on_its_evidence_turns():
    at = source(app_page(), "longmem")
    next(n for n in at.number_input if n.label.startswith("Sessions")).set_value(6)
    at = search(apply(at, turns=None, at_n=None))
    result = at.session_state.tune_result
    assert result["kept_counts"] == "evidence turns"
    assert result["target"]["share"] == 0.9  # questions start from the 90 % evidence
    assert "the long-memory benchmark, seed 0" in result["conversation"]
    assert any("evidence turns kept" in s.value for s in at.success)
    figure = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert figure["layout"]["yaxis"]["title"]["text"] == "evidence turns kept in the payload (%)"
    assert "tokens/request" in at.dataframe[0].value.columns
    assert any("offered for the FinCoach-style facts" in c.value for c in at.caption)


def test_a_transcript_that_states_the_facts_is_tuned_with_its_facts_file():
    at = source(app_page(), "transcript")
    uploader(at, "Transcript").upload("chat.txt", transcript_text().encode(), "text/plain")
    uploader(at, "Facts file").upload("f.json", facts_json().encode(), "application/json")
    at = search(apply(at, turns="10, 20, 31"))
    result = at.session_state.tune_result
    assert "on chat.txt (30 turns)" in result["conversation"]
    winner = result["winner"]
    assert winner is not None and winner["meets_target"]
    assert any(winner["label"] in shown(s.value) for s in at.success)


def test_a_questions_file_that_is_not_json_is_named_and_nothing_runs():
    at = source(app_page(), "questions")
    uploader(at, "Transcript").upload("chat.txt", transcript_text().encode(), "text/plain")
    uploader(at, "Questions file").upload("q.json", b"[oops", "application/json")
    at = apply(at, turns=None)
    assert any(e.value.startswith("Cannot search:") and "JSON" in e.value for e in at.error), [
        e.value for e in at.error
    ]
    assert not [b for b in at.button if b.label == "▶ Search"]


def test_the_confirmation_shows_its_cost_first_then_the_models_recall(monkeypatch):
    from lanes import jobs
    from memory.standins import ExtractiveSummariser, fixed_sender
    from ui import tune_view

    sent = []

    def bind(settings, upkeep=None):
        def send(request, on_delta=None):
            sent.append(request)
            return fixed_sender("Your name is Chiru and you earn ₹1,20,000.")(request, on_delta)

        return send, ExtractiveSummariser()

    monkeypatch.setattr(tune_view, "bind_settings", bind)
    at = search(apply(app_page(), at_n="10"))
    plan = next(m.value for m in at.markdown if "Nothing is sent until you press" in m.value)
    calls = int(re.search(r"\*\*([\d,]+) calls\*\*", plan).group(1).replace(",", ""))
    assert "free (a local model)" in plan and not sent  # the embedded model costs nothing
    button(at, f"Run the confirmation ({calls:,} calls)").click().run()
    job = jobs.default_board().get(at.session_state.tune_confirm_job)
    assert job is not None and job.wait(60)
    at.run()
    assert not at.exception, at.exception
    recalled = next(m.value for m in at.markdown if m.value.startswith("**Recalled by the model:"))
    rows = next(d.value for d in at.dataframe if "recalled" in d.value.columns)
    assert f"/{len(rows)}** probes" in recalled and len(sent) > 0
    assert set(rows["recalled"]) <= {"current", "missing", "stale", "both"}


def test_edit_as_blocks_opens_the_winner_in_the_composer():
    at = search(apply(app_page(), at_n="10"))
    winner = at.session_state.tune_result["winner"]
    at.button(key="tune-edit-blocks").click().run()
    assert not at.exception, at.exception
    version = at.session_state.composer_version
    assert at.text_input(key=f"composer-name-{version}").value == f"composed_{winner['strategy']}"
    budget = at.number_input(key=f"composer-budget-{version}").value
    assert budget == winner["params"]["budget"]
    assert any(f"From the tuner: {winner['label']}" in shown(s.value) for s in at.success)


def test_a_registered_composition_is_searched_like_any_strategy(register):
    from dataclasses import replace

    from memory.registry import builtin_composition

    register(replace(builtin_composition("token_window"), name="my_window", title="My window"))
    at = app_page()
    assert "My window" in at.button_group(key="tune-strategies").options
    at = search(apply(at, strategies=["token_window", "my_window"], at_n="10"))
    trials = at.session_state.tune_result["trials"]
    assert {t["strategy"] for t in trials} == {"token_window", "my_window"}
    best = {
        name: min(
            t["tokens_per_turn"] for t in trials if t["strategy"] == name and t["meets_target"]
        )
        for name in ("token_window", "my_window")
    }
    assert best["my_window"] == best["token_window"]  # the same strategy, as blocks
