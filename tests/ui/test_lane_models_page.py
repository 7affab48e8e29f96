"""The main page runs one strategy on two models side by side (AppTest, fake transport)."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from tests.ui.conftest import ROOT
from tests.ui.conftest import shown as text_of

APP = str(ROOT / "app.py")
SB, SB_MINI = "summary_buffer", "summary_buffer · gpt-4o-mini"


def ok(at: AppTest) -> AppTest:
    assert not at.exception, at.exception
    return at


def by_key(widgets, key: str):
    """The widget whose key is `key` (the "Add a lane" box's keys end in a round number)."""
    return next(w for w in widgets if w.key and key in (w.key, w.key.rsplit("-", 1)[0]))


def add_summary_buffer_on_gpt_4o_mini(at: AppTest) -> AppTest:
    by_key(at.selectbox, "lane-add-strategy").set_value("summary_buffer")
    by_key(at.selectbox, "lane-preset-add").set_value("openai")
    by_key(at.text_input, "lane-model-add").set_value("gpt-4o-mini")
    next(b for b in at.button if b.label.startswith("Apply")).click()
    return ok(at.run())


def test_a_second_summary_buffer_lane_on_another_model_answers_a_turn(fake_transport):
    at = ok(AppTest.from_file(APP, default_timeout=60).run())
    ok(add_summary_buffer_on_gpt_4o_mini(at))
    session = at.session_state["session"]
    assert SB in session.lanes and SB_MINI in session.lanes and len(session.lanes) == 7
    headers = [text_of(m.value) for m in at.markdown if text_of(m.value).startswith("#### ")]
    assert "#### Summary buffer · gpt-4o-mini" in headers
    assert any("(1 lane on its own model)" in c.value for c in at.caption)
    ok(at.chat_input[0].set_value("Hi! I'm Chiru.").run())
    records = {n: lane.turns[-1] for n, lane in session.lanes.items()}
    assert all(r.ok for r in records.values()), records
    assert records[SB_MINI].body["model"] == "gpt-4o-mini"
    assert records[SB].body["model"] == session.provider.model != "gpt-4o-mini"
    shown = [json.loads(c.value) for c in at.code if c.value.lstrip().startswith("{")]
    assert records[SB_MINI].body in shown and records[SB].body in shown
    # the lane is listed in the sidebar with its own model, and can be removed again
    assert by_key(at.text_input, f"lane-model-{SB_MINI}").value == "gpt-4o-mini"
    by_key(at.checkbox, f"lane-remove-{SB_MINI}").check()
    next(b for b in at.button if b.label.startswith("Apply")).click()
    ok(at.run())
    assert SB_MINI not in at.session_state["session"].lanes


def test_the_same_lane_twice_is_refused_with_a_message(fake_transport):
    at = ok(AppTest.from_file(APP, default_timeout=60).run())
    by_key(at.selectbox, "lane-add-strategy").set_value("window")
    next(b for b in at.button if b.label.startswith("Apply")).click()
    ok(at.run())
    assert any("would be identical" in e.value for e in at.sidebar.error)
    assert len(at.session_state["session"].lanes) == 6


def add_lane_app() -> None:
    import streamlit as st

    from memory.lane_spec import LaneSpec
    from providers.settings import ProviderChoice
    from ui.app_state import add_lane

    choice = LaneSpec("summary_buffer", {"budget": 900})
    st.session_state["labels"] = [
        add_lane(choice, ProviderChoice("openai", "gpt-4o")),
        add_lane(choice, ProviderChoice("openai", "gpt-4o")),  # the same again: not added
        add_lane(LaneSpec("summary_buffer")),  # the default lane: already there
    ]


def test_add_lane_appends_to_the_main_page_config_and_returns_its_label():
    at = ok(AppTest.from_function(add_lane_app).run())
    labels = at.session_state["labels"]
    assert labels == [
        "summary_buffer (budget=900) · gpt-4o",
        "summary_buffer (budget=900) · gpt-4o",
        "summary_buffer (budget=600)",  # the default lane, now told apart by its budget
    ]
    config = at.session_state["config"]
    assert len(config.lanes) == 7 and config.labels()[-1] == labels[0]
    assert labels[2] in config.labels()
    assert at.session_state["session"] is None  # the main page starts a new conversation


def test_a_saved_session_reopens_with_each_lane_on_its_own_model():
    from lanes.session import Session
    from memory.lane_spec import LaneSpec
    from memory.registry import REGISTRY
    from providers.fake import FakeTransport
    from providers.settings import ProviderChoice
    from storage.store import SavedSession
    from ui.app_state import AppConfig, keyed_settings
    from ui.persistence import config_for, lane_specs

    sb = REGISTRY["summary_buffer"].defaults()
    config = AppConfig(
        provider=ProviderChoice("openai", "gpt-4o-mini"),
        lanes=(
            LaneSpec("full", {}),
            LaneSpec("summary_buffer", sb),
            LaneSpec(
                "summary_buffer", sb, provider=ProviderChoice("anthropic", "claude-haiku-4-5")
            ),
        ),
    )
    session = Session(
        system_prompt=config.system_prompt,
        lanes=lane_specs(config),
        provider=keyed_settings(config.provider),
        transport=FakeTransport(),
    )
    session.run_turn("Hi! I'm Chiru.")
    saved = SavedSession.from_session(session, app=config.as_saved())
    # the file's endpoints are taken only when asked (the main page's button); by default
    # every lane runs on the provider chosen here (tests/ui/test_saved_endpoints.py)
    kept = config_for(saved, AppConfig.default())
    assert {lane.provider.preset for lane in kept.lanes if lane.provider} == {"embedded"}
    assert kept.provider.preset == "embedded"
    reopened = config_for(saved, AppConfig.default(), adopt=True)
    assert reopened.labels() == list(session.lanes) == [
        "full", "summary_buffer", "summary_buffer · claude-haiku-4-5",
    ]  # fmt: skip
    own = reopened.lanes[2].provider
    assert own is not None and (own.preset, own.model) == ("anthropic", "claude-haiku-4-5")
    assert reopened.lanes[1].provider is None
    specs = lane_specs(reopened)
    assert specs[2].provider.kind == "anthropic" and specs[2].provider.model == "claude-haiku-4-5"
    # each lane's own price: Haiku's for the third lane, gpt-4o-mini's for the others
    assert reopened.lane_price(reopened.lanes[2]).model == "claude-haiku-4-5"
    assert reopened.lane_price(reopened.lanes[1]).model == "gpt-4o-mini"


def test_a_lane_whose_own_model_fails_shows_its_error_and_the_others_answer(
    fake_transport, monkeypatch
):
    from providers.fake import FakeProviderError, FakeReply

    real = fake_transport.stream

    def stream(request, settings, on_delta=None):
        if settings.model == "dead-model":  # e.g. a wrong key for that lane's provider
            body = fake_transport.body(request, settings)
            return FakeReply("", None, body, complete=False, error=FakeProviderError("401 bad key"))
        return real(request, settings, on_delta)

    monkeypatch.setattr(fake_transport, "stream", stream)
    at = ok(AppTest.from_file(APP, default_timeout=60).run())
    by_key(at.selectbox, "lane-add-strategy").set_value("window")
    by_key(at.text_input, "lane-model-add").set_value("dead-model")
    next(b for b in at.button if b.label.startswith("Apply")).click()
    ok(at.run())
    ok(at.chat_input[0].set_value("Hi! I'm Chiru.").run())
    session = at.session_state["session"]
    statuses = {n: lane.turns[-1].status for n, lane in session.lanes.items()}
    assert statuses.pop("window · dead-model") == "error"
    assert set(statuses.values()) == {"ok"} and len(statuses) == 6
    assert any("401 bad key" in e.value for e in at.error)
    ok(at.chat_input[0].set_value("And again?").run())  # the conversation goes on
    assert session.turn == 2 and session.lanes["window"].turns[-1].ok
