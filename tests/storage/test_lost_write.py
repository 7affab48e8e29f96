"""A lost write loses one turn, never a session (issue 24, class 7).

A lane-turn write fails, its repair fails too, and the next turn's write succeeds: the saved
lane state must not refer to a row that does not exist. Real SQLite, the real tracker; the
fault is a trigger inside the database refusing that one row, as a full disk would."""

from __future__ import annotations

import json
import sqlite3

import pytest

from engines.sessions import continue_stored
from storage.records import INTERRUPTED
from storage.store import Store
from tests.storage.store_support import make_session

LANES = ("full", "window", "summary")


def _refuse(path, lane: str, turn: int) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(
        "CREATE TRIGGER refuse BEFORE INSERT ON ml_lane_turns "
        f"WHEN NEW.lane = '{lane}' AND NEW.turn = {turn} "
        "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
    )
    return conn


@pytest.mark.parametrize("lane", LANES)
def test_a_lost_lane_turn_whose_repair_fails_loses_that_turn_only(tmp_path, lane):
    path = tmp_path / "s.sqlite3"
    store = Store(f"sqlite:///{path}")
    session = make_session(lanes=LANES)
    tracker = store.track(session)
    session.run_turn("My name is Chiru.")
    fault = _refuse(path, lane, 2)
    session.run_turn("I earn 5000 a month.")  # the lane's write fails; its repairs fail too
    session.run_turn("What is my name?")  # the next turn's writes succeed (after a repair fails)
    session.run_turn("And my salary?")
    assert tracker.pending == 1 and tracker.error
    saved = [r.turn for r in session.lanes[lane].turns]
    assert saved == [1, 2, 3, 4]
    fault.execute("DROP TRIGGER refuse")  # the next process opens it with the fault gone

    loaded = Store(f"sqlite:///{path}").load(session.id)  # no KeyError
    assert loaded.user_turns == tuple(session.user_turns)
    assert loaded.interrupted == (2,)
    assert loaded.records[lane][1].error_kind == INTERRUPTED
    for name in LANES:
        live = session.records()[name]
        expected = live if name != lane else [live[0], loaded.records[lane][1], *live[2:]]
        assert loaded.records[name] == expected
    # the saved memory is the lane's own (the lost turn's pair kept inline, not by reference)
    assert loaded.memory[lane] == session.lanes[lane].memory_state()
    continued = continue_stored(Store(f"sqlite:///{path}"), session.id)
    continued.run_turn("Thanks.")
    assert [r.turn for r in continued.lanes[lane].turns][-1] == 5


def test_a_state_saved_by_an_older_version_against_a_missing_row_still_loads(tmp_path):
    """A database written before the fix: the lane state names a turn whose row is gone.
    Loading keeps what exists and marks the gap interrupted instead of raising KeyError."""
    path = tmp_path / "s.sqlite3"
    store = Store(f"sqlite:///{path}")
    session = make_session(lanes=("full",))
    store.track(session)
    for text in ("one", "two", "three"):
        session.run_turn(text)
    conn = sqlite3.connect(path, isolation_level=None)
    state = json.loads(conn.execute("SELECT state FROM ml_lane_states").fetchone()[0])
    assert state["memory"].get("turns_from_records")  # compacted against the saved rows
    conn.execute("DELETE FROM ml_lane_turns WHERE turn = 2")
    loaded = Store(f"sqlite:///{path}").load(session.id)
    assert loaded.interrupted == (2,) and len(loaded.records["full"]) == 3
    pairs = loaded.memory["full"]["memory"]["turns"]
    assert [p[0] for p in pairs] == ["one", "two", "three"]
