"""How a session reaches a model: a stack of transports, each told which lane a call is for.

At the bottom is a plain `Transport`: the official SDKs behind providers/ (`ProvidersTransport`)
or a fake in tests and benches. It knows nothing of lanes. `Direct` makes it the stack's floor;
a `Layer` wraps the layer below it and may change a call on its way down (call sharing,
lanes/sharing.py; the embedded router, lanes/embedded_router.py), the way httpx stacks
transports. The session talks only to the top of the stack (lanes/stack.py builds it).

A plain transport declares what it can do beyond streaming in `capabilities`:
- `WARM`: `warm(request, settings, slot=...)` reads a prompt into the server's cache (asked
  for one token, the reply dropped);
- `SLOTS`: `stream`, `warm` and `as_model_fn` take `slot=`, the server slot a call runs in.
A transport that declares nothing is only ever asked to stream and to make model functions.

May import: memory/, lanes/lane.py. The providers package is imported when a real call is made.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from memory.types import ModelFn, Request

if TYPE_CHECKING:
    from lanes.lane import Lane, LaneTurn, ReplyLike

WARM = "warm"
SLOTS = "slots"


class Transport(Protocol):
    """A model reached: the providers module, or a fake in tests and benches."""

    def stream(
        self,
        request: Request,
        settings: Any,
        on_delta: Callable[[str], None] | None = None,
    ) -> ReplyLike: ...

    def as_model_fn(self, settings: Any) -> ModelFn: ...


def capabilities(transport: Transport) -> frozenset[str]:
    """What `transport` declares it can do beyond streaming (none unless declared)."""
    return frozenset(getattr(type(transport), "capabilities", None) or ())


class ProvidersTransport:
    """The real thing: the official SDKs behind providers/."""

    capabilities: ClassVar[frozenset[str]] = frozenset({WARM, SLOTS})

    def stream(
        self,
        request: Request,
        settings: Any,
        on_delta: Callable[[str], None] | None = None,
        *,
        slot: int | None = None,
    ) -> ReplyLike:
        import providers

        return providers.stream(request, settings, on_delta, slot=slot)

    def as_model_fn(self, settings: Any, *, slot: int | None = None) -> ModelFn:
        import providers

        return providers.as_model_fn(settings, slot=slot)

    def warm(self, request: Request, settings: Any, *, slot: int | None = None) -> ReplyLike:
        """Have the server read `request` into its prompt cache (the caller asks for one token
        and drops the reply)."""
        return self.stream(request, settings, slot=slot)


@dataclass(frozen=True)
class Call:
    """One call on its way down the stack: what it asks, through which settings, for which
    lane (None: the session's own), and the server slot a layer routed it to."""

    request: Request
    settings: Any
    lane: str | None = None
    slot: int | None = None


@dataclass(frozen=True)
class LaneRoute:
    """Where one lane's calls go: the settings of its replies and of its upkeep calls, and
    whether its strategy makes upkeep calls at all (layers that route by lane read these)."""

    label: str
    reply: Any
    upkeep: Any
    makes_upkeep_calls: bool


class Pacing(Protocol):
    """How a stack paces the model between turns; `NO_PACING` where it does nothing."""

    def prepare(self) -> Any:
        """Start readying the model for the next turn in the background; what was started
        (with `done`, a threading.Event), or None where nothing pays."""
        ...

    def settle(self, timeout: float) -> bool:
        """Wait at most `timeout` seconds for background work still reading; True when none is
        left. Never raises."""
        ...

    def queue_next(self, queued: bool) -> None:
        """Whether the next turn begins the moment this one ends (a playing demo)."""
        ...


class _NoPacing:
    def prepare(self) -> None:
        return None

    def settle(self, timeout: float) -> bool:
        return True

    def queue_next(self, queued: bool) -> None:
        return None


NO_PACING: Pacing = _NoPacing()


class Layer:
    """One transport of the stack, wrapping `inner`; by default it passes everything down.
    Subclasses change a call on its way (`stream`, `model_fn`) and may listen to the session's
    turns (`attach`, `turn_began`, `recorded`)."""

    def __init__(self, inner: Layer) -> None:
        self.inner = inner

    def stream(self, call: Call, on_delta: Callable[[str], None] | None) -> ReplyLike:
        return self.inner.stream(call, on_delta)

    def model_fn(self, settings: Any, lane: str | None, slot: int | None = None) -> ModelFn:
        """The model function for lane `lane`'s upkeep calls (summaries, extraction) through
        `settings`, in server slot `slot` if a layer routed them to one."""
        return self.inner.model_fn(settings, lane, slot)

    def warm(self, call: Call) -> ReplyLike:
        return self.inner.warm(call)

    @property
    def capabilities(self) -> frozenset[str]:
        return self.inner.capabilities

    @property
    def pacing(self) -> Pacing:
        return self.inner.pacing

    @property
    def sharing(self) -> Any:
        """The stack's shared calls (lanes/sharing.py `SharedCalls`), None without sharing."""
        return self.inner.sharing

    def attach(self, lanes: Mapping[str, Lane]) -> None:
        """The session's lanes, once built (its layers may read them; never change them)."""
        self.inner.attach(lanes)

    def turn_began(self, turn: int) -> None:
        self.inner.turn_began(turn)

    def recorded(self, record: LaneTurn) -> None:
        """A lane recorded a turn it ran (its reply and upkeep done)."""
        self.inner.recorded(record)


class Direct(Layer):
    """The stack's floor: the plain transport, called as it declares it can be."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self._declared = capabilities(transport)

    def _routed(self, slot: int | None) -> dict[str, Any]:
        if slot is None:
            return {}
        if SLOTS not in self._declared:
            raise ValueError("this transport takes no server slot")
        return {"slot": slot}

    def stream(self, call: Call, on_delta: Callable[[str], None] | None) -> ReplyLike:
        routed = self._routed(call.slot)
        return self.transport.stream(call.request, call.settings, on_delta, **routed)

    def model_fn(self, settings: Any, lane: str | None, slot: int | None = None) -> ModelFn:
        return self.transport.as_model_fn(settings, **self._routed(slot))

    def warm(self, call: Call) -> ReplyLike:
        if WARM not in self._declared:
            raise ValueError("this transport cannot warm the model")
        return self.transport.warm(call.request, call.settings, **self._routed(call.slot))  # type: ignore[attr-defined]

    @property
    def capabilities(self) -> frozenset[str]:
        return self._declared

    @property
    def pacing(self) -> Pacing:
        return NO_PACING

    @property
    def sharing(self) -> Any:
        return None

    def attach(self, lanes: Mapping[str, Lane]) -> None:
        return None

    def turn_began(self, turn: int) -> None:
        return None

    def recorded(self, record: LaneTurn) -> None:
        return None
