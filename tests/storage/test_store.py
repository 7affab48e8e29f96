"""The session store on SQLite: saving as turns complete, reload after a restart, interrupted
turns, continuing, concurrent windows, rename/delete, and no key anywhere."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from engines.sessions import RunOptions, continue_stored
from lanes.lane import ERROR
from lanes.session import Session
from present import export
from providers.fake import FakeTransport
from scenarios import fincoach
from storage.store import (
    INTERRUPTED,
    SavedSession,
    SessionFormatError,
    SessionNotFound,
    Store,
    StoreError,
)
from tests.storage.store_support import (
    PLANTED,
    PLANTED_ENV,
    live_figures,
    make_session,
    openai_settings,
    saved_figures,
)


@pytest.fixture
def db(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'store.sqlite3'}"


def run_demo(session: Session, turns: int = 5) -> None:
    for text in fincoach.DEMO_TURNS[:turns]:
        session.run_turn(text)


def test_every_turn_is_saved_and_a_restart_loads_identical_figures(db):
    session = make_session()
    tracker = Store(db).track(session, app={"provider": {"preset": "openai"}})
    run_demo(session)
    assert tracker.error is None and tracker.saved == 5 * 6

    restarted = Store(db)  # a new process would open the same file like this
    [info] = restarted.list()
    assert (info.id, info.turns, info.lane_turns, info.interrupted) == (session.id, 5, 30, False)
    assert info.strategies == tuple(session.lanes)
    everything = [r for rs in session.records().values() for r in rs]
    assert info.prompt_tokens == sum(r.billed_input for r in everything)

    saved = restarted.load(session.id)
    assert info.total_tokens == sum(s.total_tokens for s in export.lane_summaries(saved))
    assert saved.records == session.records()  # every LaneTurn, bodies included
    assert saved.user_turns == tuple(fincoach.DEMO_TURNS)
    assert saved_figures(saved) == live_figures(session)
    assert export.to_csv(saved) == export.to_csv(SavedSession.from_session(session))
    assert saved.settings["app"] == {"provider": {"preset": "openai"}}
    assert saved.settings["provider"]["model"] == "gpt-4o-mini"
    light = restarted.load(session.id, bodies=False)
    assert all(r.body is None for rs in light.records.values() for r in rs)
    assert saved_figures(light) == live_figures(session)


def test_a_continued_session_sends_exactly_what_the_original_would_have(db):
    store = Store(db)
    original = make_session()
    store.track(original)
    run_demo(original, 4)

    again = continue_stored(
        Store(db), original.id, RunOptions(provider=openai_settings(), transport=FakeTransport())
    )
    assert again.snapshot()["lanes"] == original.snapshot()["lanes"]
    assert again.id == original.id and again.turn == 4
    assert not again.pending_lanes()

    store.track(again)
    mine = again.run_turn(fincoach.DEMO_TURNS[4])
    theirs = original.run_turn(fincoach.DEMO_TURNS[4])
    assert {n: r.body for n, r in mine.items()} == {n: r.body for n, r in theirs.items()}
    info = store.info(original.id)
    assert (info.turns, info.lane_turns) == (5, 30)


def test_continuing_rebuilds_the_provider_from_the_saved_settings(db):
    store = Store(db)
    session = make_session(provider=openai_settings(api_key=PLANTED))
    store.track(session)
    run_demo(session, 1)
    again = continue_stored(store, session.id, RunOptions(transport=FakeTransport()))
    assert again.provider.model == "gpt-4o-mini" and again.provider.kind == "openai"
    assert again.provider.api_key is None  # never saved: read from the environment again


def test_a_turn_cut_short_is_marked_interrupted_and_its_lanes_can_be_retried(db):
    store = Store(db)
    session = make_session()
    store.track(session)
    run_demo(session, 2)
    turn = session.begin_turn(fincoach.DEMO_TURNS[2])
    session.run_lane("full", turn)
    session.run_lane("window", turn)  # ... and the process stops here

    saved = Store(db).load(session.id)
    assert saved.interrupted == (3,)
    assert saved.info.interrupted and saved.info.turns == 3
    missing = [n for n in saved.strategies if n not in ("full", "window")]
    for name in missing:
        record = saved.records[name][2]
        assert record.status == ERROR and record.error_kind == INTERRUPTED
    assert saved.records["full"][2] == session.lanes["full"].turns[2]
    # the charts skip the interrupted lanes' missing point instead of drawing a zero
    assert saved_figures(saved)["comparison"][2][1] == [1, 2]

    again = continue_stored(
        store, session.id, RunOptions(provider=openai_settings(), transport=FakeTransport())
    )
    store.track(again)
    assert not again.pending_lanes()  # nothing reruns by itself...
    assert again.lanes["entity"].can_retry(3)  # ... but each missing lane can be retried
    again.retry("entity")
    after = store.load(session.id)
    assert after.records["entity"][2].ok
    assert after.interrupted == (3,)
    for name in missing:
        if name != "entity":
            again.retry(name)
    done = store.load(session.id)
    assert done.interrupted == () and not done.info.interrupted


def test_a_session_continued_in_two_windows_is_never_overwritten(db):
    store = Store(db)
    session = make_session()
    store.track(session)
    run_demo(session, 2)
    first = continue_stored(
        store, session.id, RunOptions(provider=openai_settings(), transport=FakeTransport())
    )
    second = continue_stored(
        store, session.id, RunOptions(provider=openai_settings(), transport=FakeTransport())
    )
    t1, t2 = store.track(first), store.track(second)
    first.run_turn("Window one speaking.")
    second.run_turn("Window two speaking.")  # the saved session moved on: this goes to a copy
    assert t1.error is None and t2.error is None
    assert second.id != session.id and "copy" in t2.notes[-1]
    original, copy = store.load(session.id), store.load(second.id)
    assert original.user_turns[-1] == "Window one speaking."
    assert (
        copy.user_turns[-1] == "Window two speaking."
        and copy.user_turns[:2] == (original.user_turns[:2])
    )
    assert copy.name.endswith("(copy)")
    assert original.interrupted == () and copy.interrupted == ()


def test_rename_delete_and_missing_sessions(db):
    store = Store(db)
    a, b = make_session(), make_session()
    store.track(a)
    store.track(b)
    a.run_turn("first conversation")
    b.run_turn("second conversation")
    assert {i.name for i in store.list()} == {"first conversation", "second conversation"}
    store.rename(a.id, "  Board   demo  ")
    assert store.info(a.id).name == "Board demo"
    with pytest.raises(ValueError, match="needs a name"):
        store.rename(a.id, "   ")
    assert store.delete(a.id) is True
    assert store.delete(a.id) is False
    assert [i.id for i in store.list()] == [b.id]
    with pytest.raises(SessionNotFound):
        store.load(a.id)
    with pytest.raises(SessionNotFound):
        store.rename(a.id, "x")
    con = sqlite3.connect(db.removeprefix("sqlite:///"))
    for table in ("ml_turns", "ml_lane_turns", "ml_lane_states"):
        rows = con.execute(f"select count(*) from {table} where session_id = ?", (a.id,)).fetchone()
        assert rows == (0,), table


def test_sessions_with_no_turn_are_not_listed(db):
    store = Store(db)
    store.track(make_session())
    assert store.list() == []


def test_the_database_is_sqlite_in_wal_mode_under_data_by_default(monkeypatch, tmp_path):
    monkeypatch.delenv("MEMORY_LAB_DB_URL")
    from storage import store as store_module

    assert store_module.default_url().endswith("data/memory_lab.sqlite3")
    path = tmp_path / "nested" / "dir" / "s.db"
    Store(f"sqlite:///{path}")
    assert sqlite3.connect(path).execute("pragma journal_mode").fetchone() == ("wal",)


def test_unusable_urls_say_what_to_do():
    with pytest.raises(StoreError, match="unsupported database 'mysql'"):
        Store("mysql://localhost/x")
    with pytest.raises(StoreError, match="not a database URL"):
        Store("not a url at all")


def test_a_json_export_restores_as_a_new_session(db):
    store = Store(db)
    session = make_session()
    store.track(session)
    run_demo(session, 3)
    text = export.to_json(store.load(session.id))
    new_id = store.import_json(text)
    assert new_id != session.id  # the original is never overwritten
    copy = store.load(new_id)
    assert copy.records == store.load(session.id).records
    assert copy.info.source == "import"
    again = continue_stored(
        store, new_id, RunOptions(provider=openai_settings(), transport=FakeTransport())
    )
    assert again.snapshot()["lanes"] == session.snapshot()["lanes"]


def test_a_broken_json_export_changes_nothing(db):
    store = Store(db)
    session = make_session()
    store.track(session)
    run_demo(session, 1)
    good = json.loads(export.to_json(store.load(session.id)))
    before = [(i.id, i.turns, i.lane_turns) for i in store.list()]
    broken = dict(good, lanes={**good["lanes"], "nonsense": good["lanes"]["full"]})
    with pytest.raises(SessionFormatError, match="lane 'nonsense': unknown strategy"):
        store.import_json(json.dumps(broken))
    with pytest.raises(SessionFormatError, match="line 1"):
        store.import_json('{"memory_lab_session": 1,')
    bad_turn = json.loads(json.dumps(good))
    bad_turn["lanes"]["full"]["turns"][0]["turn"] = 9
    with pytest.raises(SessionFormatError, match="turn 9 is outside 1..1"):
        store.import_json(json.dumps(bad_turn))
    assert [(i.id, i.turns, i.lane_turns) for i in store.list()] == before


def test_a_survival_run_is_kept_with_its_session(db):
    from engines.survival import SurvivalConfig, run_survival

    store = Store(db)
    session = make_session()
    store.track(session)
    run_demo(session, 1)
    config = SurvivalConfig(probe_turns=(2, 4)).validate()
    result = run_survival(config).as_dict()
    store.attach_survival(session.id, result)
    saved = Store(db).load(session.id)
    assert saved.survival == json.loads(json.dumps(result))
    assert saved.info.has_survival
    assert len(export.survival_figures(saved)) == 1  # payload only: no recall map
    store.attach_survival(session.id, None)
    assert Store(db).load(session.id).survival is None


class LeakyTransport(FakeTransport):
    """A provider stand-in that (wrongly) puts credentials into the body it reports."""

    def body(self, request, settings):
        body = super().body(request, settings)
        body["api_key"] = PLANTED
        body["headers"] = {"Authorization": f"Bearer {PLANTED}", "x-api-key": PLANTED_ENV}
        return body


def test_no_planted_key_reaches_the_database_or_any_export(db, monkeypatch, tmp_path):
    monkeypatch.setenv("ANTHROPIC_API_KEY", PLANTED_ENV)
    echo = f"the key in my environment is {PLANTED_ENV}"
    transport = LeakyTransport(reply_fn=lambda request: echo)
    session = make_session(transport, provider=openai_settings(api_key=PLANTED))
    store = Store(db)
    store.track(session, app={"provider": {"preset": "openai", "api_key": PLANTED}})
    session.run_turn("Hi! I'm Chiru.")
    session.run_turn(f"I pasted {PLANTED} by mistake, sorry.")
    assert PLANTED in json.dumps(session.lanes["full"].turns[-1].body)  # the leak is real

    saved = store.load(session.id)
    store.attach_survival(session.id, {"config": {"note": PLANTED}, "rows": []})
    new_id = store.import_json(export.to_json(saved))
    files = {
        "report.html": export.to_html(store.load(session.id), payloads=True),
        "summary.md": export.to_markdown(saved),
        "turns.csv": export.to_csv(saved),
        "session.json": export.to_json(saved),
        "copy.json": export.to_json(store.load(new_id)),
    }
    store.close()
    path = Path(db.removeprefix("sqlite:///"))
    database = b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))
    assert b"[redacted]" in database  # something was there to scrub
    for secret in (PLANTED, PLANTED_ENV):
        assert secret.encode() not in database
        for name, text in files.items():
            assert secret not in text, name
    assert '"key_set":true' in database.decode("utf-8", "replace")


def test_a_whole_session_saved_at_once_never_overwrites_another(db):
    store = Store(db)
    session = make_session(provider=openai_settings(api_key=PLANTED))
    run_demo(session, 2)
    first = store.save(session, app={"provider": {"preset": "openai"}}, source="replay")
    second = store.save(session)
    assert first == session.id and second != first
    for sid in (first, second):
        saved = store.load(sid)
        assert saved.records == session.records()
        assert saved.info.source == "replay" and saved.info.lane_turns == 12
    assert store.load(first).settings["app"] == {"provider": {"preset": "openai"}}
    assert PLANTED not in json.dumps(store.load(first).as_dict(), default=str)


def test_a_shared_call_is_saved_with_the_lanes_it_answered(db):
    """Identical requests sent once (lanes/sharing.py): the database keeps, for every lane,
    the one call's body byte for byte and which lanes it answered; a reload gives them back."""
    from tests.lanes.test_sharing import Gate, run_gated

    gate = Gate(chunks=2)
    session = make_session(gate, lanes=("full", "window", "token_window"), share=True)
    tracker = Store(db).track(session)
    records = run_gated(session, gate, fincoach.DEMO_TURNS[0], members=3)
    assert tracker.error is None
    assert len(gate.calls) == 1 and all(len(r.shared) == 3 for r in records.values())
    saved = Store(db).load(session.id)
    assert saved.records == session.records()
    for name, [record] in saved.records.items():
        assert record.shared == records[name].shared
        assert json.dumps(record.body, sort_keys=True) == json.dumps(gate.calls[0], sort_keys=True)
