"""Pinning lanes to the embedded server's slots: the plan for every lane set, the session's
calls (replies, warm-ups, upkeep) each in their lane's own slot, and nothing pinned where the
prompt cache is off or the provider is not the embedded server."""

from __future__ import annotations

import threading
from dataclasses import fields

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lanes import slots
from lanes import warmup as warming
from lanes.session import Session
from memory.lane_spec import LaneSpec
from memory.registry import DEFAULT_LANES, REGISTRY, spec
from providers import ProviderSettings, build_body, preset
from providers.fake import FakeReply, FakeTransport
from scenarios import fincoach
from tests.providers.conftest import make_request

labels_st = st.lists(st.text("abcdef", min_size=1, max_size=3), unique=True, max_size=10)


@given(labels_st, st.data(), st.integers(0, 24))
def test_a_plan_never_gives_two_calls_one_slot_and_pins_what_fits(labels, data, total):
    pinnable = {label: data.draw(st.booleans()) for label in labels}
    upkeep = {label: data.draw(st.booleans()) for label in labels}
    pins = slots.plan(labels, pinnable, upkeep, total)
    assert set(pins) == set(labels)
    used = [s for p in pins.values() for s in (p.reply, p.upkeep) if s is not None]
    assert len(used) == len(set(used)) and all(0 <= s < total for s in used)
    replies = [label for label in labels if pinnable[label]]
    upkept = [label for label in replies if upkeep[label]]
    for label in labels:
        assert (pins[label].reply is not None) == (label in replies and len(replies) <= total)
        everything_fits = len(replies) + len(upkept) <= total
        assert (pins[label].upkeep is not None) == (label in upkept and everything_fits)
    # replies first, in lane order: a lane keeps its slot whatever the other lanes do upkeep
    assert [pins[label].reply for label in replies if pins[label].reply is not None] == list(
        range(len([label for label in replies if pins[label].reply is not None]))
    )


def test_a_slot_is_a_per_call_option_for_the_embedded_server_only():
    embedded = preset("embedded").settings(prompt_cache=True)
    assert "slot" not in {f.name for f in fields(ProviderSettings)}  # not a setting: a route
    request = fincoach_request()
    assert build_body(request, embedded, 3)["id_slot"] == 3
    assert "id_slot" not in build_body(request, embedded)
    for settings in (preset("openai").settings("gpt-4o-mini"), preset("anthropic").settings()):
        with pytest.raises(ValueError, match="slot"):
            build_body(request, settings, 1)
    with pytest.raises(ValueError, match="slot"):
        build_body(request, embedded, -1)


def fincoach_request():
    return make_request(("user", "Hi"), system=fincoach.SYSTEM_PROMPT)


class SlotTransport(FakeTransport):
    """The fake provider, with warm-ups, recording the slot every call went out in."""

    capabilities = frozenset({"warm", "slots"})

    def __init__(self) -> None:
        super().__init__(chunks=2)
        # (kind, the lane's strategy where the request says, first words, id_slot)
        self.sent: list[tuple[str, str | None, str, int | None]] = []
        self.lock = threading.Lock()

    def record(self, kind, request, settings, slot):
        body = build_body(request, settings, slot)
        lane = request.account.strategy if request.account is not None else None
        with self.lock:
            self.sent.append((kind, lane, request.system[:24], body.get("id_slot")))

    def stream(self, request, settings, on_delta=None, *, slot=None):
        self.record("reply", request, settings, slot)
        return super().stream(request, settings, on_delta)

    def warm(self, request, settings, *, slot=None):
        self.record("warm", request, settings, slot)
        return FakeReply("x", None, {})

    def as_model_fn(self, settings, *, slot=None):
        model = super().as_model_fn(settings)

        def call(request):
            self.record("upkeep", request, settings, slot)
            return model(request)

        return call


def session(transport, *, prompt_cache=True, server_slots=12, monkeypatch=None):
    monkeypatch.setattr(slots, "server_slots", lambda: server_slots)
    monkeypatch.setattr(warming, "_latest", None)
    return Session(
        system_prompt=fincoach.SYSTEM_PROMPT,
        lanes=[LaneSpec(n, REGISTRY[n].defaults()) for n in DEFAULT_LANES],
        provider=preset("embedded").settings(prompt_cache=prompt_cache, max_tokens=16),
        transport=transport,
    )


def test_every_lane_replies_warms_and_does_upkeep_in_slots_of_its_own(monkeypatch):
    transport = SlotTransport()
    s = session(transport, monkeypatch=monkeypatch)
    upkept = [name for name in DEFAULT_LANES if spec(name).needs_model]
    assert upkept  # the default lanes include summaries and fact extraction
    pins = s.pacing.pins  # the embedded router's plan
    assert [pins[n].reply for n in DEFAULT_LANES] == list(range(len(DEFAULT_LANES)))
    assert [pins[n].upkeep for n in upkept] == list(
        range(len(DEFAULT_LANES), len(DEFAULT_LANES) + len(upkept))
    )
    warm = s.pacing.prepare()
    assert warm is not None and warm.wait(10)
    for text in fincoach.DEMO_TURNS[:4]:
        s.run_turn(text)
        assert s.pacing.settle(10)
    reply_slots = {pins[n].reply for n in DEFAULT_LANES}
    upkeep_slots = {pins[n].upkeep for n in upkept}
    kinds = {kind for kind, _, _, _ in transport.sent}
    assert kinds == {"reply", "warm", "upkeep"}
    lanes_seen = set()
    for kind, lane, system, slot in transport.sent:
        assert slot is not None, (kind, system)
        if system.startswith(fincoach.SYSTEM_PROMPT[:24]):  # a lane's prompt: its own slot
            assert kind != "upkeep" and lane is not None, (kind, system)
            assert slot == pins[lane].reply, (kind, lane, slot)
            lanes_seen.add(lane)
        else:  # a summary or an extraction: an upkeep slot, never a lane's reply slot
            assert slot in upkeep_slots and slot not in reply_slots, (kind, system)
    assert lanes_seen == set(DEFAULT_LANES)


def test_with_too_few_slots_upkeep_is_unpinned_then_nothing_is(monkeypatch):
    lanes = len(DEFAULT_LANES)
    s = session(SlotTransport(), server_slots=lanes, monkeypatch=monkeypatch)
    assert [s.pacing.pins[n].reply for n in DEFAULT_LANES] == list(range(lanes))
    assert all(p.upkeep is None for p in s.pacing.pins.values())
    s = session(SlotTransport(), server_slots=lanes - 1, monkeypatch=monkeypatch)
    assert all(p == slots.Pins() for p in s.pacing.pins.values())


def test_without_the_prompt_cache_no_call_is_pinned(monkeypatch):
    """The reproducible path (cache off) sends exactly what it sent before pinning existed."""
    transport = SlotTransport()
    s = session(transport, prompt_cache=False, monkeypatch=monkeypatch)
    s.run_turn(fincoach.DEMO_TURNS[0])
    assert transport.sent and all(slot is None for *_, slot in transport.sent)
