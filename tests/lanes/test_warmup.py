"""Warming the embedded model before a turn (lanes/warmup.py, driven by the embedded router of
lanes/embedded_router.py): one probe per lane with the lane's own prefix, never a lane turn,
joined by the next session, and never waited for by a lane."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, replace

import pytest

from lanes import warmup
from lanes.session import Session
from memory.lane_spec import LaneSpec
from memory.maintenance import EXTRACTION_SYSTEM
from memory.registry import DEFAULT_LANES, REGISTRY
from memory.types import Usage
from providers.fake import FakeReply, FakeTransport
from scenarios import fincoach


@dataclass(frozen=True)
class Settings:
    kind: str = "embedded"
    model: str = "smollm2-135m-instruct"
    base_url: str | None = None
    max_tokens: int = 80
    prompt_cache: bool | None = True

    def with_(self, **changes):
        return replace(self, **changes)


class WarmingTransport(FakeTransport):
    """The fake provider, declaring the real transport's capabilities (records its probes)."""

    capabilities = frozenset({"warm", "slots"})

    def __init__(self, gate: threading.Event | None = None, fail: bool = False) -> None:
        super().__init__(chunks=2)
        self.gate, self.fail = gate, fail
        self.warmed: list[tuple[dict, int]] = []
        self.lock = threading.Lock()

    def stream(self, request, settings, on_delta=None, *, slot=None):
        return super().stream(request, settings, on_delta)

    def as_model_fn(self, settings, *, slot=None):
        return super().as_model_fn(settings)

    def warm(self, request, settings, *, slot=None):
        if self.gate is not None:
            assert self.gate.wait(10)
        if self.fail:
            raise ConnectionError("the server went away")
        with self.lock:
            self.warmed.append((self.body(request, settings), settings.max_tokens))
        return FakeReply("x", Usage(input=request.tokens.with_overhead, output=1), {})


@pytest.fixture(autouse=True)
def _no_leftover_warmup(monkeypatch):
    monkeypatch.setattr(warmup, "_latest", None)  # each test starts with no warm-up kept


def lane_warmups(session: Session) -> dict:
    """The after-upkeep warm-ups of the session's router ({} where no router is stacked)."""
    return getattr(session.pacing, "lane_warmups", {})


def make(transport, settings=Settings(), lanes=DEFAULT_LANES, prompt=fincoach.SYSTEM_PROMPT):
    return Session(
        system_prompt=prompt,
        lanes=[LaneSpec(n, REGISTRY[n].defaults()) for n in lanes],
        provider=settings,
        transport=transport,
    )


def test_every_lane_gets_a_one_token_probe_with_its_real_prefix_and_nothing_is_recorded():
    transport = WarmingTransport()
    session = make(transport)
    seen = []
    session.listeners.append(lambda s, record: seen.append(record))
    before = {name: lane.memory_state() for name, lane in session.lanes.items()}
    warm = session.pacing.prepare()
    assert warm is not None and warm.wait(10)
    assert session.pacing.prepare() is warm  # idempotent: one warm-up per session
    fact_lanes = [n for n, lane in session.lanes.items() if lane.spec.cls.uses_facts]
    assert fact_lanes  # entity and hybrid: their extraction instructions are warmed too
    assert len(transport.warmed) == len(session.lanes) + len(fact_lanes)
    assert {tokens for _, tokens in transport.warmed} == {1}
    assert warm.stats.calls == len(transport.warmed) and warm.stats.failed == 0
    assert warm.stats.tokens_read > 0
    upkeep = [b for b, _ in transport.warmed if b["messages"][0]["content"] == EXTRACTION_SYSTEM]
    assert len(upkeep) == len(fact_lanes)
    assert all(b["messages"][1]["content"].startswith("Current facts: {}") for b in upkeep)
    transport.warmed = [w for w in transport.warmed if w[0] not in upkeep]
    # not a turn: no record, no listener call, no memory change, no lane call
    assert seen == [] and transport.calls == []
    assert all(not lane.turns for lane in session.lanes.values())
    assert {name: lane.memory_state() for name, lane in session.lanes.items()} == before
    # what was warmed is the prefix of what each lane sends on turn 1
    probes = sorted(body["messages"][:-1] for body, _ in transport.warmed)
    session.run_turn(fincoach.DEMO_TURNS[0])
    sent = sorted(body["messages"][:-1] for body in transport.calls)
    assert probes == sent
    assert all(m[0]["content"] == fincoach.SYSTEM_PROMPT for m in probes)


@pytest.mark.parametrize(
    "settings",
    [Settings(kind="openai"), Settings(prompt_cache=False), Settings(prompt_cache=None)],
    ids=["hosted", "cache-off", "cache-default"],
)
def test_no_warm_up_where_it_would_cost_or_not_help(settings):
    transport = WarmingTransport()
    session = make(transport, settings)
    assert session.pacing.prepare() is None
    session.run_turn("Hello there")
    assert transport.warmed == []


