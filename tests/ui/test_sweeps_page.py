"""The Sweeps page through AppTest: estimate, confirm, submit to the fake batch endpoint, then a
fresh page (a reopened app) lists the sweep, polls, collects and draws the heat maps."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from storage.store import SweepStore
from tests.providers.fake_batch_server import FakeBatchServer
from tests.ui.conftest import shown

PAGE = "../../pages/5_Sweeps.py"


@pytest.fixture
def setup(tmp_path, monkeypatch) -> Iterator[tuple[FakeBatchServer, str]]:
    server = FakeBatchServer().start()
    db = f"sqlite:///{tmp_path / 'page.sqlite3'}"
    monkeypatch.setenv("MEMORY_LAB_DB_URL", db)
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    st.cache_resource.clear()
    yield server, db
    st.cache_resource.clear()
    server.stop()


def page() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    return at


def test_submit_close_reopen_collect(setup):
    server, db = setup
    at = page()
    assert any("No sweeps yet" in i.value for i in at.info)
    at.selectbox(key="sweep-preset").set_value("anthropic").run()
    at.text_input(key="sweep-url").set_value(server.url).run()
    at.text_input(key="sweep-key").set_value("page-test-key-0123456789").run()
    at.text_input(key="sweep-turns").set_value("2,6").run()
    at.multiselect(key="sweep-strategies").set_value(["full", "window"]).run()
    estimate = at.code[0].value
    assert "batch requests" in estimate and "Upkeep:" in estimate and "$" in estimate
    submit = next(b for b in at.button if b.label == "Submit the sweep")
    assert submit.disabled  # not before the estimate is confirmed
    at.checkbox(key="sweep-confirm").check().run()
    next(b for b in at.button if b.label == "Submit the sweep").click().run()
    assert not at.exception, at.exception
    assert any("Submitted" in s.value for s in at.success)
    assert len(server.batches) == 1
    for path in Path(db.removeprefix("sqlite:///")).parent.iterdir():  # the database and its WAL
        assert b"page-test-key" not in path.read_bytes()

    # the app is closed and reopened: a new script run with nothing in session state
    st.cache_resource.clear()
    server.polls_before_done = 0
    again = page()
    assert SweepStore(db).list_sweeps()[0].status == "submitted"
    # the saved sweep never chooses its endpoint: it is typed again before anything is sent
    assert any("type that endpoint again" in shown(e.value) for e in again.error)
    again.text_input(key="sweep-open-url").set_value(server.url).run()
    # no key yet: the automatic poll says why it could not poll, and nothing breaks
    assert any("ANTHROPIC_API_KEY" in shown(w.value) for w in again.warning)
    assert not again.get("plotly_chart")
    # with the key, opening the sweep polls and collects it without a click
    again.text_input(key="sweep-key").set_value("page-test-key-0123456789").run()
    assert not again.exception, again.exception
    assert len(again.get("plotly_chart")) == 2  # heat maps and tokens spent
    assert any("Results" in h.value for h in again.subheader)
    assert SweepStore(db).list_sweeps()[0].status == "collected"


def test_two_collected_sweeps_compared_on_the_page(setup):
    from engines.survival import DEFAULT_FACTS, SurvivalConfig
    from engines.sweep import prepare_sweep
    from engines.sweep_run import refresh, start
    from memory.lane_spec import LaneSpec
    from providers import preset

    server, db = setup
    server.polls_before_done = 0
    config = SurvivalConfig(facts=DEFAULT_FACTS[:2], probe_turns=(2, 6),
                            strategies=(LaneSpec("full"), LaneSpec("window", {"k": 2})))  # fmt: skip
    store = SweepStore(db)
    for model in ("claude-haiku-4-5", "claude-sonnet-4-5"):
        settings = preset("anthropic").settings(model, base_url=server.url, api_key="k" * 20)
        refresh(store, start(store, prepare_sweep(config, settings)), settings)
    at = page()
    at.text_input(key="sweep-url").set_value(server.url).run()  # the endpoint, typed again
    assert len(at.get("plotly_chart")) == 2  # the open sweep's heat maps and tokens
    picker = at.multiselect(key="sweep-compare")
    picker.set_value(picker.options).run()
    assert not at.exception, at.exception
    charts = at.get("plotly_chart")
    assert len(charts) == 3
    rows = json.loads(charts[-1].proto.spec)["data"][0]["y"]
    assert set(rows) == {"full · claude-haiku-4-5", "window (k=2) · claude-haiku-4-5",
                          "full · claude-sonnet-4-5", "window (k=2) · claude-sonnet-4-5"}  # fmt: skip


def test_a_recall_sweep_on_two_models_is_submitted_then_collected(setup):
    server, db = setup
    server.polls_before_done = 0
    at = page()
    at.radio(key="sweep-kind").set_value("recall").run()
    at.selectbox(key="sweep-preset").set_value("anthropic").run()
    at.text_input(key="sweep-url").set_value(server.url).run()
    at.text_input(key="sweep-key").set_value("page-test-key-0123456789").run()
    at.number_input(key="sweep-sessions").set_value(6).run()
    at.multiselect(key="sweep-settings").set_value(["full", "window (k=10)", "entity"]).run()
    at.multiselect(key="sweep-models-anthropic").set_value(
        ["claude-haiku-4-5", "claude-sonnet-4-5"]
    ).run()
    estimate = at.code[0].value
    assert "claude-haiku-4-5" in estimate and "claude-sonnet-4-5" in estimate
    assert "all 2 models:" in estimate
    at.checkbox(key="sweep-confirm").check().run()
    next(b for b in at.button if b.label == "Submit the sweep").click().run()
    assert not at.exception, at.exception
    assert len(server.batches) == 1  # both models in one Anthropic batch

    st.cache_resource.clear()
    again = page()
    again.text_input(key="sweep-url").set_value(server.url).run()
    again.text_input(key="sweep-key").set_value("page-test-key-0123456789").run()
    assert not again.exception, again.exception
    assert SweepStore(db).list_sweeps()[0].kind == "recall"
    assert SweepStore(db).list_sweeps()[0].status == "collected"
    assert len(again.get("plotly_chart")) == 1  # the recall frontier
    table = again.dataframe[-1].value
    assert "answered %" in table.columns
    assert list(table["strategy (setting)"]) == [
        f"{s} · {m}"
        for m in ("claude-haiku-4-5", "claude-sonnet-4-5")
        for s in ("full", "window (k=10)", "entity")
    ]
    assert table["evidence kept %"].iloc[0] == 100.0
