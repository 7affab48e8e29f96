"""Warm-ups of the embedded model: a lane's prefix read ahead of the turn that sends it.

On the embedded llama.cpp server (prompt cache on) a request reads only the tokens its slot
has not cached. Before the first turn no slot holds anything, so turn 1 reads every lane's
system prompt (six lanes: about 1,100 tokens, seconds on 2 cores) before any lane shows a
token. A warm-up sends, for a lane, the request its next turn would send with a one-word
stand-in for the user's message (`probes`), asking for one token, so when the real turn
comes the lane finds its prefix (system prompt, and memory if the conversation is under
way) in its slot. Lanes that keep facts also get their fact-extraction instructions warmed
(that upkeep call follows the reply). A single warm request would not do: a cached prompt
serves one slot.

A warm-up is never a lane turn: nothing is recorded, saved, or added to any memory, and its
replies are dropped. This module is the machinery (what to send, sending it in the
background, counting what it read); when to warm is the embedded router's
(lanes/embedded_router.py).

May import: memory/, lanes/transport.py, lanes/slots.py.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from lanes.slots import Pins
from lanes.transport import Call
from memory.errors import MemoryLabError
from memory.maintenance import Upkeep, extraction_request
from memory.types import Completion, Request, Turn
from providers.families import FAMILIES

if TYPE_CHECKING:
    from lanes.lane import Lane

log = logging.getLogger(__name__)

PROBE_TEXT = "Hello"  # stands in for the user's message: only what comes before it is kept


def _no_model(request: Request) -> Completion:
    raise RuntimeError("no model calls while warming")


def wanted(settings: Any) -> bool:
    """Whether warming pays: a server that can prefill (the embedded one) with its prompt
    cache asked for."""
    found = FAMILIES.get(getattr(settings, "kind", None) or "")
    return found is not None and found.warm_up and bool(getattr(settings, "prompt_cache", False))


def probes(
    lanes: Mapping[str, Lane],
    labels: Iterable[str],
    reply: Mapping[str, Any],
    upkeep: Mapping[str, Any],
    pins: Mapping[str, Pins],
) -> list[Call]:
    """The calls that warm lanes `labels`: for each whose reply settings warming pays for,
    the request its next turn would send for `PROBE_TEXT` (built on a fork with no model:
    nothing in the lane changes; lanes that cannot build one are skipped), in its reply
    slot; for each such lane that keeps facts, the fact-extraction request its upkeep sends
    after that turn (long instructions first), in its upkeep slot, where its upkeep
    settings are warmable too."""
    calls: list[Call] = []
    for label in labels:
        lane = lanes[label]
        if not wanted(reply[label]):
            continue
        fork = lane.strategy.fork()
        fork.upkeep = Upkeep.using(_no_model)
        try:
            calls.append(Call(fork.prepare(PROBE_TEXT), reply[label], label, pins[label].reply))
        except (MemoryLabError, RuntimeError) as exc:
            log.info("no warm-up for lane %s: %s", label, exc)
            continue
        if lane.spec.cls.uses_facts and wanted(upkeep[label]):
            turn = Turn(len(fork.history.turns) + 1, PROBE_TEXT, "")
            request = extraction_request(fork.counter, fork.facts, turn)
            calls.append(Call(request, upkeep[label], label, pins[label].upkeep))
    return calls


def key(calls: list[Call]) -> Hashable:
    """What a warm-up reads, and where: two warm-ups with equal keys fill the same slots alike."""
    return tuple(
        (
            getattr(c.settings, "base_url", None),
            getattr(c.settings, "model", None),
            c.slot,  # a warm-up serves the lane pinned to its slot
            c.request.system,
            tuple((m.role, m.content) for m in c.request.messages[:-1]),
        )
        for c in calls
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

    def __init__(self, key: Hashable, calls: list[Call]) -> None:
        self.key = key
        self.calls = [replace(c, settings=c.settings.with_(max_tokens=1)) for c in calls]
        self.done = threading.Event()
        self.used = False
        self.stats = WarmStats(calls=len(calls))

    def run(
        self,
        warm: Callable[[Call], Any],
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
                    for reply in pool.map(lambda c: self._send(warm, wanted, c), self.calls):
                        if reply is _SKIPPED:
                            self.stats.skipped += 1
                        else:
                            self._count(reply)
        finally:
            self.stats.seconds = time.perf_counter() - started
            self.done.set()

    def _send(self, warm: Callable[[Call], Any], wanted: Callable[[], bool], call: Call) -> Any:
        if not wanted():
            return _SKIPPED
        return _quietly(warm, call)

    def _count(self, reply: Any) -> None:
        usage = getattr(reply, "usage", None)
        if reply is None or getattr(reply, "error", None) is not None or usage is None:
            self.stats.failed += 1
            return
        cached = (getattr(usage, "details", None) or {}).get("cached_tokens") or 0
        self.stats.tokens_read += (usage.input or 0) - cached

    def wait(self, timeout: float | None = None) -> bool:
        return self.done.wait(timeout)

    def launch(
        self,
        warm: Callable[[Call], Any],
        wanted: Callable[[], bool] = lambda: True,
        before: Callable[[], None] | None = None,
    ) -> Warmup:
        """`run` in a background thread; returns at once."""
        threading.Thread(
            target=self.run, args=(warm, wanted, before), name="memory-lab-warmup", daemon=True
        ).start()
        return self


def _quietly(warm: Callable[[Call], Any], call: Call) -> Any:
    try:
        return warm(call)
    except Exception as exc:  # a warm-up is a nicety: it never fails anything
        log.info("a warm-up call failed: %s", exc)
        return None


_SKIPPED = object()
_lock = threading.Lock()
_latest: Warmup | None = None


def joined(calls: list[Call], warm: Callable[[Call], Any]) -> Warmup:
    """A warm-up of `calls` started now, or the latest one if it warms the same prefixes in
    the same slots and no turn has used it yet (the page warms a session on load; the demo's
    Play makes a new session with the same lanes, which joins it)."""
    global _latest
    wanted_key = key(calls)
    with _lock:
        if _latest is not None and _latest.key == wanted_key and not _latest.used:
            return _latest
        warmup = _latest = Warmup(wanted_key, calls)
    return warmup.launch(warm)