def test_a_transport_without_warm_is_never_warmed():
    transport = FakeTransport()
    session = make(transport)
    assert session.pacing.prepare() is None
    session.run_turn("Hello there")
    assert len(transport.calls) == len(session.lanes)  # only the lanes' own requests


def test_a_lane_never_waits_for_a_warm_up_that_hangs():
    gate = threading.Event()  # every warm-up call hangs until the gate opens
    transport = WarmingTransport(gate=gate)
    session = make(transport, lanes=["full", "entity"])
    warm = session.pacing.prepare()
    assert warm is not None and not warm.done.is_set()
    records: dict = {}
    worker = threading.Thread(target=lambda: records.update(session.run_turn("Hi")))
    worker.start()
    worker.join(10)  # a bound, not a timing claim: a lane that waited would hang on the gate
    stuck = worker.is_alive()
    gate.set()
    assert not stuck, "turn 1 waited for a warm-up"
    assert all(r.ok for r in records.values()) and len(transport.calls) == 2
    assert warm.wait(10)
    wait_lane_warmups(session)


def test_settling_a_hanging_warm_up_is_bounded_and_a_raising_one_settles():
    gate = threading.Event()
    session = make(WarmingTransport(gate=gate), lanes=["full"])
    session.run_turn("Hi")
    assert not session.pacing.settle(0.2)  # hangs: the bound holds, nothing raises
    gate.set()
    assert session.pacing.settle(10)
    failing = make(WarmingTransport(fail=True), lanes=["full"])
    failing.run_turn("Hi")
    assert failing.pacing.settle(10)  # a warm-up that raised has ended
    assert all(w.stats.failed == w.stats.calls for w in lane_warmups(failing).values())
    records = failing.run_turn("Again")
    assert all(r.ok for r in records.values())


def test_the_next_session_with_the_same_prefixes_joins_an_unused_warm_up():
    transport = WarmingTransport()
    first = make(transport)
    warm = first.pacing.prepare()
    assert warm is not None and warm.wait(10)
    second = make(transport)  # the page's Play button: a new session, same lanes and prompt
    assert second.pacing.prepare() is warm
    calls = len(transport.warmed)
    second.run_turn("Hi")  # uses it
    wait_lane_warmups(second)
    after = sum(w.stats.calls for w in lane_warmups(second).values())  # its next prefixes
    third = make(transport)
    fresh = third.pacing.prepare()
    assert fresh is not None and fresh is not warm and fresh.wait(10)
    assert len(transport.warmed) == 2 * calls + after
    other = make(transport, prompt="You are a pirate.")  # other prefixes: its own warm-up
    assert other.pacing.prepare() is not fresh


def test_a_failing_warm_up_fails_nothing():
    transport = WarmingTransport(fail=True)
    session = make(transport)
    warm = session.pacing.prepare()
    assert warm is not None and warm.wait(10)
    assert warm.stats.failed == warm.stats.calls > 0 and warm.stats.tokens_read == 0
    records = session.run_turn("Hi")
    assert all(r.ok for r in records.values())


def test_a_conversation_under_way_warms_each_lane_with_its_memory():
    transport = WarmingTransport()
    session = make(transport, lanes=["full", "window"])
    session.run_turn(fincoach.DEMO_TURNS[0])
    wait_lane_warmups(session)
    warm = session.pacing.prepare()
    assert warm is not None and warm.wait(10)
    for body, _ in transport.warmed:
        roles = [m["role"] for m in body["messages"]]
        assert roles == ["system", "user", "assistant", "user"]
        assert body["messages"][1]["content"] == fincoach.DEMO_TURNS[0]


@pytest.mark.embedded
def test_on_the_embedded_model_turn_one_reads_only_the_new_message_after_a_warm_up():
    import uuid

    from providers import preset

    settings = preset("embedded").settings(max_tokens=4, prompt_cache=True)
    lanes = ["full", "window", "token_window"]

    def first_turn(warm: bool) -> list[tuple[int, int]]:
        # a prompt no earlier request has used: its own marker first, so no slot holds it
        prompt = f"Session {uuid.uuid4().hex}. {fincoach.SYSTEM_PROMPT}"
        session = Session(
            system_prompt=prompt,
            lanes=[LaneSpec(n, REGISTRY[n].defaults()) for n in lanes],
            provider=settings,
        )
        if warm:
            warmed = session.pacing.prepare()
            assert warmed is not None and warmed.wait(300)
            assert warmed.stats.failed == 0 and warmed.stats.tokens_read > 100 * len(lanes)
        records = session.run_turn(fincoach.DEMO_TURNS[0]).values()
        assert all(r.ok for r in records), [r.error for r in records]
        # each lane's after-turn warm-up reads into the lane's pinned slot, the same slots the
        # next session's lanes get: let them end, or one may land after that session's warm-up
        # and take its slot (seen in CI: one lane of three re-read 212 tokens)
        assert session.pacing.settle(300)
        return [(r.billed_input or 0, r.cached_input or 0) for r in records]

    cold, warmed = first_turn(False), first_turn(True)
    assert all(cached < 10 for _, cached in cold), cold
    # every lane found its system prompt in a slot: it read only the message (and template)
    assert all(total - cached < 50 and cached > 150 for total, cached in warmed), warmed


