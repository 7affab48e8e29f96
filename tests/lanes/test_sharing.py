"""Identical requests sent once (lanes/sharing.py): one call answers every lane that asked the
same thing while it ran; what each lane records and remembers is what it would have alone."""

from __future__ import annotations

import threading
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lanes.lane import CANCELLED, ERROR, OK
from lanes.session import Session
from lanes.sharing import SharedCalls, share_key
from memory.lane_spec import LaneSpec
from memory.registry import DEFAULT_LANES, REGISTRY
from memory.types import Completion, Message, Request, TokenCount
from providers import build_body, preset
from providers.bodies import greedy
from providers.fake import FakeTransport
from scenarios import fincoach

SETTINGS = preset("embedded").settings(max_tokens=16)


def make(transport, lanes=DEFAULT_LANES, *, share=True, provider=SETTINGS) -> Session:
    return Session(
        system_prompt=fincoach.SYSTEM_PROMPT,
        lanes=[LaneSpec(n, REGISTRY[n].defaults()) for n in lanes],
        provider=provider,
        transport=transport,
        share=share,
    )


class Gate(FakeTransport):
    """A fake whose replies and upkeep calls wait at a gate: the test opens it once the lanes
    it expects have joined the call (so the overlap is certain, not a matter of timing)."""

    def __init__(self, **options) -> None:
        super().__init__(**options)
        self.open = threading.Event()
        self.upkeep_open = threading.Event()  # open unless a test gathers upkeep calls
        self.upkeep_open.set()
        self.upkeep_calls: list[Request] = []
        self.stopped: list[BaseException] = []
        self.facts_json: str | None = None  # the extractor's reply (None: the fake's, no facts)

    def stream(self, request, settings, on_delta=None):
        assert self.open.wait(10), "the gate was never opened"
        try:
            return super().stream(request, settings, on_delta)
        except BaseException as exc:  # a stream closed by its callback
            self.stopped.append(exc)
            raise

    def as_model_fn(self, settings):
        model = super().as_model_fn(settings)

        def call(request):
            assert self.upkeep_open.wait(10), "the upkeep gate was never opened"
            self.upkeep_calls.append(request)
            if self.facts_json is not None and "JSON" in request.system:
                return Completion(self.facts_json)
            return model(request)

        return call


