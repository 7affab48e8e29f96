"""Warming the embedded model before a turn: each lane's fixed prefix read ahead of time.

On the embedded llama.cpp server (prompt cache on) a request reads only the tokens its slot
has not cached. Before the first turn no slot holds anything, so turn 1 reads every lane's
system prompt (six lanes: about 1,100 tokens, seconds on 2 cores) before any lane shows a
token. `start` sends, for every lane, the request its next turn would send with a
one-word stand-in for the user's message, asking for one token, all at once in a background
thread: each lands in its own slot, so when the real turn comes every lane finds its prefix
(system prompt, and memory if the conversation is under way) in some slot, and llama.cpp's
slot choice by prompt similarity sends it there. Lanes that keep facts also get their
fact-extraction instructions warmed (that upkeep call follows the reply). (A single warm request would not do: a
cached prompt serves one slot.)

After a lane's turn (its reply and upkeep done), `after_upkeep` warms that lane's next
prefix the same way: upkeep changed it (a new summary, new facts), so without this the next
turn would read it all before any token while every lane shares the server's batches. The
session asks for it (`Session.run_lane`), and skips it for the last lane of a turn when the
next turn is already queued (the demo) and that lane has no slot of its own (lanes/slots.py):
the next turn begins at once and would only race it for slots.

A warm-up is never a lane turn: nothing is recorded, saved, or added to any memory, and its
replies are dropped. It is done only where it is free and private (the embedded model with
the prompt cache on; a hosted API would bill it) and through a transport that has a `warm`
method (the real providers; test fakes opt in). A warm-up is kept for the next session
with the same prefixes until a turn uses it (the main page makes a new session when the demo
starts; the one warmed on page load serves it).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memory.errors import MemoryLabError
from memory.maintenance import Upkeep, extraction_request
from memory.types import Completion, Request, Turn

if TYPE_CHECKING:
    from lanes.session import Session

log = logging.getLogger(__name__)

PROBE_TEXT = "Hello"  # stands in for the user's message: only what comes before it is kept
WAIT_LIMIT_S = 120.0  # a lane waits at most this long for a warm-up still running


def _no_model(request: Request) -> Completion:
    raise RuntimeError("no model calls while warming")


def wanted(settings: Any) -> bool:
    """Whether warming pays: the embedded server with its prompt cache asked for."""
    return getattr(settings, "kind", None) == "embedded" and bool(
        getattr(settings, "prompt_cache", False)
    )


def probes(session: Session, labels: Iterable[str] | None = None) -> list[tuple[Request, Any]]:
    """(request, settings) to warm. For every lane (of `labels`; None: all) whose provider
    warming pays for, the request its next turn would send for `PROBE_TEXT` (built on a fork
    with no model: nothing in the lane changes; lanes that cannot build one are skipped); for
    every such lane that keeps facts, the fact-extraction request its upkeep sends after that
    turn (long instructions first), where its upkeep model is warmable too."""
    calls: list[tuple[Request, Any]] = []
    for label in session.lanes if labels is None else labels:
        lane = session.lanes[label]
        settings = session.providers.get(label, session.provider)
        if not wanted(settings):
            continue
        fork = lane.strategy.fork()
        fork.upkeep = Upkeep.using(_no_model)
        try:
            calls.append((fork.prepare(PROBE_TEXT), settings))
        except (MemoryLabError, RuntimeError) as exc:
            log.info("no warm-up for lane %s: %s", label, exc)
            continue
        upkeep = session.upkeep_providers[label]
        if lane.spec.cls.uses_facts and wanted(upkeep):
            turn = Turn(len(fork.history.turns) + 1, PROBE_TEXT, "")
            calls.append((extraction_request(fork.counter, fork.facts, turn), upkeep))
    return calls


def _key(calls: list[tuple[Request, Any]]) -> Hashable:
    return tuple(
        (
            getattr(settings, "base_url", None),
            getattr(settings, "model", None),
            getattr(settings, "slot", None),  # a warm-up serves the lane pinned to its slot
            r.system,
            tuple((m.role, m.content) for m in r.messages[:-1]),
        )
        for r, settings in calls
    )


@dataclass
class WarmStats:
    """What a finished warm-up did: calls sent, prompt tokens the server read, seconds."""

    calls: int = 0
    tokens_read: int = 0
    seconds: float = 0.0
    failed: int = 0
    skipped: int = 0  # not sent: no longer wanted (the next turn had begun)


class Warmup:
    """One warm-up in flight or done: `done` is set when every probe has come back."""

    def __init__(self, key: Hashable, calls: list[tuple[Request, Any]]) -> None:
        self.key = key
        self.calls = calls  # (request, settings asking for one token)
        self.done = threading.Event()
        self.used = False
        self.stats = WarmStats(calls=len(calls))

    def run(
        self,
        warm: Callable[[Request, Any], Any],
        wanted: Callable[[], bool] = lambda: True,
        before: Callable[[], None] | None = None,
    ) -> None:
        """Send every call at once; a call is skipped (counted in `stats.skipped`) when
        `wanted()` is False just before it would be sent. `before()` runs first, in this
        thread (it may drop calls that no longer need sending)."""
        started = time.perf_counter()
        try:
            if before is not None:
                before()
                self.stats.calls = len(self.calls)
            if self.calls:
                with ThreadPoolExecutor(max_workers=len(self.calls)) as pool:
                    for reply in pool.map(lambda c: self._send(warm, wanted, *c), self.calls):
                        if reply is _SKIPPED:
                            self.stats.skipped += 1
                        else:
                            self._count(reply)
        finally:
            self.stats.seconds = time.perf_counter() - started
            self.done.set()

    def _send(
        self,
        warm: Callable[[Request, Any], Any],
        wanted: Callable[[], bool],
        request: Request,
        settings: Any,
    ) -> Any:
        if not wanted():
            return _SKIPPED
        return _quietly(warm, request, settings)

    def _count(self, reply: Any) -> None:
        usage = getattr(reply, "usage", None)
        if reply is None or getattr(reply, "error", None) is not None or usage is None:
            self.stats.failed += 1
            return
        cached = (getattr(usage, "details", None) or {}).get("cached_tokens") or 0
        self.stats.tokens_read += (usage.input or 0) - cached

    def wait(self, timeout: float = WAIT_LIMIT_S) -> bool:
        return self.done.wait(timeout)


def _quietly(warm: Callable[[Request, Any], Any], request: Request, settings: Any) -> Any:
    try:
        return warm(request, settings)
    except Exception as exc:  # a warm-up is a nicety: it never fails anything
        log.info("a warm-up call failed: %s", exc)
        return None


_SKIPPED = object()
_lock = threading.Lock()
_latest: Warmup | None = None


def start(session: Session) -> Warmup | None:
    """Warm every lane's prefix in the background (at once returns), or join an unused
    warm-up of the same prefixes; None where warming does not pay."""
    global _latest
    warm = getattr(session.transport, "warm", None)  # the real providers; fakes opt in
    if warm is None:
        return None
    calls = probes(session)
    if not calls:
        return None
    key = _key(calls)
    with _lock:
        if _latest is not None and _latest.key == key and not _latest.used:
            return _latest
        warmup = _latest = Warmup(key, _one_token(calls))
    _launch(warmup, warm)
    return warmup


def after_upkeep(session: Session, label: str, turn: int) -> Warmup | None:
    """Warm lane `label`'s NEXT prefix (system prompt, summary and facts as its upkeep just
    left them, the turns it keeps; for a lane that keeps facts, its next extraction request
    too) in the background, right after turn `turn`'s upkeep: while the room waits for the
    next message the model reads what the next turn would otherwise read before its first
    token. Returns at once; a call not yet sent when the next turn begins is skipped (a lane
    never waits for this). Embedded model with the prompt cache only, as `start`; never kept
    for another session. None where it does not pay."""
    warm = getattr(session.transport, "warm", None)
    if warm is None:
        return None
    calls = probes(session, [label])
    if not calls:
        return None
    warmup = Warmup(_key(calls), _one_token(calls))
    reply_probe = calls[0][0]

    def drop_held() -> None:
        """A lane that followed a shared call (lanes/sharing.py) with a lane before it whose
        next prefix is the same sends its next request to that lane's slot
        (`Session.hold_in_shared_slot`): its own slot is not warmed."""
        if session.hold_in_shared_slot(label, turn, reply_probe):
            warmup.calls = warmup.calls[1:]

    _launch(warmup, warm, lambda: session.turn == turn, drop_held)
    return warmup


def _one_token(calls: list[tuple[Request, Any]]) -> list[tuple[Request, Any]]:
    return [(r, settings.with_(max_tokens=1)) for r, settings in calls]


def _launch(
    warmup: Warmup,
    warm: Callable[[Request, Any], Any],
    wanted: Callable[[], bool] = lambda: True,
    before: Callable[[], None] | None = None,
) -> None:
    thread = threading.Thread(
        target=warmup.run,
        args=(warm, wanted, before),
        name="memory-lab-warmup",
        daemon=True,
    )
    thread.start()
