"""The session fans a turn out to lanes: in parallel, with failures contained per lane."""

from __future__ import annotations

import time
from dataclasses import dataclass

import pytest

from lanes.lane import ERROR, OK, OVERFLOW, LaneTurn
from lanes.session import Session
from memory.errors import InvalidMessage
from memory.lane_spec import LaneSpec
from memory.registry import DEFAULT_LANES, REGISTRY
from providers.fake import FakeTransport
from scenarios import fincoach


@dataclass(frozen=True)
class Settings:
    model: str = "gpt-4o"


def make(transport=None, lanes=DEFAULT_LANES, **params):
    specs = [LaneSpec(n, params.get(n, {})) for n in lanes]
    return Session(
        system_prompt=fincoach.SYSTEM_PROMPT,
        lanes=specs,
        provider=Settings(),
        transport=transport or FakeTransport(),
    )


def test_a_message_reaches_every_lane_and_each_records_its_request():
    transport = FakeTransport()
    session = make(transport)
    results = session.run_turn("Hi! I'm Chiru.")
    assert set(results) == set(DEFAULT_LANES)
    assert all(r.status == OK and r.reply == "Reply to: Hi! I'm Chiru." for r in results.values())
    assert len(transport.calls) == len(DEFAULT_LANES)
    for record in results.values():
        assert record.body in transport.calls  # the recorded body is the one that was sent
        assert record.n_messages == 2 and record.counted == 132 + session.counter.count(
            "Hi! I'm Chiru."
        )


def test_full_buffer_grows_2_4_6_8_10_and_window_stops_growing():
    session = make(lanes=("full", "window"), window={"k": 2})
    for text in fincoach.DEMO_TURNS:
        session.run_turn(text)
    full = [r.n_messages for r in session.lanes["full"].turns]
    window = [r.n_messages for r in session.lanes["window"].turns]
    assert full == [2, 4, 6, 8, 10]
    assert window == [2, 4, 6, 6, 6]


def test_lanes_run_in_parallel():
    lanes = ("full", "window", "token_window", "retrieval")
    serial = make(FakeTransport(latency=0.3), lanes=lanes)
    t0 = time.perf_counter()
    serial.run_turn("hello", parallel=False)
    one_by_one = time.perf_counter() - t0
    parallel = make(FakeTransport(latency=0.3), lanes=lanes)
    t0 = time.perf_counter()
    parallel.run_turn("hello")
    together = time.perf_counter() - t0
    # a ratio within one run, not a wall-clock bound: 4 lanes of 0.3 s overlap
    assert together < one_by_one * 0.6


def test_a_failing_lane_does_not_stop_the_others_and_can_be_retried():
    transport = FakeTransport(fail_when=lambda r: r.account.strategy == "window")
    session = make(transport)
    results = session.run_turn("My salary is ₹1,20,000.")
    assert results["window"].status == ERROR and "injected failure" in results["window"].error
    assert all(r.status == OK for name, r in results.items() if name != "window")
    # the failed turn is not in the window lane's memory
    assert len(session.lanes["window"].strategy.history) == 0
    assert session.lanes["window"].can_retry(session.turn)
    transport.fail_when = None
    retried = session.retry("window")
    assert retried.status == OK and len(session.lanes["window"].turns) == 1
    assert len(session.lanes["window"].strategy.history) == 1


def test_a_failed_turn_stays_a_marked_gap_when_the_conversation_moves_on():
    transport = FakeTransport(fail_when=lambda r: "fail" in r.messages[-1].content)
    session = make(transport, lanes=("full",))
    session.run_turn("one")
    session.run_turn("please fail")
    third = session.run_turn("three")["full"]
    assert [t.status for t in session.lanes["full"].turns] == [OK, ERROR, OK]
    assert third.account.kept == (1,) and third.n_messages == 4
    assert not session.lanes["full"].can_retry(session.turn)


def test_a_message_too_big_for_a_lane_overflows_only_that_lane():
    session = make(lanes=("full", "token_window"), token_window={"budget": 300})
    huge = "money " * 400
    results = session.run_turn(huge)
    assert results["full"].status == OK
    assert results["token_window"].status == OVERFLOW
    assert "budget allows 300" in results["token_window"].error


def test_provider_exceptions_become_lane_errors():
    class Exploding(FakeTransport):
        def stream(self, request, settings, on_delta=None):
            raise ConnectionError("connection refused")

    session = make(Exploding(), lanes=("full", "window"))
    results = session.run_turn("hello")
    assert {r.status for r in results.values()} == {ERROR}
    assert "connection refused" in results["full"].error


def test_empty_messages_are_refused_before_any_lane_runs():
    transport = FakeTransport()
    session = make(transport)
    with pytest.raises(InvalidMessage):
        session.run_turn("   ")
    assert session.turn == 0 and transport.calls == []


def test_streaming_deltas_reach_the_callback():
    seen: dict[str, str] = {}
    session = make(FakeTransport(chunks=5), lanes=("full", "window"))
    session.run_turn(
        "stream me", on_delta=lambda lane, d: seen.__setitem__(lane, seen.get(lane, "") + d)
    )
    assert seen == {"full": "Reply to: stream me", "window": "Reply to: stream me"}


def test_lane_turn_round_trips_through_a_dict():
    session = make(lanes=("entity",))
    record = session.run_turn("my name is Chiru")["entity"]
    assert LaneTurn.from_dict(record.as_dict()) == record


def test_all_eight_strategies_can_run_as_lanes():
    session = make(lanes=tuple(REGISTRY))
    for text in fincoach.DEMO_TURNS:
        results = session.run_turn(text)
        assert all(r.ok for r in results.values())


def test_duplicate_or_empty_lane_lists_are_refused():
    with pytest.raises(ValueError, match="would be identical"):
        make(lanes=("full", "full"))
    with pytest.raises(ValueError, match="at least one"):
        make(lanes=())


def test_a_session_snapshot_restores_to_the_same_next_requests():
    import json

    transport = FakeTransport()
    session = make(transport, lanes=tuple(REGISTRY))
    for text in fincoach.DEMO_TURNS:
        session.run_turn(text)
    data = json.loads(json.dumps(session.snapshot()))
    restored = Session.from_snapshot(data, provider=Settings(), transport=FakeTransport())
    assert restored.turn == 5 and restored.records() == session.records()
    a = session.run_turn("What is my name?")
    b = restored.run_turn("What is my name?")
    for name in REGISTRY:
        assert a[name].body == b[name].body


def test_listeners_see_every_recorded_turn():
    seen = []
    session = make(lanes=("full", "window"))
    session.listeners.append(lambda s, record: seen.append((record.lane, record.turn)))
    session.run_turn("one")
    assert sorted(seen) == [("full", 1), ("window", 1)]
