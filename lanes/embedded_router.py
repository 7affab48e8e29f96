"""The embedded router: a layer of the transport stack (lanes/transport.py) that routes each
lane's calls to a server slot of its own and reads prefixes ahead of the turns that send them.

Stacked only over a transport that declares it can warm the model, for a session with a lane
on the embedded server with its prompt cache on (`warmup.wanted`); elsewhere a warm-up would
be billed or would not help. It:

- routes calls: each lane's replies and warm-ups to its reply slot, its upkeep calls to its
  upkeep slot (the plan is lanes/slots.py's), so one lane's cached prompt is never another's;
- warms every lane's prefix before the first turn (`prepare`, the page calls it on load; a
  new session with the same prefixes joins an unused warm-up), and after each lane's turn
  warms that lane's next prefix (upkeep changed it: a new summary, new facts), never waited
  for: a call not yet sent when the next turn begins is skipped;
- skips that after-turn warm-up for the turn's last lane when the next turn is queued to begin
  at once (`queue_next`) and the lane has no slot of its own: it would only race that turn;
- holds a lane's next prefix in another lane's slot when both followed one shared call and
  their next prefixes are the same (`_hold_in_shared_slot`), so the same text is not read into
  two slots while the extraction calls wait;
- lets the page wait, boundedly, for warm-ups still reading before its next turn (`settle`):
  a warm-up in flight is read in the same batch as every lane's new prompt.

No lane ever waits for a warm-up: a pinned lane's request for a slot a warm-up holds is
deferred by the server, and a failing or hanging warm-up only means a slower first token.

May import: lanes/transport.py, lanes/warmup.py, lanes/slots.py, lanes/sharing.py, memory/.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from lanes import slots
from lanes import warmup as warming
from lanes.sharing import prefix_key
from lanes.transport import SLOTS, WARM, Call, LaneRoute, Layer, Pacing
from memory.types import ModelFn

if TYPE_CHECKING:
    from lanes.lane import Lane, LaneTurn, ReplyLike

OWNER_WAIT_S = 1.0  # _hold_in_shared_slot: how long a lane waits for the lanes before it


def wanted(routes: Sequence[LaneRoute]) -> bool:
    """Whether any lane's calls would be routed or warmed."""
    return any(warming.wanted(r.reply) or warming.wanted(r.upkeep) for r in routes)