# ---- after upkeep: each lane's next prefix -------------------------------------------------


def wait_lane_warmups(session: Session) -> None:
    for warm in list(lane_warmups(session).values()):
        assert warm.wait(10)


def test_after_a_turn_each_lane_warms_exactly_the_prefix_its_next_turn_sends():
    transport = WarmingTransport()
    session = make(transport)
    session.run_turn(fincoach.DEMO_TURNS[0])
    wait_lane_warmups(session)
    assert set(lane_warmups(session)) == set(session.lanes)  # every lane, none waited for
    fact_lanes = [n for n, lane in session.lanes.items() if lane.spec.cls.uses_facts]
    assert len(transport.warmed) == len(session.lanes) + len(fact_lanes)
    assert {tokens for _, tokens in transport.warmed} == {1}
    upkeep = [b for b, _ in transport.warmed if b["messages"][0]["content"] == EXTRACTION_SYSTEM]
    # the extraction instructions with the facts as this turn's upkeep left them
    facts = sorted(
        json.dumps(dict(session.lanes[n].strategy.facts), sort_keys=True, ensure_ascii=False)
        for n in fact_lanes
    )
    assert sorted(b["messages"][1]["content"].split("\n")[0] for b in upkeep) == [
        f"Current facts: {f}" for f in facts
    ]
    probes = sorted((b["messages"][:-1] for b, _ in transport.warmed if b not in upkeep), key=str)
    assert all(len(p) > 1 for p in probes)  # the conversation so far, not just the system
    before = len(transport.calls)
    session.run_turn(fincoach.DEMO_TURNS[1])
    sent = sorted((body["messages"][:-1] for body in transport.calls[before:]), key=str)
    assert probes == sent


def test_after_upkeep_warm_ups_change_nothing_that_is_sent_or_remembered():
    def play(transport):
        session = make(transport)
        for text in fincoach.DEMO_TURNS[:3]:
            session.run_turn(text)
            wait_lane_warmups(session)
        # lanes answer in threads of their own: the same bodies, in whatever order they came
        sent = sorted(json.dumps(body, sort_keys=True) for body in transport.calls)
        return sent, {n: lane.memory_state() for n, lane in session.lanes.items()}

    warming = WarmingTransport()
    plain = FakeTransport(chunks=2)
    assert play(warming) == play(plain)
    assert warming.warmed  # it did warm


@pytest.mark.parametrize(
    "settings",
    [Settings(kind="openai"), Settings(kind="anthropic"), Settings(prompt_cache=False)],
    ids=["openai", "anthropic", "cache-off"],
)
def test_no_after_upkeep_warm_up_off_the_embedded_model_with_its_cache(settings):
    transport = WarmingTransport()
    session = make(transport, settings)
    session.run_turn(fincoach.DEMO_TURNS[0])
    session.run_turn(fincoach.DEMO_TURNS[1])
    assert lane_warmups(session) == {} and transport.warmed == []


def test_a_lane_never_waits_for_its_after_upkeep_warm_up():
    gate = threading.Event()  # every warm-up call hangs until the gate opens
    transport = WarmingTransport(gate=gate)
    session = make(transport, lanes=["full", "entity"])
    session.run_turn(fincoach.DEMO_TURNS[0])
    assert len(lane_warmups(session)) == 2
    assert all(not w.done.is_set() for w in lane_warmups(session).values())
    records: dict = {}
    worker = threading.Thread(
        target=lambda: records.update(session.run_turn(fincoach.DEMO_TURNS[1]))
    )
    worker.start()
    worker.join(10)  # a bound, not a timing claim: a lane that waited would hang on the gate
    stuck = worker.is_alive()
    gate.set()  # (lets a hung worker end, so a failure here ends too)
    assert not stuck, "turn 2 waited for an after-upkeep warm-up"
    assert all(r.ok for r in records.values()) and len(transport.calls) == 4
    wait_lane_warmups(session)