def wait_for_members(sharing: SharedCalls, count: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(len(m) >= count for m in sharing.running()):
            return
        time.sleep(0.005)
    raise AssertionError(f"no call gathered {count} lanes: {sharing.running()}")


def run_gated(
    session: Session, gate: Gate, text: str, members: int, upkeep: int | None = None, **options
):
    """Run a turn in a thread; open the gate once one call has `members` lanes (and the upkeep
    gate, if asked, once one upkeep call has `upkeep` lanes)."""
    out: dict = {}
    thread = threading.Thread(target=lambda: out.update(session.run_turn(text, **options)))
    if upkeep is not None:
        gate.upkeep_open.clear()
    thread.start()
    assert session.sharing is not None
    wait_for_members(session.sharing, members)
    gate.open.set()
    if upkeep is not None:
        deadline = time.monotonic() + 10
        while not session.sharing._upkeep and time.monotonic() < deadline:
            time.sleep(0.005)
        wait_for_members(session.sharing, upkeep)
        gate.upkeep_open.set()
    thread.join(20)
    assert not thread.is_alive()
    gate.open.clear()
    return out


def test_identical_requests_go_out_once_and_every_lane_records_that_call():
    gate = Gate(chunks=4)
    session = make(gate)
    records = run_gated(session, gate, fincoach.DEMO_TURNS[0], members=len(DEFAULT_LANES))
    # at turn 1 every default lane sends the same request: one call on the wire
    assert len(gate.calls) == 1
    [body] = gate.calls
    sender = records[next(iter(records))].shared[0]
    for name, record in records.items():
        assert record.status == OK
        assert record.body == body  # the body that went out, the sender's
        assert record.reply == f"Reply to: {fincoach.DEMO_TURNS[0]}"
        assert set(record.shared) == set(DEFAULT_LANES) and record.shared[0] == sender, name
        assert record.ttft_s is not None and record.latency_s is not None
    # each lane remembers the turn as if it had sent it alone
    alone = make(FakeTransport(chunks=4), share=False)
    alone.run_turn(fincoach.DEMO_TURNS[0])
    for name in DEFAULT_LANES:
        assert session.lanes[name].memory_state() == alone.lanes[name].memory_state(), name
    # nothing is kept once the call is over: the same request later is a new call
    assert session.sharing is not None and session.sharing.running() == []


def test_identical_upkeep_calls_go_out_once():
    """Two entity lanes (different K, same facts) send the same extraction request."""
    gate = Gate()
    session = Session(
        system_prompt=fincoach.SYSTEM_PROMPT,
        lanes=[LaneSpec("entity", {"k": 2}), LaneSpec("entity", {"k": 3})],
        provider=SETTINGS,
        transport=gate,
        share=True,
    )
    records = run_gated(session, gate, fincoach.DEMO_TURNS[0], members=2, upkeep=2)
    assert len(gate.calls) == 1  # the replies: one call
    assert sorted(r.lane for r in records.values()) == sorted(session.lanes)
    calls = [m for r in records.values() for m in r.maintenance]
    assert [m.kind for m in calls] == ["extraction", "extraction"]
    assert len(gate.upkeep_calls) == 1
    assert all(set(m.shared) == set(session.lanes) for m in calls)
    assert calls[0].body == calls[1].body


def test_a_stopped_lane_leaves_the_call_going_for_the_others():
    gate = Gate(chunks=8)
    session = make(gate, lanes=("full", "window"))
    pieces: dict[str, int] = {}

    def on_delta(name: str, text: str) -> None:
        pieces[name] = pieces.get(name, 0) + 1
        if name == "window" and pieces[name] == 2:
            session.cancel("window")

    records = run_gated(session, gate, fincoach.DEMO_TURNS[0], members=2, on_delta=on_delta)
    assert records["window"].status == CANCELLED
    assert records["full"].status == OK
    assert records["full"].reply == f"Reply to: {fincoach.DEMO_TURNS[0]}"
    assert pieces["window"] == 2  # its stream stopped at the cancel
    assert len(gate.calls) == 1 and gate.stopped == []  # the call went on to its end
    assert session.lanes["window"].memory_state()["turn_numbers"] == []


def test_the_call_is_closed_when_every_lane_following_it_stopped():
    gate = Gate(chunks=8)
    session = make(gate, lanes=("full", "window"))

    def on_delta(name: str, text: str) -> None:
        session.cancel()  # Stop this turn: every lane

    records = run_gated(session, gate, fincoach.DEMO_TURNS[0], members=2, on_delta=on_delta)
    assert {r.status for r in records.values()} == {CANCELLED}
    deadline = time.monotonic() + 5
    while not gate.stopped and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(gate.stopped) == 1  # the one stream was closed by its callback


def test_a_failed_call_fails_every_lane_it_answered_and_the_next_turn_goes_on():
    gate = Gate()
    gate.fail_when = lambda request: True
    session = make(gate, lanes=("full", "window", "token_window"))
    records = run_gated(session, gate, fincoach.DEMO_TURNS[0], members=3)
    assert {r.status for r in records.values()} == {ERROR}
    assert all("injected failure" in (r.error or "") for r in records.values())
    gate.fail_when = None
    records = run_gated(session, gate, fincoach.DEMO_TURNS[1], members=3)
    assert {r.status for r in records.values()} == {OK}


def test_only_requests_at_temperature_zero_are_shared():
    request = Request("sys", (Message("user", "hi"),), TokenCount(1, 1, "x", False))
    assert share_key(request, SETTINGS) is not None
    assert share_key(request, SETTINGS.with_(temperature=0.7)) is None
    assert share_key(request, SETTINGS.with_(temperature=None)) is None
    assert share_key(request, SETTINGS.with_(max_tokens=17)) != share_key(request, SETTINGS)
    assert greedy(preset("openai").settings("gpt-4o-mini"))
    assert not greedy(preset("openai").settings("o3-mini"))  # sent no temperature
    assert not greedy(preset("anthropic").settings())  # Anthropic's API: no temperature sent
    # a sampling session sends every lane's request, however alike
    gate = Gate()
    gate.open.set()
    session = make(gate, provider=SETTINGS.with_(temperature=0.7))
    session.run_turn(fincoach.DEMO_TURNS[0])
    assert len(gate.calls) == len(DEFAULT_LANES)


class Slow(FakeTransport):
    """Answers after a pause, so lanes of one turn overlap as they do on a real model."""

    def stream(self, request, settings, on_delta=None):
        time.sleep(0.01)
        return super().stream(request, settings, on_delta)


lanes_st = st.lists(st.sampled_from(sorted(REGISTRY)), min_size=1, max_size=5, unique=True)
texts_st = st.lists(st.sampled_from(fincoach.DEMO_TURNS), min_size=1, max_size=4)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lanes_st, texts_st)
def test_sharing_changes_no_reply_no_payload_and_no_memory(lanes, texts):
    """For any strategies (those added later too) and turns: with sharing, every lane records
    the reply and remembers what it does with every lane sending its own; a shared record's
    body is the one call's (only the slot may differ, and the fake has none); and no more calls
    go out than without sharing."""
    shared_transport, alone_transport = Slow(chunks=3), Slow(chunks=3)
    shared, alone = make(shared_transport, lanes), make(alone_transport, lanes, share=False)
    for text in texts:
        a, b = shared.run_turn(text), alone.run_turn(text)
        for name in lanes:
            assert a[name].status == b[name].status, name
            assert a[name].reply == b[name].reply, name
            assert a[name].body == b[name].body, name
            assert a[name].counted == b[name].counted, name
            if a[name].shared:
                assert name in a[name].shared
    for name in lanes:
        assert shared.lanes[name].memory_state() == alone.lanes[name].memory_state(), name
    assert len(shared_transport.calls) <= len(alone_transport.calls)


