"""Identical requests sent once: lanes whose memories build the same request share one call.

At temperature 0 a reply depends on the request alone. Early in a conversation most memory
strategies keep every turn, so their lanes build byte-identical requests: in the FinCoach
demo all six lanes send the same request at turn 1, and four of them still do at turn 3.
Sent six times, the model writes the same answer six times over, and on the embedded model
six answers at once take about five times as long as one (its tokens per second barely grow
with the batch). With sharing on (`Session(share=True)`, which stacks lanes/shared_transport.py; the main page's "Send identical
requests once", on by default), the first lane to send a request makes the call and any lane
that sends the same request while that call runs follows its stream instead:

- one call, one body on the wire: every lane it answered records that body (with the slot of
  the lane that sent it) and the lanes it answered, sender first (`LaneTurn.shared`,
  `MaintenanceRecord.shared`); each lane still counts the tokens and cost as its own, since
  that is what its strategy costs alone;
- "the same request": same settings, same system text, messages
  and reply shape. Only for settings whose bodies ask for temperature 0
  (`providers.bodies.greedy`); at any other temperature each lane samples its own reply;
- only while the call runs: a request sent after it ended goes out again (no reply cache,
  so a retry is a fresh call);
- a lane that stops (its `on_delta` raises) leaves the call going for the others; the call's
  stream is closed when no lane follows it any more;
- upkeep calls (summaries, fact extraction) are shared the same way (`model_fn`).

The call runs in a thread of its own and every lane, the sender included, reads it from the
call's buffer, so no lane's stop or failure reaches into another's thread.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, replace
from typing import Any

from memory.types import Completion, ModelFn, Request

# send(request, settings, on_delta) -> reply: the transport's stream
Send = Callable[[Request, Any, Callable[[str], None] | None], Any]


def share_key(request: Request, settings: Any) -> Hashable | None:
    """What makes two calls the same call, or None when a call is never shared (sampling, or
    settings that cannot be compared)."""
    if not _greedy(settings):
        return None
    schema = json.dumps(request.reply_schema, sort_keys=True) if request.reply_schema else None
    key = (settings, request.system, request.messages, schema)
    try:
        hash(key)
    except TypeError:
        return None
    return key


def prefix_key(request: Request, settings: Any) -> Hashable:
    """What a request holds before its new message, and where it goes: two requests with
    equal keys find the same cached prompt in one server slot."""
    return (settings, request.system, request.messages[:-1])


def _greedy(settings: Any) -> bool:
    from providers.bodies import greedy
    from providers.settings import ProviderSettings

    if isinstance(settings, ProviderSettings):
        return greedy(settings)
    return getattr(settings, "temperature", None) == 0


@dataclass(frozen=True)
class SharedReply:
    """A reply as one lane received it (shaped like providers.Reply): the call's text, usage
    and body; timings from the moment this lane asked; `shared`: the lanes the call answered,
    sender first (empty when it answered this lane only)."""

    text: str
    usage: Any
    body: Any
    complete: bool
    error: Exception | None
    latency_s: float | None
    ttft_s: float | None
    model: str | None
    shared: tuple[str, ...] = ()


class _Abandoned(Exception):  # noqa: N818 (a signal: closes a stream nobody follows)
    """Raised into the call's stream when every lane following it has stopped."""


class _Call:
    """One streamed call and the lanes following it."""

    def __init__(self) -> None:
        self.changed = threading.Condition()
        self.pieces: list[str] = []
        self.members: list[str] = []  # every lane that joined, in order
        self.active = 0  # lanes still reading
        self.abandoned = False
        self.done = False
        self.reply: Any = None
        self.failure: BaseException | None = None

    def join(self, label: str) -> bool:
        with self.changed:
            if self.abandoned or self.done:
                return False
            self.members.append(label)
            self.active += 1
            return True

    def leave(self) -> None:
        with self.changed:
            self.active -= 1
            if self.active == 0 and not self.done:
                self.abandoned = True  # the next piece closes the stream

    def add(self, piece: str) -> None:
        with self.changed:
            if self.abandoned:
                raise _Abandoned
            self.pieces.append(piece)
            self.changed.notify_all()

    def finish(self, reply: Any, failure: BaseException | None) -> None:
        with self.changed:
            self.reply, self.failure, self.done = reply, failure, True
            self.changed.notify_all()


