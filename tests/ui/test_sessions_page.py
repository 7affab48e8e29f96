"""The sessions page and the main page's saving, through Streamlit's AppTest (fake transport:
no model). The store is the per-test SQLite file set in tests/conftest.py."""

from __future__ import annotations

import json
import time

from streamlit.testing.v1 import AppTest

from scenarios import fincoach
from storage.store import Store
from tests.storage.store_support import make_session
from tests.ui.conftest import ROOT
from tests.ui.conftest import shown as text_of
from ui import navigation

APP = str(ROOT / "app.py")
PAGE = "pages/3_Sessions.py"


def store() -> Store:
    return Store()  # $MEMORY_LAB_DB_URL: the same file the pages use


def saved_demo(transport, turns: int = 3, name: str | None = None):
    session = make_session(transport)
    store().track(session)
    for text in fincoach.DEMO_TURNS[:turns]:
        session.run_turn(text)
    if name:
        store().rename(session.id, name)
    return session


def sessions_page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    return at


def button(at: AppTest, label: str):
    return next(b for b in at.button if b.label == label)


def ok(at: AppTest) -> AppTest:
    assert not at.exception, at.exception
    return at


def shown(at: AppTest, text: str) -> bool:
    return any(text in m.value for m in at.markdown)


def wait_main_page(at: AppTest) -> AppTest:
    deadline = time.monotonic() + 30
    while at.session_state["session"].pending_lanes():
        assert time.monotonic() < deadline, "the lanes never finished"
        time.sleep(0.1)
        ok(at.run())
    return at


def test_the_list_shows_saved_sessions_and_opens_one_read_only(fake_transport):
    saved_demo(fake_transport, 3, "Board demo")
    saved_demo(fake_transport, 2)
    at = sessions_page()
    table = at.dataframe[0].value
    assert list(table["Name"]) == [  # the most recently updated first
        "Hi! I'm Chiru. My monthly take-home salary is ₹1,20,000.",
        "Board demo",
    ]
    assert list(table["Turns"]) == [2, 3]
    assert "Full buffer, Sliding window" in table["Strategies"][0]
    assert (table["Tokens"] > 0).all() and set(table["Status"]) == {"complete"}

    at.selectbox[0].select(next(o for o in at.selectbox[0].options if "Board demo" in o))
    ok(at.run())
    ok(button(at, "Open (read-only)").click().run())
    assert at.subheader[0].value == "Board demo"
    assert len(at.get("plotly_chart")) == 2 + 6  # comparison, cumulative, one per lane
    summary = at.dataframe[1].value
    assert list(summary["Turns ok"]) == [3] * 6
    assert len(at.expander) >= 3  # one per turn (plus rename/delete)
    assert not any(c.value.lstrip().startswith("{") for c in at.code)  # payloads hidden
    assert [d.label for d in at.get("download_button")] == [
        "HTML report",
        "Markdown summary",
        "CSV (per turn)",
        "JSON (whole session)",
    ]


def test_rename_and_delete_with_confirmation(fake_transport):
    session = saved_demo(fake_transport, 1)
    at = sessions_page()
    at.text_input(key=f"rename-{session.id}").set_value("Renamed for the board")
    ok(button(at, "Rename").click().run())
    assert store().info(session.id).name == "Renamed for the board"
    assert any("Renamed" in s.value for s in at.success)

    ok(button(at, "Delete…").click().run())
    assert any("cannot be undone" in w.value for w in at.warning)
    assert store().info(session.id)  # not yet
    ok(button(at, "Cancel").click().run())
    assert not any("cannot be undone" in w.value for w in at.warning)
    ok(button(at, "Delete…").click().run())
    ok(button(at, "Yes, delete it").click().run())
    assert store().list() == []
    assert any("No saved sessions yet" in i.value for i in at.info)


def test_continue_and_present_put_the_session_on_the_main_page(fake_transport):
    session = saved_demo(fake_transport, 3)
    at = sessions_page()
    ok(button(at, "Present (presentation mode)").click().run())
    restored = at.session_state["session"]
    assert restored.id == session.id and restored.turn == 3
    # saved on OpenAI, continued on the provider chosen here (a file never picks it)
    assert at.session_state["config"].provider.preset == "embedded"
    assert at.session_state["presentation"] is True

    ok(at.switch_page(navigation.MAIN_PAGE).run())  # what st.switch_page does in the app
    assert shown(at, "Turn 1 of 3")
    assert not [c for c in at.code if c.value.lstrip().startswith("{")]  # no payloads
    charts = at.get("plotly_chart")
    assert len(charts) == 2 + 1 + 6  # comparison, cumulative, anatomy at the turn, six lanes
    comparison = json.loads(charts[0].proto.spec)
    assert all(list(t["x"]) == [1] for t in comparison["data"])  # drawn up to turn 1
    ok(button(at, "Next ▶").click().run())
    assert shown(at, "Turn 2 of 3")
    ok(button(at, "Next ▶").click().run())
    assert button(at, "Next ▶").disabled
    ok(button(at, "◀ Previous").click().run())
    assert shown(at, "Turn 2 of 3")

    ok(button(at, "Exit presentation").click().run())
    assert at.chat_input  # the main page again, continuing the saved conversation
    at.chat_input[0].set_value("And what about my FD?").run()
    wait_main_page(ok(at))
    info = store().info(session.id)
    assert (info.turns, info.lane_turns) == (4, 24)
    assert any("Saved as it runs · 4 turns" in c.value for c in at.caption)


