"""A saved session's rows grow with its length, not its square (issue 36, cost growth): each
request message is stored once per session and each body as a plan over the lane's previous
one; turn lists are stored as runs. What loads is what was sent, byte for byte, whether it
was saved turn by turn, as a whole, or by an older version (bodies stored whole)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from storage.deltas import PACKED, LanePacker, LaneUnpacker, expand, pack_record, runs
from storage.errors import SessionFormatError
from storage.records import dumps
from storage.store import SavedSession, Store
from tests.storage.store_support import make_session

POOL = [{"role": r, "content": c} for r in ("user", "assistant") for c in ("a", "b", "ok", "")]
POOL += [{"role": "user", "content": [{"type": "text", "text": "block"}]}, {"content": "x"}]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(min_value=-3, max_value=60), max_size=40))
def test_turn_lists_come_back_as_they_were_in_their_order(turns):
    packed = runs(turns)
    assert expand(json.loads(json.dumps(packed))) == turns
    assert len(packed) <= len(turns)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=3),  # messages dropped from the front
            st.lists(st.integers(min_value=0, max_value=len(POOL) - 1), max_size=4),  # new ones
            st.booleans(),  # the body has no messages list (kept whole)
        ),
        max_size=12,
    )
)
def test_every_body_rebuilds_to_exactly_what_was_sent(steps):
    packer, stored, messages, sent = LanePacker(), [], {}, []
    history: list[dict] = []
    for turn, (drop, new, whole) in enumerate(steps, start=1):
        history = history[drop:] + [POOL[i] for i in new]
        body = {"model": "m", "input": "x"} if whole else {"model": "m", "messages": list(history),
                                                           "stream": True}  # fmt: skip
        packed = packer.pack(body, ["sk-secret"])
        messages.update(packed.new)
        packer.commit(packed)
        stored.append((turn, packed.text, packed.body_format))
        sent.append(body)
    unpacker = LaneUnpacker("full", packer.log, messages)
    for (turn, text, body_format), body in zip(stored, sent, strict=True):
        rebuilt = unpacker.body(turn, text, body_format)
        assert rebuilt == body and dumps(rebuilt) == dumps(body)
        assert list(rebuilt) == list(body)  # key order too


def test_a_failed_write_appends_nothing_and_a_body_needs_no_other_row():
    packer = LanePacker()
    first = packer.pack({"messages": [POOL[0]]}, [])
    packer.commit(first)
    lost = packer.pack({"messages": [POOL[0], POOL[1]]}, [])  # its write failed: no commit
    again = packer.pack({"messages": [POOL[0], POOL[1]]}, [])
    assert again == lost and again.start == 1 and again.appended == (*lost.new,)
    packer.commit(again)
    third = packer.pack({"messages": [POOL[2], POOL[0], POOL[1]]}, [])
    packer.commit(third)
    assert json.loads(third.text)["messages"]["plan"] == [[2, 3], [0, 2]]
    unpacker = LaneUnpacker("x", packer.log, {**first.new, **again.new, **third.new})
    # turn 2's row is gone: turn 3 still rebuilds from the log alone
    assert unpacker.body(3, third.text, third.body_format)["messages"] == [
        POOL[2],
        POOL[0],
        POOL[1],
    ]


def test_a_damaged_plan_is_a_format_error_naming_the_body():
    unpacker = LaneUnpacker("full", ["h"], {"h": "{}"})
    for plan in ([[0, 2]], [["a", 1]], [[1, 0]], [3]):
        text = json.dumps({"messages": {"plan": plan}})
        with pytest.raises(SessionFormatError, match=r"lanes\['full'\].turns \(turn 4\).body"):
            unpacker.body(4, text, PACKED)
    with pytest.raises(SessionFormatError, match="message h2 is missing"):
        LaneUnpacker("full", ["h2"], {}).body(
            1, json.dumps({"messages": {"plan": [[0, 1]]}}), PACKED
        )


def stored_bytes(path: Path) -> int:
    """The bytes of every row a session holds (bodies, records, messages, states)."""
    with sqlite3.connect(path) as conn:
        total = 0
        for table, cols in (("ml_lane_turns", "record, body"), ("ml_messages", "message"),
                            ("ml_lane_log", "lane, hash"), ("ml_lane_states", "state"),
                            ("ml_turns", "user_text")):  # fmt: skip
            for row in conn.execute(f"select {cols} from {table}"):
                total += sum(len(v or "") for v in row)
    return total


def run(path: Path, turns: int) -> tuple[object, int]:
    session = make_session(lanes=("full", "window", "summary_buffer"))
    store = Store(f"sqlite:///{path}")
    tracker = store.track(session)
    for n in range(1, turns + 1):
        session.run_turn(f"Turn {n}: my rent went up to ₹{20_000 + 500 * n:,} a month.")
    assert tracker.error is None
    return session, stored_bytes(path)


def test_stored_bytes_grow_linearly_with_the_turns_and_load_as_sent(tmp_path):
    short, small = run(tmp_path / "short.sqlite3", 30)
    long, large = run(tmp_path / "long.sqlite3", 60)
    assert large / small < 2.3, (small, large)  # bodies stored whole (the old code): 2.6
    saved = Store(f"sqlite:///{tmp_path / 'long.sqlite3'}").load(long.id)
    assert saved.records == long.records()
    with sqlite3.connect(tmp_path / "long.sqlite3") as conn:
        formats = {r[0] for r in conn.execute("select body_format from ml_lane_turns")}
        record = json.loads(conn.execute(
            "select record from ml_lane_turns where lane='full' order by turn desc"
        ).fetchone()[0])  # fmt: skip
    assert formats == {PACKED}
    assert record["account"]["kept"] == [[1, 59]]  # a run, not 59 numbers


def test_a_whole_session_saved_at_once_packs_the_same_and_loads_as_sent(tmp_path):
    session, _ = run(tmp_path / "live.sqlite3", 12)
    store = Store(f"sqlite:///{tmp_path / 'copy.sqlite3'}")
    sid = store.save(SavedSession.from_session(session))
    assert store.load(sid).records == session.records()
    with sqlite3.connect(tmp_path / "copy.sqlite3") as conn:
        counts = conn.execute("select count(*), count(distinct hash) from ml_messages").fetchone()
    assert counts[0] == counts[1] and counts[0] < 12 * 3 * 3


def test_rows_written_whole_by_an_older_version_still_load(tmp_path):
    session, _ = run(tmp_path / "old.sqlite3", 6)
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as conn:  # rewrite every row as an older version stored it
        for lane, records in session.records().items():
            for r in records:
                conn.execute(
                    "update ml_lane_turns set body=?, body_format=NULL, record=? "
                    "where session_id=? and lane=? and turn=?",
                    (dumps(r.body), json.dumps(json.loads(conn.execute(
                        "select record from ml_lane_turns where session_id=? and lane=? and turn=?",
                        (session.id, lane, r.turn)).fetchone()[0]) | {
                        "account": r.account.as_dict()}), session.id, lane, r.turn),
                )  # fmt: skip
        conn.execute("delete from ml_messages")
        conn.execute("delete from ml_lane_log")
    assert Store(f"sqlite:///{path}").load(session.id).records == session.records()


def test_deleting_a_session_deletes_its_messages(tmp_path):
    session, _ = run(tmp_path / "d.sqlite3", 3)
    store = Store(f"sqlite:///{tmp_path / 'd.sqlite3'}")
    assert store.delete(session.id)
    with sqlite3.connect(tmp_path / "d.sqlite3") as conn:
        assert conn.execute("select count(*) from ml_messages").fetchone()[0] == 0
        assert conn.execute("select count(*) from ml_lane_log").fetchone()[0] == 0


def test_record_turn_lists_are_packed_as_runs():
    data = {"account": {"kept": [1, 2, 3, 4, 9], "dropped": [], "retrieved": [7, 3],
                        "parts": [["history", 10, [1, 2, 3]]]}}  # fmt: skip
    packed = pack_record(data)
    assert packed["account"]["kept"] == [[1, 4], 9]
    assert packed["account"]["parts"] == [["history", 10, [[1, 3]]]]
    assert data["account"]["kept"] == [1, 2, 3, 4, 9]  # the record itself is left alone