class EmbeddedRouter(Layer, Pacing):
    """Slot routing and warm-ups for one session's lanes (see the module docstring)."""

    def __init__(self, inner: Layer, routes: Sequence[LaneRoute], total_slots: int) -> None:
        super().__init__(inner)
        self.reply = {r.label: r.reply for r in routes}
        self.upkeep = {r.label: r.upkeep for r in routes}
        self.order = [r.label for r in routes]
        pinnable = SLOTS in inner.capabilities
        self.pins: dict[str, slots.Pins] = slots.plan(
            self.order,
            {r.label: pinnable and warming.wanted(r.reply) for r in routes},
            {r.label: r.makes_upkeep_calls and warming.wanted(r.upkeep) for r in routes},
            total_slots if pinnable else 0,
        )
        self.lanes: Mapping[str, Lane] = {}
        self.turn = 0
        self.queued = False
        self.warmup: warming.Warmup | None = None  # every lane's prefix, before a turn
        # label -> the warm-up of that lane's next prefix, started after its latest turn
        self.lane_warmups: dict[str, warming.Warmup] = {}
        # label -> (the lane whose slot holds this lane's next prefix, that prefix's key)
        self._homes: dict[str, tuple[str, Any]] = {}
        self._lock = threading.Lock()

    # ---- routing ---------------------------------------------------------------------------
    @property
    def pacing(self) -> Pacing:
        return self

    def stream(self, call: Call, on_delta: Callable[[str], None] | None) -> ReplyLike:
        if call.lane not in self.pins:
            return self.inner.stream(call, on_delta)
        if self.warmup is not None:
            self.warmup.used = True  # a later session starts its own
        return self.inner.stream(replace(call, slot=self.slot_for(call)), on_delta)

    def model_fn(self, settings: Any, lane: str | None, slot: int | None = None) -> ModelFn:
        if lane in self.pins:
            slot = self.pins[lane].upkeep
        return self.inner.model_fn(settings, lane, slot)

    def slot_for(self, call: Call) -> int | None:
        """The slot of lane `call.lane`'s reply: that of the lane whose slot holds the
        request's prefix (`_hold_in_shared_slot`), else its own."""
        lane = str(call.lane)
        home = self._homes.get(lane)
        if home is not None and prefix_key(call.request, self.reply[lane]) == home[1]:
            return self.pins[home[0]].reply
        return self.pins[lane].reply

    # ---- the session's turns ---------------------------------------------------------------
    def attach(self, lanes: Mapping[str, Lane]) -> None:
        self.lanes = lanes
        self.inner.attach(lanes)

    def turn_began(self, turn: int) -> None:
        with self._lock:
            self.turn = turn
        self.inner.turn_began(turn)

    def recorded(self, record: LaneTurn) -> None:
        if record.ok and record.lane in self.pins:
            self._warm_next(record.lane, record.turn)
        self.inner.recorded(record)

    # ---- pacing ----------------------------------------------------------------------------
    def prepare(self) -> warming.Warmup | None:
        """Warm every lane's prefix in the background (returns at once), or join an unused
        warm-up of the same prefixes; None where nothing is warmed. Once per session."""
        if self.warmup is None and WARM in self.capabilities:
            calls = warming.probes(self.lanes, self.order, self.reply, self.upkeep, self.pins)
            if calls:
                self.warmup = warming.joined(calls, self.inner.warm)
        return self.warmup

    def settle(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        for warm in list(self.lane_warmups.values()):
            if not warm.done.wait(max(0.0, deadline - time.monotonic())):
                return False
        return True

    def queue_next(self, queued: bool) -> None:
        self.queued = queued

    def after_upkeep(self, label: str, turn: int) -> warming.Warmup | None:
        """Warm lane `label`'s next prefix (and next extraction request) in the background,
        right after turn `turn`'s upkeep; a call not yet sent when another turn has begun is
        skipped. None where nothing is warmed."""
        if WARM not in self.capabilities:
            return None
        calls = warming.probes(self.lanes, [label], self.reply, self.upkeep, self.pins)
        if not calls:
            return None
        warmup = warming.Warmup(warming.key(calls), calls)
        reply_probe = calls[0]

        def drop_held() -> None:
            if self._hold_in_shared_slot(label, turn, reply_probe):
                warmup.calls = warmup.calls[1:]

        return warmup.launch(self.inner.warm, lambda: self.turn == turn, drop_held)

    def _warm_next(self, name: str, turn: int) -> None:
        """After lane `name` recorded turn `turn`, warm its next prefix unless the next turn
        has begun, or unless it is the turn's last lane, the next turn is queued to begin at
        once and the lane has no slot of its own (that warm-up would race the next turn for
        the server's slots; a pinned lane's is read in its own slot while the page settles)."""
        with self._lock:
            if self.turn != turn:
                return
        others = any(
            not lane.turns or lane.turns[-1].turn < turn
            for label, lane in self.lanes.items()
            if label != name
        )
        if not others and self.queued and self.pins[name].reply is None:
            return
        warm = self.after_upkeep(name, turn)
        if warm is not None:
            self.lane_warmups[name] = warm

    def _hold_in_shared_slot(self, name: str, turn: int, probe: Call) -> bool:
        """Whether lane `name`'s next prefix (`probe`, its warm-up call) will be held in
        another lane's slot. True when lane `name` followed a shared call (lanes/sharing.py)
        in turn `turn` and a pinned lane before it (in lane order) that followed the same call
        has the same next prefix: that lane warms its own slot with it, and this lane's next
        request with that prefix goes there too (`slot_for`). Called from the lane's warm-up
        thread; waits at most `OWNER_WAIT_S` in all for the lanes before it to record the turn
        (they followed the same call, so they end about together; one still busy is passed
        over)."""
        self._homes.pop(name, None)
        record = self.lanes[name].turns[-1] if self.lanes[name].turns else None
        if record is None or record.turn != turn or not record.ok or not record.shared:
            return False
        if self.pins[name].reply is None:
            return False  # unpinned: the server finds the prefix by itself
        mine = prefix_key(probe.request, self.reply[name])
        deadline = time.monotonic() + OWNER_WAIT_S
        for label, lane in self.lanes.items():
            if label == name:
                break
            if label not in record.shared or self.pins[label].reply is None:
                continue
            while not (lane.turns and lane.turns[-1].turn >= turn):
                if time.monotonic() > deadline:
                    break
                time.sleep(0.01)
            if not (lane.turns and lane.turns[-1].turn == turn and lane.turns[-1].ok):
                continue
            theirs = warming.probes(self.lanes, [label], self.reply, self.upkeep, self.pins)
            if theirs and prefix_key(theirs[0].request, self.reply[label]) == mine:
                with self._lock:
                    if self.turn != turn:  # the next turn has begun: too late
                        return False
                    self._homes[name] = (label, mine)
                return True
        return False
