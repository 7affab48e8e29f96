"""A Session: one conversation fanned out to several lanes, each a memory strategy.

Lanes are keyed by label (memory/lane_spec.py), so one strategy may run in several lanes, with
other parameters or on its own provider (`LaneSpec.provider`; None: the session's).

The session owns the user turns and the lanes; `run_turn` runs every lane of a turn in
parallel threads (the CLI, the bench and the tests use it), while the UI starts each lane's
run in a thread the session owns (`start_lane`) and draws its live buffer (lanes/live.py)
from the lane's fragment, so a page rerun that cuts the drawing off leaves the run going.
Both paths go through `Lane.run`, so what the UI shows is what a lane recorded.

A turn can be stopped (`cancel`) in every lane or in one: each lane's stream is closed at its
next piece, the turn is recorded as cancelled and nothing of it enters that lane's memory.
Upkeep calls (summaries, extraction) get their own output limits (`UpkeepLimits`), so a
weak model that rambles cannot make them as long as a reply.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lanes import stack
from lanes.lane import Lane, LaneTurn, ReplyLike, Sender
from lanes.live import LiveRun
from lanes.transport import Call, LaneRoute, Layer, Pacing, ProvidersTransport, Transport
from memory.lane_spec import LaneSpec, labelled
from memory.maintenance import Upkeep
from memory.registry import spec as strategy_spec
from memory.strategies.base import check_user_text
from memory.tokens import TokenCounter
from memory.types import Request

if TYPE_CHECKING:
    from providers.settings import ProviderSettings

__all__ = ["ProvidersTransport", "Session", "Transport", "UpkeepLimits"]


@dataclass(frozen=True)
class UpkeepLimits:
    """Most tokens an upkeep call may write: a summary (asked for at most 120 words) and a
    fact-extraction JSON update. The memory core parses a cut-off reply as it is (a cut
    summary is kept, cut JSON changes nothing)."""

    summary: int = 128
    extraction: int = 96

    def __post_init__(self) -> None:
        if self.summary < 1 or self.extraction < 1:
            raise ValueError("upkeep output limits must be at least 1 token")


def _limited(settings: Any, limit: int | None) -> Any:
    """`settings` with `max_tokens=limit` when it has such a field (ProviderSettings does)."""
    if limit is None or not hasattr(settings, "with_") or not hasattr(settings, "max_tokens"):
        return settings
    return settings.with_(max_tokens=limit)


class Session:
    """One conversation, many lanes. Not thread-safe for two turns at once (one turn at a time)."""

    def __init__(
        self,
        *,
        system_prompt: str,
        lanes: Sequence[LaneSpec[ProviderSettings]],
        provider: ProviderSettings,
        maintenance: ProviderSettings | None = None,
        transport: Transport | None = None,
        session_id: str | None = None,
        name: str = "",
        upkeep: UpkeepLimits | None = None,
        share: bool = False,
        lean: bool = False,
    ) -> None:
        if not lanes:
            raise ValueError("pick at least one strategy to run")
        specs = labelled(lanes)
        self.id = session_id or uuid.uuid4().hex[:12]
        self.name = name
        self.system_prompt = system_prompt
        self.provider = provider
        self.maintenance = maintenance or provider
        self.counter = TokenCounter.for_model(getattr(provider, "model", None))
        self.upkeep = upkeep  # None: upkeep calls may write as much as a reply
        # lean: once a store's tracker has saved a record, it is kept in memory without its
        # bodies and turn lists (LaneTurn.lean): an import nobody draws
        self.lean = lean
        # label -> the settings that lane calls with (its own, else the session's), and those
        # its upkeep calls (summaries, extraction) go through
        self.providers: dict[str, ProviderSettings] = {
            str(s.lane_label): s.provider or provider for s in specs
        }
        self.upkeep_providers: dict[str, ProviderSettings] = {
            str(s.lane_label): s.provider or self.maintenance for s in specs
        }
        # labels of lanes with their own provider
        self.own_providers: set[str] = {str(s.lane_label) for s in specs if s.provider is not None}
        routes = [
            LaneRoute(
                str(s.lane_label),
                self.providers[str(s.lane_label)],
                self.upkeep_providers[str(s.lane_label)],
                strategy_spec(s.name).needs_model,
            )
            for s in specs
        ]
        # the transport stack (lanes/stack.py): the session talks to its top only
        self.transport: Layer = stack.build(transport or ProvidersTransport(), routes, share=share)
        self.lanes: dict[str, Lane] = {
            str(s.lane_label): self._lane(s, self._upkeep_fns(str(s.lane_label))) for s in specs
        }
        self.transport.attach(self.lanes)
        self.user_turns: list[str] = []
        self._lock = threading.Lock()
        self._in_flight: set[str] = set()  # lanes with a run going on (claimed, not released)
        self._live: dict[str, LiveRun] = {}  # label -> its latest run started by start_lane
        self._finished_turn = 0
        self._cancelled: dict[int, set[str]] = {}  # turn -> lanes stopped (all: every name)
        self._touched = time.monotonic()
        # called as (session, record) after every lane turn is recorded, from the lane's thread
        self.listeners: list[Callable[[Session, LaneTurn], None]] = []
        # called as (session, turn, user_text) when a user turn begins, before any lane runs it
        self.turn_listeners: list[Callable[[Session, int, str], None]] = []

    def _upkeep_fns(self, label: str) -> Upkeep:
        """Lane `label`'s summaries and extraction, through its upkeep settings and the
        transport stack, within the session's upkeep limits."""
        settings, limits = self.upkeep_providers[label], self.upkeep
        summary = _limited(settings, limits.summary if limits else None)
        extraction = _limited(settings, limits.extraction if limits else None)
        return Upkeep(
            self.transport.model_fn(summary, label), self.transport.model_fn(extraction, label)
        )

    @property
    def pacing(self) -> Pacing:
        """How the transport stack paces the model between turns (the page asks it)."""
        return self.transport.pacing

    @property
    def sharing(self) -> Any:
        """The calls shared between lanes now (lanes/sharing.py), None without sharing."""
        return self.transport.sharing

    def _lane(self, spec: LaneSpec[ProviderSettings], upkeep: Upkeep) -> Lane:
        """A lane for `spec`, making its upkeep calls through `upkeep`.
        One with its own provider does its upkeep calls there too (the session's maintenance
        model belongs to the session's provider) and counts tokens with its own model's
        encoding."""
        own = spec.provider
        counter = (
            self.counter if own is None else TokenCounter.for_model(getattr(own, "model", None))
        )
        return Lane(
            spec.name,
            self.system_prompt,
            counter=counter,
            params=spec.params,
            upkeep=upkeep,
            label=str(spec.lane_label),
            provider=None if own is None else _public(own),
        )

    @property
    def turn(self) -> int:
        """The number of the latest turn (0 before the first message)."""
        return len(self.user_turns)

    def sender(self, lane: str | None = None) -> Sender:
        """The provider call with the settings of lane `lane` (None: the session's) bound."""
        transport = self.transport
        settings = self.provider if lane is None else self.providers[lane]

        def send(request: Request, on_delta: Callable[[str], None] | None) -> ReplyLike:
            return transport.stream(Call(request, settings, lane), on_delta)

        return send

    def begin_turn(self, user_text: str) -> int:
        """Validate and record a user message; returns its turn number (lanes run it next)."""
        check_user_text(user_text)
        with self._lock:
            self._touched = time.monotonic()
            self.user_turns.append(user_text)
            turn = len(self.user_turns)
        self.transport.turn_began(turn)
        for listener in list(self.turn_listeners):
            listener(self, turn, user_text)
        return turn

    def run_lane(
        self,
        name: str,
        turn: int,
        on_delta: Callable[[str], None] | None = None,
        *,
        on_reply: Callable[[str], None] | None = None,
    ) -> LaneTurn:
        """Run turn `turn` in one lane (the UI calls this from each lane's fragment);
        `on_reply(text)` runs when the reply is complete, before the lane's upkeep calls."""
        record = self.lanes[name].run(
            turn,
            self.user_turns[turn - 1],
            self.sender(name),
            on_delta,
            cancelled=lambda: self.is_cancelled(name, turn),
            on_reply=on_reply,
        )
        self.transport.recorded(record)
        self._notify(record)
        return record

    def start_lane(self, name: str, turn: int) -> LiveRun:
        """Run turn `turn` in lane `name` in a thread the session owns, writing into a live
        buffer, and return the buffer. One run per lane and turn: if the lane runs (or ran)
        that turn already, that run's buffer, so a reader cut off mid-stream (a page rerun)
        is followed by one that attaches where the text has got to. A run that raised is
        started again. The lane counts as in flight (`in_flight`) until its run ends."""
        if name not in self.lanes:
            raise KeyError(f"no lane {name!r} in this session")
        with self._lock:
            live = self._live.get(name)
            # the run going on, or this turn's run, unless it raised (a run that raised was
            # released before it said so: it is never in flight then)
            going = live is not None and (name in self._in_flight or live.turn == turn)
            if live is not None and going and not live.failed:
                return live
            self._in_flight.add(name)
            self._touched = time.monotonic()
            live = self._live[name] = LiveRun(name, turn)

        def run() -> None:
            record: LaneTurn | None = None
            error: BaseException | None = None
            try:
                record = self.run_lane(name, turn, live.add, on_reply=live.replied)
            except BaseException as exc:  # handed to the reader, which raises it
                error = exc
            finally:
                self.release(name)
                live.finish(record, error)

        threading.Thread(target=run, name=f"lane-{name}-{turn}", daemon=True).start()
        return live

    def partial_reply(self, name: str, turn: int) -> str:
        """What lane `name`'s run of `turn` had streamed (its live buffer; '' if it ran no such
        run here). For a stopped turn this is shown, never remembered: the record's reply
        stays empty and memory never sees it."""
        with self._lock:
            live = self._live.get(name)
        return live.view().text if live is not None and live.turn == turn else ""

    def cancel(self, name: str | None = None) -> int:
        """Stop the latest turn in lane `name`, or in every lane; returns the turn number
        (0: nothing to stop). Lanes that already recorded the turn keep their record."""
        with self._lock:
            turn = len(self.user_turns)
            if turn:
                names = set(self.lanes) if name is None else {name}
                self._cancelled.setdefault(turn, set()).update(names)
                self._touched = time.monotonic()
            return turn

    def is_cancelled(self, name: str, turn: int) -> bool:
        """Whether the user stopped turn `turn` in lane `name`."""
        with self._lock:
            return name in self._cancelled.get(turn, ())

    def _notify(self, record: LaneTurn) -> None:
        for listener in list(self.listeners):
            listener(self, record)

    def release(self, name: str) -> None:
        """Lane `name`'s run has ended (start_lane's thread calls this)."""
        with self._lock:
            self._in_flight.discard(name)
            self._touched = time.monotonic()

    def idle_for(self) -> float:
        """Seconds since a lane last started or finished a turn, or a turn began."""
        with self._lock:
            return time.monotonic() - self._touched

    def in_flight(self) -> set[str]:
        """Lanes whose run is going on in the session's threads, drawn or not."""
        with self._lock:
            return set(self._in_flight)

    def finish_turn_once(self, turn: int) -> bool:
        """True exactly once per turn, for the caller that sees the last lane finish it."""
        with self._lock:
            if self._finished_turn >= turn or self._pending_unlocked():
                return False
            self._finished_turn = turn
            return True

    def _pending_unlocked(self) -> bool:
        return any(
            not lane.turns or lane.turns[-1].turn < self.turn for lane in self.lanes.values()
        )

    def pending_lanes(self) -> list[str]:
        """Lanes that have not yet recorded the latest turn."""
        return [
            name
            for name, lane in self.lanes.items()
            if self.turn and (not lane.turns or lane.turns[-1].turn < self.turn)
        ]

    def run_turn(
        self,
        user_text: str,
        on_delta: Callable[[str, str], None] | None = None,
        *,
        parallel: bool = True,
    ) -> dict[str, LaneTurn]:
        """Send one user message to every lane (in parallel threads); one lane failing never
        stops the others."""
        turn = self.begin_turn(user_text)

        def one(name: str) -> LaneTurn:
            delta = (lambda text: on_delta(name, text)) if on_delta else None
            return self.run_lane(name, turn, delta)

        if not parallel or len(self.lanes) == 1:
            return {name: one(name) for name in self.lanes}
        with ThreadPoolExecutor(max_workers=len(self.lanes)) as pool:
            futures = {name: pool.submit(one, name) for name in self.lanes}
            return {name: future.result() for name, future in futures.items()}

    def retry(self, name: str, on_delta: Callable[[str], None] | None = None) -> LaneTurn:
        """Resend the latest turn in a lane whose attempt failed."""
        lane = self.lanes[name]
        if not lane.can_retry(self.turn):
            raise ValueError(f"lane {name} has no failed latest turn to retry")
        with self._lock:
            self._cancelled.get(self.turn, set()).discard(name)  # a retry is a fresh start
        record = lane.retry(
            self.sender(name), on_delta, cancelled=lambda: self.is_cancelled(name, self.turn)
        )
        self._notify(record)
        return record

    def snapshot(self) -> dict[str, Any]:
        """The whole session as plain JSON-ready data; provider settings without any key."""
        return {
            "id": self.id,
            "name": self.name,
            "system_prompt": self.system_prompt,
            "provider": _public(self.provider),
            "maintenance": _public(self.maintenance),
            "user_turns": list(self.user_turns),
            "lanes": {name: lane.snapshot() for name, lane in self.lanes.items()},
        }

    @classmethod
    def from_snapshot(
        cls,
        data: Mapping[str, Any],
        *,
        provider: ProviderSettings,
        maintenance: ProviderSettings | None = None,
        transport: Transport | None = None,
        lane_providers: Mapping[str, ProviderSettings] | None = None,
        upkeep: UpkeepLimits | None = None,
        share: bool = False,
    ) -> Session:
        """Rebuild a session to continue it: memory restored without calling any model.
        A lane saved with its own provider needs its settings in `lane_providers` (by label:
        keys are looked up by the caller, never saved); lanes saved before labels existed
        are keyed by their strategy name and read as before."""
        lanes = data["lanes"]
        own = dict(lane_providers or {})
        specs = []
        for label, lane in lanes.items():
            if lane.get("provider") and label not in own:
                model = lane["provider"].get("model")
                raise ValueError(
                    f"lane {label} ran on its own model ({model}): choose its provider"
                )
            strategy = str(lane.get("strategy") or label)
            one = LaneSpec(strategy, lane["params"], provider=own.get(label), lane_label=label)
            specs.append(one)
        session = cls(
            system_prompt=data["system_prompt"],
            lanes=specs,
            provider=provider,
            maintenance=maintenance,
            transport=transport,
            session_id=data["id"],
            name=data.get("name", ""),
            upkeep=upkeep,
            share=share,
        )
        session.user_turns = list(data["user_turns"])
        for name, lane in lanes.items():
            session.lanes[name].restore(lane)
        session._finished_turn = session.turn
        return session

    def records(self) -> dict[str, list[LaneTurn]]:
        """Every lane's turn records."""
        return {name: list(lane.turns) for name, lane in self.lanes.items()}


def _public(settings: Any) -> dict[str, Any]:
    """Settings as data with no key in them (ProviderSettings knows how; others: vars)."""
    if hasattr(settings, "public_dict"):
        return dict(settings.public_dict())
    data = {k: v for k, v in vars(settings).items() if "key" not in k.lower()}
    return data