def test_import_checks_the_file_and_replays_it_with_recorded_replies(fake_transport):
    at = sessions_page()
    at.text_area(key="import_text").set_value(
        '[{"role": "user", "content": "hi"}, {"role": "robot", "content": "x"}]'
    )
    ok(at.run())
    assert any(
        "message index 1: role 'robot' is not supported" in text_of(e.value) for e in at.error
    )
    assert store().list() == []  # a bad file changes nothing

    transcript = [
        {"role": "system", "content": "You are a support bot."},
        {"role": "user", "content": "My order 123 is late."},
        {"role": "assistant", "content": "Sorry! Let me check order 123."},
        {"role": "user", "content": "Any news?"},
        {"role": "assistant", "content": "It ships tomorrow."},
    ]
    at.text_area(key="import_text").set_value(json.dumps(transcript))
    ok(at.run())
    assert any("Read 2 turns, 2 recorded replies" in text_of(s.value) for s in at.success)
    at.button_group(key="replay-strategies").set_value(["full", "window"])
    ok(next(b for b in at.button if b.label == "▶ Replay").click().run())
    deadline = time.monotonic() + 30
    while not store().list() or at.session_state["sessions_job"]:
        assert time.monotonic() < deadline, "the replay never finished"
        time.sleep(0.2)
        ok(at.run())
    [info] = store().list()
    assert info.turns == 2 and info.strategies == ("full", "window")
    assert info.source == "import · recorded" and info.name == "Replay of pasted transcript"
    assert fake_transport.calls == []  # recorded replies: no model call
    saved = store().load(info.id)
    assert [r.reply for r in saved.records["full"]] == [
        "Sorry! Let me check order 123.",
        "It ships tomorrow.",
    ]
    assert saved.system_prompt == "You are a support bot."
    assert at.session_state["sessions_open"] == info.id


def test_two_browser_sessions_never_see_each_other(fake_transport):
    alice = AppTest.from_file(APP, default_timeout=60)
    bob = AppTest.from_file(APP, default_timeout=60)
    ok(alice.run())
    ok(bob.run())
    alice.chat_input[0].set_value("Alice's secret plan: buy gold.").run()
    bob.chat_input[0].set_value("Bob wants an index fund.").run()
    wait_main_page(ok(alice))
    wait_main_page(ok(bob))
    a, b = alice.session_state["session"], bob.session_state["session"]
    assert a.id != b.id
    assert a.user_turns == ["Alice's secret plan: buy gold."]
    assert b.user_turns == ["Bob wants an index fund."]
    shown_to_bob = " ".join(m.value for m in bob.markdown)
    assert "Alice" not in shown_to_bob and "Bob wants" in shown_to_bob
    assert store().load(a.id).user_turns == ("Alice's secret plan: buy gold.",)
    assert store().load(b.id).user_turns == ("Bob wants an index fund.",)
    # each session's tracker is its own; the shared store object holds no conversation
    (ta,) = [x for x in a.listeners if hasattr(x, "token")]
    (tb,) = [x for x in b.listeners if hasattr(x, "token")]
    assert ta is not tb and ta.session is a and tb.session is b
    assert ta.store is tb.store
    assert not [v for v in vars(ta.store).values() if isinstance(v, dict | list)]


def test_a_survival_run_from_this_browser_session_can_be_attached(fake_transport):
    from engines.survival import SurvivalConfig, run_survival

    session = saved_demo(fake_transport, 2)
    at = sessions_page()
    at.session_state["survival_result"] = run_survival(
        SurvivalConfig(probe_turns=(2, 4)).validate()
    ).as_dict()
    ok(at.run())
    ok(button(at, "Attach this browser session's fact-survival run").click().run())
    assert store().info(session.id).has_survival
    ok(button(at, "Open (read-only)").click().run())
    assert any(s.value == "Fact survival" for s in at.subheader)
    assert len(at.get("plotly_chart")) == 2 + 6 + 1  # plus the heat map


def test_a_json_export_pasted_in_is_restored_as_it_was(fake_transport):
    from present import export

    session = saved_demo(fake_transport, 2)
    text = export.to_json(store().load(session.id))
    at = sessions_page()
    at.text_area(key="import_text").set_value(text)
    ok(at.run())
    assert any("Memory Lab session export" in s.value for s in at.success)
    ok(button(at, "Restore this export as a saved session").click().run())
    infos = store().list()
    assert len(infos) == 2
    copy = next(i for i in infos if i.id != session.id)
    assert copy.source == "import"
    assert store().load(copy.id).records == store().load(session.id).records


def listing(at: AppTest):
    return next(d.value for d in at.dataframe if "skipped parts" in d.value.columns)


def test_a_file_of_many_conversations_is_a_list_to_search_and_pick_from(fake_transport):
    """A ChatGPT export (3 conversations): listed with title, date and turns; the search
    narrows the list; the one picked is what the replay form imports."""
    export = (ROOT / "tests" / "scenarios" / "fixtures" / "chatgpt_export.json").read_text()
    at = sessions_page()
    at.text_area(key="import_text").set_value(export)
    ok(at.run())
    assert not at.error, [e.value for e in at.error]
    listed = listing(at)
    assert list(listed["title"]) == ["Budget plan", "Trip to Goa", "Edited prompt"]
    assert list(listed["turns"]) == [2, 1, 2]
    assert list(listed["date"].str[:10]) == ["2024-06-01", "2024-06-02", "2024-06-03"]
    pick = at.selectbox(key="import-pick")
    assert pick.value == 1 and any("Read 2 turns" in text_of(s.value) for s in at.success)
    at.text_input(key="import-search").set_value("goa")
    ok(at.run())
    assert list(listing(at)["title"]) == ["Trip to Goa"]
    assert at.selectbox(key="import-pick").value == 2
    assert any("Read 1 turn," in text_of(s.value) for s in at.success)
    assert at.text_input[-1].value == "Replay of Trip to Goa"