def test_a_warm_up_not_yet_sent_when_the_next_turn_begins_is_skipped():
    transport = WarmingTransport()
    session = make(transport, lanes=["full", "entity"])
    session.run_turn(fincoach.DEMO_TURNS[0])
    wait_lane_warmups(session)
    sent = len(transport.warmed)
    late = session.pacing.after_upkeep("entity", turn=0)  # turn 1 has begun since turn 0
    assert late is not None and late.wait(10)
    assert late.stats.skipped == late.stats.calls == 2 and len(transport.warmed) == sent


def test_an_unpinned_last_lane_is_not_warmed_when_the_next_turn_is_queued(monkeypatch):
    monkeypatch.setenv("MEMORY_LAB_EMBEDDED_PIN", "0")  # the server picks every call's slot
    transport = WarmingTransport()
    session = make(transport)
    assert all(p.reply is None for p in session.pacing.pins.values())
    session.pacing.queue_next(True)  # the demo: the next turn begins when this one ends
    session.run_turn(fincoach.DEMO_TURNS[0], parallel=False)  # lanes finish in order
    wait_lane_warmups(session)
    *first, last = session.lanes
    assert sorted(lane_warmups(session)) == sorted(first)
    session.pacing.queue_next(False)  # a person types the next message: the last lane too
    session.run_turn(fincoach.DEMO_TURNS[1], parallel=False)
    wait_lane_warmups(session)
    assert last in lane_warmups(session)


def test_a_pinned_last_lane_is_warmed_even_when_the_next_turn_is_queued():
    transport = WarmingTransport()
    session = make(transport)
    assert sorted(p.reply for p in session.pacing.pins.values()) == list(range(len(DEFAULT_LANES)))
    session.pacing.queue_next(True)
    session.run_turn(fincoach.DEMO_TURNS[0], parallel=False)  # lanes finish in order
    wait_lane_warmups(session)
    assert sorted(lane_warmups(session)) == sorted(session.lanes)  # the last one too
    assert session.pacing.settle(10)


def test_a_failed_or_cancelled_turn_warms_nothing():
    transport = WarmingTransport()
    transport.fail_when = lambda request: True
    session = make(transport, lanes=["full", "window"])
    records = session.run_turn("Hi")
    assert not any(r.ok for r in records.values())
    transport.fail_when = None
    session.cancel()
    session.run_lane("full", session.turn)  # stopped before sending
    assert lane_warmups(session) == {} and transport.warmed == []


@pytest.mark.embedded
def test_on_the_embedded_model_a_turn_after_a_summary_fold_reads_only_the_new_message(
    monkeypatch,
):
    import uuid

    from providers import preset

    settings = preset("embedded").settings(max_tokens=16, prompt_cache=True)

    def second_turn_reads(warm: bool) -> int:
        prompt = f"Session {uuid.uuid4().hex}. {fincoach.SYSTEM_PROMPT}"  # no slot holds it
        # one lane, the last, unpinned: queued means no warm-up
        monkeypatch.setenv("MEMORY_LAB_EMBEDDED_PIN", "1" if warm else "0")
        session = Session(
            system_prompt=prompt,
            lanes=[LaneSpec("summary", REGISTRY["summary"].defaults())],  # folds every turn
            provider=settings,
            maintenance=settings.with_(max_tokens=48),  # a summary long enough to tell
        )
        session.pacing.queue_next(not warm)
        [first] = session.run_turn(fincoach.DEMO_TURNS[0]).values()
        assert first.ok and first.account.summary is None, first.error
        assert session.lanes["summary"].strategy.summary  # the fold changed the next prefix
        wait_lane_warmups(session)
        assert bool(lane_warmups(session)) == warm
        [second] = session.run_turn(fincoach.DEMO_TURNS[1]).values()
        assert second.ok and second.account.summary, second.error
        return (second.billed_input or 0) - (second.cached_input or 0)

    cold, warmed = second_turn_reads(False), second_turn_reads(True)
    # warmed: the system prompt and the new summary were read between the turns
    assert warmed < 50 and cold > warmed + 30, (cold, warmed)


def test_settling_waits_for_warm_ups_still_reading_and_no_longer_than_asked():
    gate = threading.Event()  # every warm-up call hangs until the gate opens
    transport = WarmingTransport(gate=gate)
    session = make(transport, lanes=["full", "entity"])
    assert session.pacing.settle(0.0)  # nothing warming yet
    session.run_turn(fincoach.DEMO_TURNS[0])
    assert len(lane_warmups(session)) == 2
    assert not session.pacing.settle(0.2)  # still reading: the bound holds
    assert not any(w.done.is_set() for w in lane_warmups(session).values())
    threading.Timer(0.2, gate.set).start()
    assert session.pacing.settle(30)  # returns once every warm-up came back
    assert all(w.done.is_set() for w in lane_warmups(session).values())
