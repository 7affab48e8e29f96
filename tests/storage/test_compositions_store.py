"""Saved compositions: the database table (migration 4, also on an old database), save/list/
delete, and sessions whose lanes run a composition (saved, exported, opened elsewhere)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from memory.compose import Block, Composition
from memory.errors import InvalidParameter
from memory.registry import REGISTRY, unregister_composition
from storage.store import SavedSession, SessionFormatError, Store, decode_export
from tests.memory.compositions import MINE
from tests.storage.store_support import make_session

FIXTURES = Path(__file__).parent / "fixtures"


def test_save_list_replace_and_delete_compositions(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    assert store.compositions.list() == []
    store.compositions.save(MINE)
    changed = Composition(MINE.name, (Block("recent", count=5),), title="Changed")
    store.compositions.save(changed)
    store.compositions.save(Composition("another", (Block("recent"),)))
    assert [c.name for c in store.compositions.list()] == ["another", MINE.name]
    assert store.compositions.load(MINE.name) == changed  # replaced, not duplicated
    assert store.compositions.delete("another") is True
    assert store.compositions.delete("another") is False
    with pytest.raises(KeyError, match="no saved composition named 'another'"):
        store.compositions.load("another")
    with pytest.raises(InvalidParameter, match="built-in strategy"):
        store.compositions.save(Composition("window", (Block("recent"),)))


def test_saved_compositions_register_in_a_new_process(tmp_path):
    url = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    Store(url).compositions.save(MINE)
    assert MINE.name not in REGISTRY
    try:
        assert Store(url).compositions.register_saved() == (MINE.name,)
        assert REGISTRY[MINE.name].composition == MINE
        assert Store(url).compositions.register_saved() == ()  # already there
    finally:
        unregister_composition(MINE.name)


def test_an_old_database_gains_the_compositions_table(tmp_path):
    path = tmp_path / "old.sqlite3"
    shutil.copy(FIXTURES / "old_store_v1.sqlite3", path)
    store = Store(f"sqlite:///{path}")
    store.compositions.save(MINE)
    assert store.compositions.list() == [MINE]
    assert [i.id for i in store.list()] == ["old0session1"]  # the old sessions are still there


def test_a_session_with_a_composition_lane_opens_where_it_is_not_registered(tmp_path, register):
    register(MINE)
    session = make_session(lanes=("window", MINE.name))
    session.run_turn("My rent is 25,000 rupees.")
    session.run_turn("What is my rent?")
    store = Store(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    saved_id = store.save(session)
    exported = json.dumps(store.load(saved_id).as_dict())
    assert json.loads(exported)["settings"]["compositions"] == [MINE.to_dict()]

    unregister_composition(MINE.name)  # "another machine": the composition is unknown here
    saved = decode_export(json.loads(exported))
    assert REGISTRY[MINE.name].composition == MINE
    assert saved.records[MINE.name][1].ok

    unregister_composition(MINE.name)
    loaded = store.load(saved_id)  # loading from the database registers it too
    assert REGISTRY[MINE.name].composition == MINE
    assert loaded.records == saved.records


def test_a_malformed_carried_composition_is_a_format_error_naming_it(register):
    register(MINE)
    session = make_session(lanes=("window", MINE.name))
    session.run_turn("hello")
    data = SavedSession.from_session(session).as_dict()
    data["settings"]["compositions"][0]["blocks"][0]["kind"] = "mystery"
    unregister_composition(MINE.name)
    with pytest.raises(SessionFormatError, match=r"settings.compositions\[0\]: .*blocks\[0\]"):
        decode_export(data)
    assert MINE.name not in REGISTRY  # nothing registered


def test_sessions_without_compositions_keep_their_settings_unchanged():
    session = make_session(lanes=("window",))
    session.run_turn("hello")
    assert "compositions" not in SavedSession.from_session(session).settings
