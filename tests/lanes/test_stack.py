"""The transport stack (lanes/transport.py, lanes/stack.py): which layers a session gets, what
the floor lets through, and a session that knows nothing of slots or warm-ups."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from lanes import slots, stack
from lanes.session import Session
from lanes.transport import Call, Direct, LaneRoute, capabilities
from memory.lane_spec import LaneSpec
from memory.registry import REGISTRY
from providers.fake import FakeTransport
from tests.lanes.test_warmup import WarmingTransport
from tests.providers.conftest import make_request

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Settings:
    kind: str = "embedded"
    model: str = "smollm2-135m-instruct"
    base_url: str | None = None
    max_tokens: int = 80
    prompt_cache: bool | None = True
    temperature: float | None = 0

    def with_(self, **changes):
        return replace(self, **changes)


def routes(settings, names=("full", "summary")):
    return [LaneRoute(n, settings, settings, REGISTRY[n].needs_model) for n in names]


@pytest.mark.parametrize(
    ("transport", "settings", "share", "layers"),
    [
        (WarmingTransport, Settings(), True, "SharingLayer -> EmbeddedRouter -> Direct"),
        (WarmingTransport, Settings(), False, "EmbeddedRouter -> Direct"),
        (WarmingTransport, Settings(kind="openai"), True, "SharingLayer -> Direct"),
        (WarmingTransport, Settings(prompt_cache=False), False, "Direct"),
        (FakeTransport, Settings(), True, "SharingLayer -> Direct"),  # declares no capability
    ],
    ids=["embedded-shared", "embedded", "hosted", "cache-off", "plain-fake"],
)
def test_a_session_gets_the_layers_its_lanes_and_transport_call_for(
    transport, settings, share, layers, monkeypatch
):
    monkeypatch.setattr(slots, "server_slots", lambda: 8)
    top = stack.build(transport(), routes(settings), share=share)
    assert stack.describe(top) == f"{layers}({transport.__name__})"


def test_the_floor_passes_a_slot_or_a_warm_up_only_to_a_transport_that_declares_it():
    request = make_request(("user", "Hi"))
    plain = Direct(FakeTransport())
    assert capabilities(FakeTransport()) == frozenset()
    assert plain.stream(Call(request, Settings()), None).text
    with pytest.raises(ValueError, match="slot"):
        plain.stream(Call(request, Settings(), "full", slot=2), None)
    with pytest.raises(ValueError, match="warm"):
        plain.warm(Call(request, Settings()))
    declared = WarmingTransport()
    assert capabilities(declared) == {"warm", "slots"}
    assert Direct(declared).warm(Call(request, Settings(), "full", slot=2)).text == "x"


def test_the_session_knows_nothing_of_slots_or_warm_ups():
    text = (ROOT / "lanes" / "session.py").read_text(encoding="utf-8")
    assert not re.findall(r"slot|warm", text, flags=re.IGNORECASE)
    assert len(text.splitlines()) <= 420


def test_every_lane_call_reaches_the_stack_with_its_lane(monkeypatch):
    """The layers are told which lane each call is for: replies and upkeep calls alike."""
    seen: list[tuple[str, str | None]] = []

    class Recording(stack.Layer):
        def stream(self, call, on_delta):
            seen.append(("reply", call.lane))
            return super().stream(call, on_delta)

        def model_fn(self, settings, lane, slot=None):
            model = super().model_fn(settings, lane, slot)

            def call(request):
                seen.append(("upkeep", lane))
                return model(request)

            return call

    build = stack.build
    monkeypatch.setattr(stack, "build", lambda *a, **k: Recording(build(*a, **k)))
    session = Session(
        system_prompt="You are helpful.",
        lanes=[LaneSpec(n, REGISTRY[n].defaults()) for n in ("full", "entity")],
        provider=Settings(kind="openai"),
        transport=FakeTransport(),
    )
    session.run_turn("My name is Chiru.")
    assert sorted(seen) == [("reply", "entity"), ("reply", "full"), ("upkeep", "entity")]