@pytest.mark.parametrize("share", [True, False])
def test_saved_records_keep_who_shared_a_call(share):
    gate = Gate()
    session = make(gate, lanes=("full", "window"), share=share)
    if share:
        run_gated(session, gate, fincoach.DEMO_TURNS[0], members=2)
    else:
        gate.open.set()
        session.run_turn(fincoach.DEMO_TURNS[0])
    again = Session.from_snapshot(session.snapshot(), provider=SETTINGS, transport=gate)
    for name in ("full", "window"):
        record = again.lanes[name].turns[-1]
        assert record == session.lanes[name].turns[-1]
        assert bool(record.shared) == share


def test_upkeep_model_functions_pass_their_completion_through_when_alone():
    sharing = SharedCalls()
    completion = Completion("text", body={"model": "m"})
    fn = sharing.model_fn("lane", SETTINGS, lambda request: completion)
    request = Request("sys", (Message("user", "hi"),), TokenCount(1, 1, "x", False))
    assert fn(request) is completion  # nobody joined: the lane's own call, not marked shared


class SlotGate(Gate):
    """The gated fake with warm-ups, recording the slot of every reply and warm-up."""

    capabilities = frozenset({"warm", "slots"})

    def __init__(self, **options) -> None:
        super().__init__(**options)
        self.replies: list[tuple[str | None, int | None]] = []  # (strategy, id_slot)
        self.slot_of: dict[int, int | None] = {}  # id(request) -> the slot it was sent in
        self.warmed: list[tuple[str | None, int | None]] = []
        self.lock = threading.Lock()

    def stream(self, request, settings, on_delta=None, *, slot=None):
        with self.lock:
            self.replies.append((request.account.strategy, slot))
            self.slot_of[id(request)] = slot
        return super().stream(request, settings, on_delta)

    def body(self, request, settings):
        # the real body: `id_slot` says where it ran
        return build_body(request, settings, self.slot_of.get(id(request)))

    def warm(self, request, settings, *, slot=None):
        with self.lock:
            lane = request.account.strategy if request.account is not None else None
            self.warmed.append((lane, slot))
        return FakeTransport.stream(self, request, settings)

    def as_model_fn(self, settings, *, slot=None):
        return super().as_model_fn(settings)


