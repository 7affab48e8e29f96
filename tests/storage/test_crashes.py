"""Crashes and contention (issue 10): SIGKILL at random moments over 50 turns loses no
completed lane turn (SQLite and PostgreSQL), two processes share one SQLite file, and a write
lock held longer than the busy timeout strands nothing. (PostgreSQL: test_data_safety_postgres.py.)"""

from __future__ import annotations

import sqlite3
import threading

from engines.sessions import RunOptions, continue_stored
from storage.store import Store
from tests.storage.kill_support import LANES, kill_run, two_writers
from tests.storage.store_support import make_session


def test_sigkill_at_random_points_over_50_turns_loses_nothing_on_sqlite(tmp_path):
    url = f"sqlite:///{tmp_path / 'killed.sqlite3'}"
    report = kill_run(url, turns=50, seed=7)
    assert report.kills >= 1 and report.turns == 50
    # only the lanes of the turn in flight at each kill may be missing, never a saved one
    assert report.lost == 0
    assert report.completed >= report.attempted - report.kills * len(LANES)
    path = tmp_path / "killed.sqlite3"
    assert sqlite3.connect(path).execute("pragma integrity_check").fetchone() == ("ok",)


def test_two_processes_writing_one_sqlite_file(tmp_path):
    url = f"sqlite:///{tmp_path / 'shared.sqlite3'}"
    results = two_writers(url, turns=5)
    assert [error for _, error in results] == ["None", "None"]
    store = Store(url)
    infos = {i.id: i for i in store.list()}
    for sid, _ in results:
        assert (infos[sid].turns, infos[sid].lane_turns) == (5, 5 * len(LANES))
        assert not store.load(sid).interrupted


def test_a_write_lock_held_past_the_busy_timeout_strands_nothing(tmp_path):
    """Issue 10 #1: the user-turn write of turn 2 fails ("database is locked"); the lane
    rows after it succeed and repair it, and the session opens, continues and exports."""
    path = tmp_path / "locked.sqlite3"
    store = Store(f"sqlite:///{path}", busy_timeout=0.2)
    session = make_session()
    tracker = store.track(session)
    session.run_turn("turn one")

    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    turn = session.begin_turn("turn two")
    assert tracker.error and "locked" in tracker.error  # visible while not repaired
    other.execute("ROLLBACK")
    for name in session.lanes:
        session.run_lane(name, turn)
    assert tracker.error is None and tracker.pending == 0  # repaired by the lane writes
    session.run_turn("turn three")
    session.run_turn("turn four")

    saved = Store(f"sqlite:///{path}").load(session.id)
    assert saved.user_turns == tuple(session.user_turns)
    assert saved.records == session.records() and not saved.interrupted


def test_a_lost_lane_write_stays_visible_until_the_next_write_repairs_it(tmp_path):
    path = tmp_path / "locked.sqlite3"
    store = Store(f"sqlite:///{path}", busy_timeout=0.1)
    session = make_session(lanes=("full", "window"))
    tracker = store.track(session)
    session.run_turn("turn one")
    turn = session.begin_turn("turn two")
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    session.run_lane("full", turn)  # its write fails
    assert tracker.error and tracker.pending == 1
    other.execute("ROLLBACK")
    session.run_lane("window", turn)  # the next write saves the lost one first
    assert tracker.error is None and tracker.pending == 0
    assert Store(f"sqlite:///{path}").load(session.id).records == session.records()


def test_a_lost_first_turn_write_is_repaired_with_the_session_row(tmp_path):
    path = tmp_path / "locked.sqlite3"
    store = Store(f"sqlite:///{path}", busy_timeout=0.1)
    session = make_session(lanes=("full", "entity"))
    tracker = store.track(session)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    turn = session.begin_turn("the very first message")  # nothing of the session is saved
    assert tracker.error and store.list() == []
    other.execute("ROLLBACK")
    for name in session.lanes:
        session.run_lane(name, turn)
    assert tracker.error is None
    session.run_turn("second")
    saved = Store(f"sqlite:///{path}").load(session.id)
    assert saved.user_turns == ("the very first message", "second")
    assert saved.records == session.records()


def test_a_session_deleted_elsewhere_is_not_brought_back_by_a_retry(tmp_path):
    url = f"sqlite:///{tmp_path / 's.sqlite3'}"
    store = Store(url)
    session = make_session(lanes=("full",))
    store.track(session)
    session.run_turn("hello")
    again = continue_stored(store, session.id, RunOptions(provider=session.provider))
    tracker = store.track(again)
    store.delete(session.id)
    tracker(again, again.lanes["full"].turns[-1])  # a late write for the deleted session
    assert tracker.error and "deleted" in tracker.error
    assert store.list() == []


def test_stores_opening_a_new_database_at_once_all_migrate_it(tmp_path):
    import threading

    url = f"sqlite:///{tmp_path / 'fresh.sqlite3'}"
    start = threading.Barrier(8)
    errors: list[BaseException] = []

    def open_store() -> None:
        start.wait()
        try:
            Store(url).close()
        except BaseException as exc:  # collected: asserted below
            errors.append(exc)

    threads = [threading.Thread(target=open_store) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_a_new_database_opens_while_another_process_holds_its_lock(tmp_path):
    """Two processes opening one new file together: the switch to WAL meets the other's
    lock, which SQLite reports at once ("database is locked") instead of waiting; the store
    waits for it (the two-writer test above failed about once in ten runs before)."""
    path = tmp_path / "new.sqlite3"
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")  # the other process, part-way through opening the file
    release = threading.Timer(0.5, lambda: other.execute("ROLLBACK"))
    release.start()
    try:
        store = Store(f"sqlite:///{path}")
    finally:
        release.join()
        other.close()
    assert store.list() == []
    assert store.db.engine.connect().exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    store.close()


def _finish_together(session, names, turn) -> list[BaseException]:
    """Run turn `turn` in lanes `names` in threads that reach the tracker at the same moment
    (a listener ahead of it waits for all of them); what each lane raised."""
    barrier = threading.Barrier(len(names))

    def together(_session, record) -> None:
        if record.turn == turn and record.lane in names:
            barrier.wait(timeout=10)

    session.listeners.insert(0, together)
    raised: list[BaseException] = []

    def run(name: str) -> None:
        try:
            session.run_lane(name, turn)
        except BaseException as exc:  # what a lane would see
            raised.append(exc)

    threads = [threading.Thread(target=run, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    session.listeners.remove(together)
    return raised


def test_lanes_finishing_together_while_a_write_fails_never_see_the_tracker_raise(tmp_path):
    """Issue 23 #6: the tracker is called from every lane's thread at once. Three lanes end
    turn 2 together while the database is locked (their writes fail), then three more end it
    together once it is free: each repairs the lost writes, and none may raise into its lane
    (unlocked, two repaired the same write and the second's `del` raised KeyError)."""
    for attempt in range(12):
        path = tmp_path / f"race{attempt}.sqlite3"
        store = Store(f"sqlite:///{path}", busy_timeout=0.05)
        session = make_session()
        tracker = store.track(session)
        session.run_turn("turn one")
        turn = session.begin_turn("turn two")
        names = list(session.lanes)
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        assert _finish_together(session, names[:3], turn) == []
        assert tracker.error and tracker.pending == 3
        other.execute("ROLLBACK")
        assert _finish_together(session, names[3:], turn) == [], f"attempt {attempt}"
        assert tracker.error is None and tracker.pending == 0
        assert Store(f"sqlite:///{path}").load(session.id).records == session.records()
        other.close()
