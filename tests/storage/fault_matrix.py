"""The fault matrix: one six-lane turn per fault, the fault injected into one lane, through
the official SDKs against the local fake server (tests/providers/fake_server.py), saved by a
real Store. Shared by tests/storage/test_fault_matrix.py and bench/bench_faults.py.

Each run records what the faulty lane showed, whether the other five completed, whether the
store holds every completed lane turn, and whether the lane recovered once the fault was gone
(a retry of the failed turn; for upkeep faults, the next turn's upkeep call)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from lanes.lane import OK, LaneTurn
from lanes.session import ProvidersTransport, Session
from memory.lane_spec import LaneSpec
from memory.types import Completion, Request
from providers import ProviderSettings
from providers.fake import FakeTransport
from storage.store import Store

LANES = ("full", "window", "token_window", "summary", "entity", "hybrid")
KEY = "test-key-0123456789"
_current = threading.local()


@dataclass(frozen=True)
class Fault:
    """One row of the matrix: which lane gets it, how, and words its message must contain."""

    name: str
    lane: str
    model: str | None = None  # the fake server's behaviour for the lane's replies
    dead_port: bool = False
    timeout: float | None = None
    upkeep: str | None = None  # "extract" or "summarize": a broken maintenance function
    expect: tuple[str, ...] = ()  # any of these words in the message (lower case)
    recovers_alone: bool = False  # the SDK-level retry gets through without the user


FAULTS = (
    Fault("401 bad key", "full", "fault-401", expect=("key",)),
    Fault("404 unknown model", "window", "fault-404", expect=("model",)),
    Fault("429 then 200", "token_window", "fault-429x1", recovers_alone=True),
    Fault("quota exhausted", "hybrid", "fault-quota", expect=("quota", "billing", "credit")),
    Fault("500 server error", "full", "fault-500", expect=("server", "500")),
    Fault("timeout", "window", "fault-timeout", timeout=0.3, expect=("timed out", "timeout")),
    Fault("connection refused", "token_window", dead_port=True, expect=("connect",)),
    Fault("stream cut mid-reply", "hybrid", "fault-cut", expect=("cut", "connection", "stream")),
    Fault("context overflow", "full", "fault-context", expect=("context",)),
    Fault("extractor invalid JSON", "entity", upkeep="extract", expect=("json",)),
    Fault("summariser raising", "summary", upkeep="summarize", expect=("summary",)),
)


@dataclass(frozen=True)
class Outcome:
    fault: str
    lane: str
    shown: str  # what the faulty lane showed (error, or upkeep error)
    actionable: bool  # the message names the problem
    others_ok: int  # of the five other lanes
    stored: bool  # the store holds every completed lane turn of the session
    recovered: bool
    attempted: int  # lane turns attempted (first try + retry)
    completed: int
    lost: int  # completed lane turns missing from the store


class RoutedSession(Session):
    """A Session that tells the transport which lane is calling (a thread-local)."""

    def run_lane(
        self, name: str, turn: int, on_delta: Callable[[str], None] | None = None
    ) -> LaneTurn:
        _current.lane = name
        try:
            return super().run_lane(name, turn, on_delta)
        finally:
            _current.lane = None

    def retry(self, name: str, on_delta: Callable[[str], None] | None = None) -> LaneTurn:
        _current.lane = name
        try:
            return super().retry(name, on_delta)
        finally:
            _current.lane = None


class RoutedTransport(ProvidersTransport):
    """The real SDK path, with other settings for the lanes in `faults`; upkeep calls are
    scripted (the fake server's canned reply is not a summary or a JSON fact block)."""

    def __init__(self) -> None:
        self.faults: dict[str, ProviderSettings] = {}

    def stream(self, request: Request, settings: Any, on_delta: Any = None) -> Any:
        lane = getattr(_current, "lane", None)
        return super().stream(request, self.faults.get(lane, settings), on_delta)

    def as_model_fn(self, settings: Any) -> Any:
        return FakeTransport().as_model_fn(settings)


def dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def ok_settings(url: str, **overrides: Any) -> ProviderSettings:
    values: dict[str, Any] = {"api_key": KEY, "max_retries": 2, "retry_backoff": 0.01}
    values.update({"timeout": 5.0, **overrides})
    return ProviderSettings("openai_compatible", "ok", base_url=url + "/v1", **values)


def _broken_upkeep(kind: str) -> Callable[[Request], Completion]:
    def model(request: Request) -> Completion:
        if kind == "extract":
            return Completion('{"set": {"name": "Chiru"')  # cut-off JSON
        raise RuntimeError("summary model crashed")

    return model


def run_fault(fault: Fault, server_url: str, db_url: str) -> Outcome:
    transport = RoutedTransport()
    provider = ok_settings(server_url)
    session = RoutedSession(
        system_prompt="You are a terse assistant.",
        lanes=[LaneSpec(n) for n in LANES],
        provider=provider,
        transport=transport,
    )
    store = Store(db_url)
    tracker = store.track(session)
    lane = session.lanes[fault.lane]
    if fault.upkeep:
        healthy = lane.strategy.upkeep
        broken = {fault.upkeep: _broken_upkeep(fault.upkeep)}
        lane.strategy.upkeep = replace(healthy, **broken)
    else:
        url = dead_url()[: -len("/v1")] if fault.dead_port else server_url
        overrides: dict[str, Any] = {"max_retries": 0 if fault.timeout else 2}
        if fault.timeout:
            overrides["timeout"] = fault.timeout
        bad = ok_settings(url, **overrides)
        transport.faults[fault.lane] = bad.with_(model=fault.model or "ok")

    first = session.run_turn("My name is Chiru and I save 20% of my pay.")
    record = first[fault.lane]
    upkeep_errors = [m.error for m in record.maintenance if m.error]
    shown = (record.error or "") if record.status != OK else "; ".join(upkeep_errors)
    actionable = bool(shown) and any(w in shown.lower() for w in fault.expect)
    if fault.recovers_alone:
        actionable = record.status == OK  # nothing for the user to do
        shown = "answered after the SDK-level retry (nothing to show)" if actionable else shown
    others_ok = sum(r.status == OK for n, r in first.items() if n != fault.lane)

    # the fault goes away; the user retries the lane (upkeep faults: the next turn)
    transport.faults.clear()
    attempted = len(LANES)
    if fault.upkeep:
        lane.strategy.upkeep = healthy
        second = session.run_turn("What is my name?")
        attempted += len(LANES)
        again = second[fault.lane]
        recovered = again.status == OK and not any(m.error for m in again.maintenance)
    elif record.status != OK:
        attempted += 1
        recovered = session.retry(fault.lane).status == OK
    else:
        recovered = True

    live = [r for rs in session.records().values() for r in rs if r.status == OK]
    saved = Store(db_url).load(session.id)
    stored_ok = {(r.lane, r.turn, r.reply) for rs in saved.records.values() for r in rs}
    lost = sum((r.lane, r.turn, r.reply) not in stored_ok for r in live)
    store.close()
    return Outcome(
        fault=fault.name,
        lane=fault.lane,
        shown=shown,
        actionable=actionable,
        others_ok=others_ok,
        stored=lost == 0 and tracker.error is None,
        recovered=recovered,
        attempted=attempted,
        completed=len(live),
        lost=lost,
    )


def run_matrix(server_url: str, db_url: str) -> list[Outcome]:
    return [run_fault(f, server_url, db_url) for f in FAULTS]


def table(outcomes: list[Outcome]) -> str:
    """The matrix as text: fault × outcome, then the counts."""
    head = f"{'fault':24} {'lane':13} {'actionable':10} {'others ok':9} {'stored':6} {'retry ok':8}"
    rows = [head, "-" * len(head)]
    for o in outcomes:
        rows.append(
            f"{o.fault:24} {o.lane:13} {str(o.actionable):10} {o.others_ok}/5{'':5} "
            f"{str(o.stored):6} {str(o.recovered):8}"
        )
        rows.append(f"    shown: {o.shown[:110]}")
    attempted = sum(o.attempted for o in outcomes)
    completed = sum(o.completed for o in outcomes)
    lost = sum(o.lost for o in outcomes)
    rows.append(
        f"lane turns attempted {attempted}, completed {completed}, lost from the store {lost}"
    )
    return "\n".join(rows)