def test_a_lane_that_followed_a_call_is_held_in_the_slot_of_the_first_with_its_prefix(
    monkeypatch,
):
    """Turn 1: one call answers full, window and entity. Window keeps what full keeps, so its
    next prefix is full's: its own slot is not warmed, and its turn-2 request goes to full's
    slot (shared with full's again). Entity's next prefix holds facts: it warms its own slot
    and sends there."""
    from lanes import slots
    from lanes import warmup as warming

    monkeypatch.setattr(slots, "server_slots", lambda: 12)
    monkeypatch.setattr(warming, "_latest", None)
    gate = SlotGate(chunks=2)
    gate.facts_json = '{"set": {"name": "Chiru"}, "delete": []}'
    lanes = ("full", "window", "entity")
    session = make(gate, lanes, provider=SETTINGS.with_(prompt_cache=True))
    router = session.pacing
    slot = {name: router.pins[name].reply for name in lanes}
    assert len(set(slot.values())) == 3
    gate.open.set()
    assert router.prepare().wait(10)
    gate.open.clear()
    warmed_before = len(gate.warmed)
    first = run_gated(session, gate, fincoach.DEMO_TURNS[0], members=3)
    assert set(first["window"].shared) == set(lanes)
    assert router.settle(10)
    assert router._homes == {"window": ("full", router._homes["window"][1])}
    warmed_slots = {s for _, s in gate.warmed[warmed_before:]}
    assert slot["window"] not in warmed_slots  # held in full's slot: not warmed
    assert {slot["full"], slot["entity"]} <= warmed_slots
    second = run_gated(session, gate, fincoach.DEMO_TURNS[1], members=2)
    assert second["window"].body["id_slot"] == slot["full"]
    assert second["full"].body["id_slot"] == slot["full"]
    assert second["entity"].body["id_slot"] == slot["entity"]
    assert sorted(second["window"].shared) == ["full", "window"]
    # what every lane sent and remembers is what it would have alone
    solo = Gate(chunks=2)
    solo.facts_json = gate.facts_json
    solo.open.set()
    alone = make(solo, lanes, share=False)
    for text in fincoach.DEMO_TURNS[:2]:
        alone.run_turn(text)
    for name in lanes:
        assert session.lanes[name].memory_state() == alone.lanes[name].memory_state(), name
        assert session.lanes[name].turns[-1].reply == alone.lanes[name].turns[-1].reply, name


def test_a_held_lane_goes_to_its_own_slot_once_its_request_leaves_the_held_prefix(
    monkeypatch,
):
    from lanes import slots
    from lanes.sharing import prefix_key
    from lanes.transport import Call

    monkeypatch.setattr(slots, "server_slots", lambda: 12)
    session = make(SlotGate(), ("full", "window"), provider=SETTINGS.with_(prompt_cache=True))
    router = session.pacing
    held = Request(
        "sys", (Message("user", "a"), Message("user", "new")), TokenCount(1, 1, "x", False)
    )
    other = Request(
        "sys", (Message("user", "b"), Message("user", "new")), TokenCount(1, 1, "x", False)
    )
    settings = session.providers["window"]
    router._homes["window"] = ("full", prefix_key(held, settings))
    full, window = router.pins["full"].reply, router.pins["window"].reply
    assert full is not None and window is not None and full != window
    assert router.slot_for(Call(held, settings, "window")) == full
    assert router.slot_for(Call(other, settings, "window")) == window
    assert router.slot_for(Call(held, settings, "full")) == full
