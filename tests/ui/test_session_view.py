"""The Sessions page's list, computed in ui/session_view.py (the page only draws it): one row
per saved session, lane labels as titles, interrupted sessions marked."""

from __future__ import annotations

from dataclasses import replace

from memory.registry import REGISTRY
from storage.store import Store
from tests.storage.store_support import make_session
from ui.session_view import label, list_rows, titles


def test_the_list_has_a_row_per_session_with_titles_and_status(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 's.sqlite3'}")
    session = make_session(lanes=("full", "window"))
    store.track(session)
    session.run_turn("Hello, I'm Chiru.")
    [info] = store.list()
    [row] = list_rows([info])
    assert row["Name"] == info.name and row["Turns"] == 1 and row["Status"] == "complete"
    expected = ", ".join(REGISTRY[n].title for n in ("full", "window"))
    assert row["Strategies"] == titles(info.strategies) == expected
    broken = replace(info, lane_turns=1)  # one lane of the turn never answered
    assert list_rows([broken])[0]["Status"] == "interrupted"
    assert label(broken).endswith("1 turns · interrupted")
    assert titles(("no_such_strategy x",)) == "no_such_strategy x"
