"""The fact-survival page through AppTest: plan, run (payload only), heat maps, tables, cancel."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from engines.survival import SurvivalConfig, run_survival
from lanes import jobs
from memory.lane_spec import parse_spec
from memory.standins import StaticReply

PAGE = "../../pages/1_Fact_survival.py"  # AppTest resolves paths against this file's folder


def page() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    return at


def run_until(at: AppTest, done, timeout: float = 60.0) -> None:
    """Rerun the script until `done(at)` (the work happens in a background job)."""
    deadline = time.monotonic() + timeout
    while not done(at):
        assert time.monotonic() < deadline, "the page never showed the result"
        time.sleep(0.2)
        at.run()
        assert not at.exception, at.exception


def radio(at: AppTest, label: str):
    return next(r for r in at.radio if r.label == label)


def text_input(at: AppTest, label: str):
    return next(t for t in at.text_input if t.label == label)


def button(at: AppTest, label: str):
    return next(b for b in at.button if b.label == label)


def test_the_page_shows_the_plan_and_labels_the_embedded_model_honestly():
    at = page()
    assert at.title[0].value == "Fact survival"
    plan = " ".join(m.value for m in at.markdown)
    assert "4 facts × 6 strategies × 5 probe turns = 120 probes" in plan
    assert "model calls" in plan and "tokens" in plan
    assert any("in-payload is the fair test, recall is noisy" in i.value for i in at.info)
    assert button(at, "▶ Run").disabled is False
    # one request at a time on the embedded model: batched replies can differ run to run
    assert (
        next(c for c in at.checkbox if c.label == "Run the strategies in parallel").value is False
    )


def payload_only(at: AppTest, turns: str = "2, 5") -> AppTest:
    radio(at, "Model for probes and upkeep").set_value("none")
    text_input(at, "Probe turns N").set_value(turns)
    button(at, "Apply settings").click().run()
    assert not at.exception, at.exception
    return at


def test_a_payload_only_run_draws_the_heat_map_table_and_downloads():
    at = payload_only(page())
    assert "No model calls" in " ".join(m.value for m in at.markdown)
    assert not at.info  # the embedded model's note is only shown when it is used
    button(at, "▶ Run").click().run()
    run_until(at, lambda a: bool(a.session_state.survival_result))
    charts = at.get("plotly_chart")
    assert len(charts) == 2  # the in-payload heat map + tokens spent (no recall without a model)
    assert "Recalled by the model" not in charts[0].proto.spec
    table = at.dataframe[-1].value
    assert len(table) == 4 * 6 * 2
    window = table[(table["strategy"] == "window (k=3)") & (table["N"] == 5)]
    assert set(window["verdict"]) == {"not in payload"}
    full = table[table["strategy"] == "full"]
    assert set(full["verdict"]) == {"in payload"}
    downloads = at.get("download_button")
    assert [d.proto.label for d in downloads] == [
        "Download these facts as a facts file",
        "Download CSV",
        "Download JSON",
    ]
    assert any("stand-ins" in w.value for w in at.warning)  # said beside the figures
    result = at.session_state.survival_result
    assert result["mode"] == "payload-only" and len(result["rows"]) == 48


def test_strategy_and_fact_selection_shape_the_grid():
    at = page()
    at.button_group(key="strategy-pills").set_value(["full", "window (k=3)"])
    at.button_group(key="use-facts").set_value(["name"])
    text_input(at, "Extra variants").set_value("window:k=1")
    payload_only(at, "2, 3")
    assert "1 facts × 3 strategies × 2 probe turns = 6 probes" in " ".join(
        m.value for m in at.markdown
    )
    button(at, "▶ Run").click().run()
    run_until(at, lambda a: bool(a.session_state.survival_result))
    table = at.dataframe[-1].value
    assert list(table["strategy"].unique()) == ["full", "window (k=3)", "window (k=1)"]
    verdicts = dict(
        zip(zip(table["strategy"], table["N"], strict=True), table["verdict"], strict=True)
    )
    assert verdicts[("window (k=1)", 3)] == "not in payload"
    assert verdicts[("window (k=3)", 3)] == "in payload"


@pytest.mark.parametrize(
    ("turns", "message"),
    [("1, 5", "start at 2"), ("two", "whole numbers"), ("2, 2000", "up to 1000")],
)
def test_bad_settings_are_explained_and_nothing_runs(turns, message):
    at = payload_only(page(), turns)
    assert any(message in e.value for e in at.error)
    assert not [b for b in at.button if b.label == "▶ Run"]


def test_cancel_keeps_the_rows_so_far():
    at = page()
    cfg = SurvivalConfig(
        probe_turns=(2, 5, 10, 20), strategies=(parse_spec("full"), parse_spec("window"))
    )

    def slow(request, on_delta=None):
        time.sleep(0.05)
        return StaticReply("Your name is Chiru.")

    def work(job):
        return run_survival(
            cfg, send=slow, on_progress=job.set_progress, on_row=job.add,
            cancel=job.cancel_event, workers=1, expected_calls=32,
        )  # fmt: skip

    job = jobs.default_board().submit(work, name="test")
    at.session_state.survival_job = job.id
    at.run()
    cancel = button(at, "■ Cancel (keep results so far)")
    assert any("Calls done" in (p.proto.text or "") for p in at.get("progress"))
    time.sleep(0.3)
    cancel.click().run()
    assert job.wait(10)
    run_until(at, lambda a: bool(a.session_state.survival_result))
    result = at.session_state.survival_result
    assert result["cancelled"] is True
    assert 0 < len(result["rows"]) < 32
    assert any("Cancelled:" in w.value for w in at.warning)
    assert len(at.get("plotly_chart")) == 2  # the heat maps (one figure) and the tokens chart
    assert "Recalled by the model" in at.get("plotly_chart")[0].proto.spec


def test_custom_system_prompt_and_example_facts_reach_the_run():
    at = page()
    next(t for t in at.text_area if t.label == "System prompt").set_value("Be terse.")
    next(c for c in at.checkbox if c.label.startswith("Add two example facts")).check()
    at.button_group(key="strategy-pills").set_value(["full", "window (k=3)"])
    payload_only(at, "3, 12")
    assert "6 facts × 2 strategies × 2 probe turns = 24 probes" in " ".join(
        m.value for m in at.markdown
    )
    button(at, "▶ Run").click().run()
    run_until(at, lambda a: bool(a.session_state.survival_result))
    result = at.session_state.survival_result
    assert result["config"]["system_prompt"] == "Be terse."
    table = at.dataframe[-1].value
    rent = table[(table["fact"] == "rent") & (table["N"] == 12)]
    states = dict(zip(rent["strategy"], rent["payload"], strict=True))
    assert states == {"full": "both", "window (k=3)": "current"}
    fund = table[(table["fact"] == "emergency_fund") & (table["N"] == 3)]
    assert set(fund["said by"]) == {"assistant"} and set(fund["payload"]) == {"current"}


LOG = Path(__file__).resolve().parents[1] / "scenarios" / "fixtures" / "own_log.json"


def test_facts_from_your_own_log_are_suggested_ticked_and_probed_in_place():
    at = page()
    at.text_area(key="own_log_text").set_value(LOG.read_text())
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("6 facts" in m.value and "rule-based" in m.value for m in at.markdown)
    button(at, "Test the ticked facts on this conversation").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    settings = at.session_state.survival_settings
    assert settings["filler"] == "own" and len(settings["filler_turns"]) == 12
    assert [f["turn"] for f in settings["facts"]] == [1, 2, 4, 6, 7, 9]
    assert settings["probe_turns"] == "2, 5, 8, 10, 13"
    assert any("played as it was" in c.value for c in at.caption)
    payload_only(at, "2, 5, 8, 10, 13")
    assert "6 facts × 6 strategies × 5 probe turns" in " ".join(m.value for m in at.markdown)
    button(at, "▶ Run").click().run()
    run_until(at, lambda a: bool(a.session_state.survival_result))
    table = at.dataframe[-1].value
    window = table[table["strategy"] == "window (k=3)"].set_index(["fact", "N"])["payload"]
    assert window[("name", 2)] == "current" and window[("name", 5)] == "missing"
    full = table[table["strategy"] == "full"]
    assert set(full["payload"]) == {"current"}


def test_only_the_ticked_suggestions_become_facts_and_an_edited_probe_is_kept():
    import pandas as pd

    from engines.survival import suggest_facts
    from engines.transcripts import parse
    from ui.survival_form import suggestion_rows, ticked_facts

    found = [s.to_dict() for s in suggest_facts(parse(LOG, name=LOG.name))]
    rows = suggestion_rows(found, [f["key"] for f in found])
    assert list(rows["test"]) == [True] * 6
    edited = pd.DataFrame(rows)
    edited["test"] = [True, False, True, False, False, False]
    edited.loc[2, "probe"] = "What do I pay for the flat?"
    facts = ticked_facts(edited, found)
    assert [f["key"] for f in facts] == ["name", "rent"]
    assert facts[1]["probe"] == "What do I pay for the flat?" and "kind" not in facts[1]
