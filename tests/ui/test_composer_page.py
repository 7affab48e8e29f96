"""The Composer page: the editor's rows <-> compositions (every problem on its field), and the
page through AppTest: the live preview (payload and split by block), problems next to their
fields, JSON import (a malformed file changes nothing) and export, and "Add as lane"."""

from __future__ import annotations

import json
import time

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from memory.compose import Block, Composition
from memory.lane_spec import LaneSpec
from memory.registry import REGISTRY, builtin_composition, unregister_composition
from tests.ui.conftest import shown
from tests.ui.test_survival_page import button
from tests.ui.test_tune_page import app_page
from ui.app_state import AppConfig
from ui.composer_form import COLUMNS, Draft, blocks_frame, check, draft_of, give_way_options
from ui.navigation import MAIN_PAGE

PAGE = "pages/7_Composer.py"
BUILTINS = [n for n, s in REGISTRY.items() if s.composition is None]


# ---- the editor's rows ----------------------------------------------------------------------
@pytest.mark.parametrize("name", BUILTINS)
def test_every_builtin_comes_back_from_its_rows_unchanged(name):
    comp = builtin_composition(name)
    checked = check(draft_of(comp))
    assert checked.problems == {} and checked.composition == comp


@settings(max_examples=40, deadline=None)
@given(
    budget=st.one_of(st.none(), st.integers(200, 5000)),
    count=st.one_of(st.none(), st.integers(0, 40)),
    first=st.integers(1, 5),
    recent_budget=st.one_of(st.none(), st.integers(0, 3000)),
)
def test_rows_round_trip_for_any_settings(budget, count, first, recent_budget):
    comp = Composition(
        "mine",
        (
            Block("pinned", first=first, turns=(1, 3)),
            Block("recent", count=count, budget=recent_budget),
        ),
        budget=budget,
        give_way=("recent",),
    )
    draft = draft_of(comp)
    assert list(draft.blocks.columns) == list(COLUMNS)
    assert check(draft).composition == comp


def draft(rows: list[dict], **changes) -> Draft:
    base = dict(name="mine", title="", description="", budget=None, give_way=())
    return Draft(**{**base, **changes}, blocks=pd.DataFrame(rows, columns=list(COLUMNS)))


def test_rows_are_sent_in_their_order_and_blank_cells_of_other_kinds_are_ignored():
    rows = [
        {"order": 2, "kind": "recent", "count": 4.0, "top_k": float("nan")},
        {"order": 1, "kind": "pinned", "turns": "1, 2"},
    ]
    comp = check(draft(rows)).composition
    assert comp is not None
    assert comp.blocks == (Block("pinned", turns=(1, 2)), Block("recent", count=4))


@pytest.mark.parametrize(
    ("rows", "changes", "field", "message"),
    [
        ([{"order": 1, "kind": "recent", "count": 2.5}], {}, "blocks", "Block 1 (recent): count"),
        ([{"order": 1, "kind": None}], {}, "blocks", "Block 1: choose a kind"),
        ([{"order": 1, "kind": "pinned", "turns": "one"}], {}, "blocks", "turns are turn numbers"),
        ([{"order": 1, "kind": "recent"}], {"name": "Bad Name"}, "name", "name is 1-40 lowercase"),
        ([{"order": 1, "kind": "recent"}, {"order": 2, "kind": "recent"}], {}, "blocks", "two 'recent'"),
        ([{"order": 1, "kind": "recent"}], {"give_way": ("summary",)}, "give_way", "give_way names"),
        ([{"order": 1, "kind": "summary", "policy": "threshold"}], {}, "budget", "set the composition's budget"),
        ([], {}, "blocks", "Add at least one block"),
    ],
)  # fmt: skip
def test_each_problem_is_attached_to_its_field(rows, changes, field, message):
    checked = check(draft(rows, **changes))
    assert checked.composition is None
    assert list(checked.problems) == [field]
    assert any(message in p for p in checked.at(field)), checked.problems


def test_give_way_offers_the_blocks_present_but_never_pinned():
    frame = blocks_frame(builtin_composition("hybrid"))
    assert give_way_options(frame) == ["facts", "summary", "retrieved", "recent"]
    frame.loc[len(frame)] = {"order": 5, "kind": "pinned", "first": 1}
    assert "pinned" not in give_way_options(frame)