@dataclass
class _Upkeep:
    """One upkeep call and the lanes waiting for it."""

    members: list[str]
    done: threading.Event
    completion: Completion | None = None
    failure: BaseException | None = None


class SharedCalls:
    """The calls of one session that are running now, by what they ask."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._streams: dict[Hashable, _Call] = {}
        self._upkeep: dict[Hashable, _Upkeep] = {}

    def running(self) -> list[tuple[str, ...]]:
        """The lanes following each call running now (replies, then upkeep calls)."""
        with self._lock:
            calls = list(self._streams.values())
            upkeep = [tuple(e.members) for e in self._upkeep.values()]
        streams = []
        for call in calls:
            with call.changed:
                streams.append(tuple(call.members))
        return streams + upkeep

    # ---- replies -------------------------------------------------------------------------
    def stream(
        self,
        label: str,
        request: Request,
        settings: Any,
        on_delta: Callable[[str], None] | None,
        send: Send,
    ) -> Any:
        """Lane `label`'s reply to `request`: from a call already running for the same request,
        else from a new one; `send` makes the call."""
        key = share_key(request, settings)
        if key is None:
            return send(request, settings, on_delta)
        asked = time.perf_counter()
        with self._lock:
            call = self._streams.get(key)
            if call is None or not call.join(label):
                call = self._streams[key] = _Call()
                call.join(label)
                threading.Thread(
                    target=self._run,
                    args=(key, call, request, settings, send),
                    name=f"shared-call-{label}",
                    daemon=True,
                ).start()
        return self._follow(call, on_delta, asked)

    def _run(self, key: Hashable, call: _Call, request: Request, settings: Any, send: Send) -> None:
        reply: Any = None
        failure: BaseException | None = None
        try:
            reply = send(request, settings, call.add)
        except _Abandoned:
            pass  # nobody reads it any more
        except BaseException as exc:  # handed to every lane that follows the call
            failure = exc
        finally:
            with self._lock:
                if self._streams.get(key) is call:
                    del self._streams[key]
            call.finish(reply, failure)

    def _follow(
        self, call: _Call, on_delta: Callable[[str], None] | None, asked: float
    ) -> SharedReply:
        seen = 0
        first_at: float | None = None
        try:
            while True:
                with call.changed:
                    while not call.done and len(call.pieces) <= seen:
                        call.changed.wait()
                    new, done = call.pieces[seen:], call.done
                for piece in new:
                    if first_at is None:
                        first_at = time.perf_counter()
                    if on_delta is not None:
                        on_delta(piece)  # a stopped lane raises here and leaves the call
                seen += len(new)
                if done:
                    break
        finally:
            call.leave()
        if call.failure is not None:
            raise call.failure
        reply = call.reply
        if reply is None:  # abandoned: only when every lane left, so no lane gets here
            raise RuntimeError("the shared call was closed with no lane following it")
        members = tuple(call.members) if len(call.members) > 1 else ()
        return SharedReply(
            text=reply.text,
            usage=reply.usage,
            body=reply.body,
            complete=reply.complete,
            error=reply.error,
            latency_s=time.perf_counter() - asked,
            ttft_s=None if first_at is None else first_at - asked,
            model=reply.model,
            shared=members,
        )

    # ---- upkeep --------------------------------------------------------------------------
    def model_fn(self, label: str, settings: Any, model: ModelFn) -> ModelFn:
        """`model` (an upkeep call through `settings`) for lane `label`, shared with the other
        lanes' identical upkeep calls while one runs."""

        def call(request: Request) -> Completion:
            key = share_key(request, settings)
            if key is None:
                return model(request)
            with self._lock:
                entry = self._upkeep.get(key)
                lead = entry is None
                if entry is None:
                    entry = self._upkeep[key] = _Upkeep([], threading.Event())
                entry.members.append(label)
            if lead:
                try:
                    entry.completion = model(request)
                except BaseException as exc:  # every lane waiting on it records the failure
                    entry.failure = exc
                finally:
                    with self._lock:
                        del self._upkeep[key]
                    entry.done.set()
            else:
                entry.done.wait()
            if entry.failure is not None:
                raise entry.failure
            assert entry.completion is not None
            if len(entry.members) > 1:
                return replace(entry.completion, shared=tuple(entry.members))
            return entry.completion

        return call
