"""Stopping a turn: the stream closes, the turn is marked cancelled, memory never sees it.
Upkeep calls get their own output limits."""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace

from hypothesis import given, settings
from hypothesis import strategies as st

from lanes.lane import CANCELLED, OK, Lane
from lanes.session import Session, UpkeepLimits
from memory.lane_spec import LaneSpec
from memory.maintenance import Upkeep
from memory.registry import DEFAULT_LANES, REGISTRY
from memory.tokens import TokenCounter
from memory.types import Completion
from providers.fake import FakeTransport
from scenarios import fincoach


@dataclass(frozen=True)
class Settings:
    model: str = "gpt-4o"
    max_tokens: int = 200

    def with_(self, **changes):
        return replace(self, **changes)


def make(transport, lanes=DEFAULT_LANES, **options) -> Session:
    return Session(
        system_prompt=fincoach.SYSTEM_PROMPT,
        lanes=[LaneSpec(n, REGISTRY[n].defaults()) for n in lanes],
        provider=Settings(),
        transport=transport,
        **options,
    )


def memory_of(session: Session) -> dict[str, dict]:
    return {name: lane.memory_state() for name, lane in session.lanes.items()}


def test_stop_mid_stream_closes_every_lane_and_keeps_the_turn_out_of_memory():
    transport = FakeTransport(chunks=8)
    session = make(transport)
    session.run_turn(fincoach.DEMO_TURNS[0])
    before = memory_of(session)
    pieces: dict[str, int] = {}
    lock = threading.Lock()

    def on_delta(name: str, text: str) -> None:
        with lock:
            pieces[name] = pieces.get(name, 0) + 1
            if pieces[name] == 2:
                session.cancel()  # the Stop button, pressed while replies stream

    records = session.run_turn(fincoach.DEMO_TURNS[1], on_delta)
    assert {r.status for r in records.values()} == {CANCELLED}
    # every stream stopped at the piece after the cancel, far from its 8 pieces
    assert max(pieces.values()) <= 2
    assert memory_of(session) == before
    assert session.pending_lanes() == []  # a cancelled turn is finished, not pending
    for record in records.values():
        assert record.reply == "" and "not in the lane's memory" in (record.error or "")


def test_stopping_one_lane_leaves_the_others_answering():
    session = make(FakeTransport())
    turn = session.begin_turn("Hi! I'm Chiru.")
    assert session.cancel("window") == turn
    records = {name: session.run_lane(name, turn) for name in session.lanes}
    assert records.pop("window").status == CANCELLED
    assert {r.status for r in records.values()} == {OK}
    assert len(session.lanes["window"].strategy.history) == 0
    assert len(session.lanes["full"].strategy.history) == 1


def test_a_cancelled_turn_can_be_retried_and_then_counts():
    session = make(FakeTransport(), lanes=("full",))
    turn = session.begin_turn("Hi! I'm Chiru.")
    session.cancel()
    assert session.run_lane("full", turn).status == CANCELLED
    assert session.lanes["full"].can_retry(turn)
    retried = session.retry("full")
    assert retried.status == OK
    assert [t.user for t in session.lanes["full"].strategy.history.turns] == ["Hi! I'm Chiru."]


def test_stop_during_upkeep_drops_the_summary_and_facts_of_that_turn():
    counter = TokenCounter()
    stop = threading.Event()
    model = FakeTransport().as_model_fn(None)
    seen: list[str] = []

    def extract(request):
        return Completion('{"set": {"name": "Chiru"}, "delete": []}')

    lane = Lane("hybrid", "You help.", counter=counter, upkeep=Upkeep(model, extract))
    send = FakeTransport().stream

    def on_reply(text: str) -> None:  # the reply is on screen; upkeep starts after this
        seen.append(text)
        stop.set()

    record = lane.run(1, "I'm Chiru.", send, cancelled=stop.is_set, on_reply=on_reply)
    assert seen == ["Reply to: I'm Chiru."]
    assert record.status == CANCELLED and record.reply == seen[0]
    assert lane.strategy.facts == {} and len(lane.strategy.history) == 0
    assert record.maintenance and record.maintenance[0].kind == "extraction"  # it did run
    stop.clear()
    assert lane.run(2, "I'm Chiru.", send, cancelled=stop.is_set).status == OK
    assert lane.strategy.facts == {"name": "Chiru"}


@settings(max_examples=25, deadline=None)
@given(
    stops=st.lists(st.sampled_from(["none", "before", "stream", "upkeep"]), min_size=1, max_size=6)
)
def test_memory_after_stops_equals_memory_of_the_turns_that_finished(stops):
    """Whatever turns are stopped, and wherever, each lane's memory is exactly that of a lane
    that was only ever sent the turns that finished."""
    lanes = ("full", "window", "summary", "entity", "hybrid", "retrieval")
    stopped = make(FakeTransport(chunks=3), lanes=lanes)
    clean = make(FakeTransport(chunks=3), lanes=lanes)
    for i, where in enumerate(stops):
        text = f"Turn {i}: my savings are ₹{1000 * (i + 1)}."
        turn = stopped.begin_turn(text)
        if where == "before":
            stopped.cancel()
        for name in stopped.lanes:
            hooks = {}
            if where == "stream":
                hooks["on_delta"] = lambda _t, n=name: stopped.cancel(n)
            if where == "upkeep":
                hooks["on_reply"] = lambda _t, n=name: stopped.cancel(n)
            record = stopped.run_lane(name, turn, **hooks)
            assert record.status == (OK if where == "none" else CANCELLED)
        if where == "none":
            clean.run_turn(text, parallel=False)
    for name in lanes:
        a = stopped.lanes[name].memory_state()
        b = clean.lanes[name].memory_state()
        assert a["memory"] == b["memory"], name
        assert len(a["turn_numbers"]) == len(b["turn_numbers"])


class LimitRecorder(FakeTransport):
    def __init__(self) -> None:
        super().__init__()
        self.limits: list[int] = []

    def as_model_fn(self, settings):
        self.limits.append(settings.max_tokens)
        return super().as_model_fn(settings)


def test_upkeep_calls_get_their_own_output_limits():
    tight = LimitRecorder()
    session = make(tight, upkeep=UpkeepLimits(summary=128, extraction=96))
    # a summary model function and an extraction one per lane, routed as that lane's
    assert sorted(tight.limits) == [96] * len(session.lanes) + [128] * len(session.lanes)
    loose = LimitRecorder()
    make(loose)  # today's behaviour: upkeep writes as much as a reply
    assert set(loose.limits) == {200} and len(loose.limits) == 2 * len(session.lanes)