# ---- the page ---------------------------------------------------------------------------------
def composer_page() -> AppTest:
    return app_page(PAGE)


def payload(at: AppTest) -> dict:
    return json.loads(next(c.value for c in at.code if c.value.lstrip().startswith("{")))


def split(at: AppTest) -> dict[str, int]:
    frame = next(d.value for d in at.dataframe if "part" in d.value.columns)
    return dict(zip(frame["part"], frame["tokens"], strict=True))


def test_the_preview_shows_the_payload_and_the_split_by_block_beside_the_builtin():
    at = composer_page()
    assert at.text_input(key="composer-name-1").value == "composed_hybrid"
    body = payload(at)
    assert (
        body["messages"][0]["role"] == "system" and "Known facts" in body["messages"][0]["content"]
    )
    parts = split(at)
    assert parts["system"] == 132 and parts["facts"] > 0 and parts["recent"] > 0
    figure = json.loads(at.get("plotly_chart")[0].proto.spec)
    lanes = {y for t in figure["data"] for y in (t.get("y") or [])}
    assert "Hybrid (composed) (this composition)" in lanes and "hybrid (budget=800)" in lanes
    # the built-in and its composition send the same parts, token for token
    total = next(t for t in figure["data"] if t["name"] == "request total")
    assert total["text"][0] == total["text"][1] and "sent" in total["text"][0]
    known = next(t for t in figure["data"] if t["name"] == "Known facts")
    assert known["x"][0] == known["x"][1] == parts["facts"]


def test_a_budget_that_cannot_hold_the_system_prompt_is_named_under_the_budget():
    at = composer_page()
    at.number_input(key="composer-budget-1").set_value(50).run()
    assert not at.exception, at.exception
    errors = [e.value for e in column_with(at, "composer-budget-1").error]
    assert any("budget 50 is not larger than the system prompt" in e for e in errors), errors
    assert button(at, "Add as lane").disabled
    at.text_input(key="composer-name-1").set_value("Has Spaces").run()
    errors = [shown(e.value) for e in column_with(at, "composer-name-1").error]
    assert any("name is 1-40 lowercase" in e for e in errors), errors


def column_with(at: AppTest, key: str):
    """The column holding the widget `key` (a problem is shown next to its field)."""
    return next(c for c in at.columns if any(w.key == key for w in c.get("text_input")
                                             + c.get("number_input")))  # fmt: skip


def test_a_malformed_import_is_named_and_the_draft_is_kept():
    at = composer_page()
    at.number_input(key="composer-budget-1").set_value(900).run()
    upload = at.file_uploader(key="composer-import")
    upload.upload("broken.json", b'{"format": 1, "name": "x", "blocks": [{"kind": "nope"}]}',
                  "application/json").run()  # fmt: skip
    assert not at.exception, at.exception
    message = next(
        shown(e.value) for e in at.error if "Could not import broken.json" in shown(e.value)
    )
    assert "blocks[0].kind" in message and "unchanged" in message
    assert at.number_input(key="composer-budget-1").value == 900  # nothing lost
    good = builtin_composition("window", {"k": 2}).to_json().encode()
    at.file_uploader(key="composer-import").upload("w.json", good, "application/json").run()
    assert any("Imported composed_window" in shown(s.value) for s in at.success)
    assert payload(at)["messages"][-1]["role"] == "user"
    assert len(split(at)) >= 3


def test_export_is_the_composition_as_json():
    at = composer_page()
    export = next(d for d in at.get("download_button") if d.label == "Export JSON")
    assert export.proto.url  # the file is served by the app; its content is the checked value
    at.text_input(key="composer-name-1").set_value("bad name").run()
    export = next(d for d in at.get("download_button") if d.label == "Export JSON")
    assert export.proto.disabled


def test_add_as_lane_registers_it_and_puts_it_on_the_main_page():
    at = composer_page()
    at.session_state["config"] = AppConfig.default().replace(lanes=(LaneSpec("full"),))
    at.text_input(key="composer-name-1").set_value("my_mix").run()
    at.text_input(key="composer-title-1").set_value("My mix").run()
    button(at, "Add as lane").click().run()
    assert not at.exception, at.exception
    assert REGISTRY["my_mix"].composition is not None
    assert [lane.name for lane in at.session_state.config.lanes] == ["full", "my_mix"]
    assert any(
        "my_mix is registered" in shown(s.value) and "Added the lane" in shown(s.value)
        for s in at.success
    )
    at.switch_page(MAIN_PAGE)
    at.run()
    assert not at.exception, at.exception
    headers = [m.value for m in at.markdown if m.value.startswith("#### ")]
    assert headers == ["#### Full buffer", "#### My mix"]
    at.switch_page("pages/6_Tune.py")
    at.run()  # registered like any strategy: the tuner can search it
    assert "My mix" in at.button_group(key="tune-strategies").options


def until_the_input_is_free(at: AppTest, bound_s: float = 30.0) -> None:
    """Run the page again until its message box is enabled, for at most `bound_s`: in a
    browser the page's watcher (a timed fragment, which AppTest never runs) redraws the page
    when the last lane's own redraw came after the run had ended."""
    deadline = time.monotonic() + bound_s
    while at.chat_input[0].proto.disabled and time.monotonic() < deadline:
        time.sleep(0.05)
        at.run()


def test_the_preview_replays_the_main_pages_conversation(fake_transport):
    at = app_page(MAIN_PAGE)
    at.chat_input[0].set_value("My name is Chiru and I save ₹20,000 a month.").run()
    until_the_input_is_free(at)
    at.chat_input[0].set_value("What should I do next?").run()
    assert not at.exception, at.exception
    at.switch_page(PAGE)
    at.run()
    assert any("Replayed on the main page's conversation (2 turns" in c.value for c in at.caption)
    messages = payload(at)["messages"]
    assert messages[-1] == {"role": "user", "content": "What should I do next?"}
    assert any("Chiru" in m["content"] for m in messages[:-1])


def test_a_builtin_name_is_refused_for_a_lane():
    at = composer_page()
    at.text_input(key="composer-name-1").set_value("window").run()
    button(at, "Add as lane").click().run()
    assert any("is a built-in strategy's name" in shown(e.value) for e in at.error)
    assert REGISTRY["window"].composition is None


@pytest.mark.parametrize("name", ["window", "summary_buffer", "retrieval"])
def test_starting_from_a_builtin_compares_it_with_that_builtin(name):
    at = composer_page()
    at.selectbox(key="composer-start").set_value(f"{name} (built-in)").run()
    button(at, "Start from this").click().run()
    assert not at.exception, at.exception
    assert at.text_input(key="composer-name-2").value == f"composed_{name}"
    assert any(f"Started from {name} (built-in)" in shown(s.value) for s in at.success)
    figure = json.loads(at.get("plotly_chart")[0].proto.spec)
    total = next(t for t in figure["data"] if t["name"] == "request total")
    assert len(total["y"]) == 2 and total["y"][1].startswith(name)
    assert total["text"][0] == total["text"][1]  # the same request, token for token


def test_save_keeps_it_in_the_database_and_a_restart_registers_it_again(tmp_path, monkeypatch):
    from storage.store import Store
    from ui import persistence

    url = f"sqlite:///{tmp_path / 'app.db'}"
    monkeypatch.setenv("MEMORY_LAB_DB_URL", url)
    at = composer_page()
    at.text_input(key="composer-name-1").set_value("saved_mix").run()
    button(at, "Save").click().run()
    assert not at.exception, at.exception
    assert any("Saved saved_mix in the database" in shown(s.value) for s in at.success)
    saved = Store(url).compositions.list()
    assert [c.name for c in saved] == ["saved_mix"] and saved[0].budget == 800
    unregister_composition("saved_mix")  # as if the app had restarted
    persistence._open.clear()
    at = composer_page()
    assert REGISTRY["saved_mix"].composition == saved[0]
    assert "saved_mix (composition)" in at.selectbox(key="composer-start").options


def test_a_builtin_name_is_not_saved(tmp_path, monkeypatch):
    from storage.store import Store

    url = f"sqlite:///{tmp_path / 'app.db'}"
    monkeypatch.setenv("MEMORY_LAB_DB_URL", url)
    at = composer_page()
    at.text_input(key="composer-name-1").set_value("summary").run()
    button(at, "Save").click().run()
    assert any("Not saved:" in shown(e.value) and "built-in" in shown(e.value) for e in at.error)
    assert Store(url).compositions.list() == []
