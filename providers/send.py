"""Send a Request with the official SDK, stream the reply, and account for what happened.

`stream` builds the body with `providers.bodies.build_body`, passes that very dict to the
family's create call (`client.chat.completions.create`, `client.messages.create`), forwards text
deltas as they arrive, and returns a `Reply`. It does not raise for provider or network
failures: the Reply carries the error, and whatever text arrived before it.

Only a callback's own exceptions propagate (so a UI framework can stop a run mid-stream).
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from memory.types import Completion, ModelFn, Request, Usage
from providers.bodies import build_body, family_of
from providers.catalog import model_info
from providers.clients import endpoint_url, get_client
from providers.errors import ProviderError, short_detail
from providers.families.base import Collected
from providers.redaction import safe_url
from providers.sdk_errors import map_error
from providers.settings import ProviderSettings

log = logging.getLogger(__name__)

MAX_BACKOFF_S = 30.0
_SDK_OWN = {"self", "extra_headers", "extra_query", "extra_body", "timeout"}

OnDelta = Callable[[str], None]


@dataclass(frozen=True)
class Reply:
    """A finished (or failed) model call: text, usage, timings and the body that was sent."""

    text: str
    usage: Usage | None
    latency_s: float
    ttft_s: float | None
    body: Mapping[str, Any]
    model: str
    complete: bool
    error: ProviderError | None = None
    finish_reason: str | None = None
    attempts: int = 0
    provider: str = ""
    url: str | None = field(default=None)

    @property
    def ok(self) -> bool:
        """True when the model finished and nothing went wrong."""
        return self.complete and self.error is None

    @property
    def error_message(self) -> str | None:
        """The error as one line for display ("RateLimited: …"), or None."""
        return f"{self.error.kind}: {self.error}" if self.error else None

    def public_dict(self) -> dict[str, Any]:
        """Plain, JSON-ready data for saving or exporting (holds no key: bodies never do)."""
        usage = None
        if self.usage is not None:
            usage = {
                "input": self.usage.input,
                "output": self.usage.output,
                "details": dict(self.usage.details),
            }
        return {
            "text": self.text,
            "usage": usage,
            "latency_s": self.latency_s,
            "ttft_s": self.ttft_s,
            "body": self.body,
            "model": self.model,
            "complete": self.complete,
            "error": None
            if self.error is None
            else {"kind": self.error.kind, "message": str(self.error), "status": self.error.status},
            "finish_reason": self.finish_reason,
            "attempts": self.attempts,
            "provider": self.provider,
            "url": safe_url(self.url),
        }


_signature_lock = threading.Lock()
_known_params: dict[str, frozenset[str]] = {}


def _create_params(kind: str, create: Callable[..., Any]) -> frozenset[str]:
    """The keyword arguments the SDK's create() declares (the rest go in extra_body)."""
    with _signature_lock:
        if kind not in _known_params:
            names = set(inspect.signature(create).parameters) - _SDK_OWN
            _known_params[kind] = frozenset(names)
        return _known_params[kind]


def _split(kind: str, create: Callable[..., Any], body: Mapping[str, Any]) -> dict[str, Any]:
    """Keyword arguments that put exactly `body` on the wire.

    Fields the installed SDK has no argument for (anthropic SDK 2.x dropped `temperature`,
    which llama.cpp still honours) travel in `extra_body`, which the SDK merges into the
    JSON it sends, unchanged.
    """
    known = _create_params(kind, create)
    kwargs = {k: v for k, v in body.items() if k in known}
    extra = {k: v for k, v in body.items() if k not in known}
    if extra:
        kwargs["extra_body"] = extra
    return kwargs


def _attempt(
    client: Any,
    body: Mapping[str, Any],
    settings: ProviderSettings,
    got: Collected,
    on_delta: OnDelta | None,
    url: str | None,
    key: str,
) -> ProviderError | None:
    """One call: open the stream, read it to the end, return the error if any."""
    chosen = family_of(settings)
    create = chosen.create(client)
    try:
        response = create(**_split(chosen.kind, create, body), timeout=settings.timeout)
    except Exception as exc:
        return map_error(exc, settings, url=url, key=key, phase="request")
    error: ProviderError | None = None
    try:
        events = iter(response)
        while True:
            try:
                item = next(events)
            except StopIteration:
                break
            except Exception as exc:
                error = map_error(exc, settings, url=url, key=key, phase="stream")
                break
            text = chosen.read_event(item, got)
            if text:
                if got.first_at is None:
                    got.first_at = time.perf_counter()
                got.parts.append(text)
                if on_delta is not None:
                    on_delta(text)
    finally:
        with contextlib.suppress(Exception):  # closing a dead stream is best effort
            response.close()
    if error is None and not got.finished:
        where = url or "the provider"
        error = map_error(
            ConnectionResetError("stream ended early"), settings, url=where, key=key, phase="stream"
        )
    return error


def _backoff(settings: ProviderSettings, error: ProviderError, attempt: int) -> float:
    wait = settings.retry_backoff * (2 ** (attempt - 1))
    retry_after = getattr(error, "retry_after", None)
    if isinstance(retry_after, (int, float)) and retry_after > wait:
        wait = float(retry_after)
    return min(wait, MAX_BACKOFF_S)


def stream(
    request: Request,
    settings: ProviderSettings,
    on_delta: OnDelta | None = None,
    *,
    slot: int | None = None,
) -> Reply:
    """Send `request`, calling `on_delta(text)` for each piece of the reply as it arrives;
    `slot`: the embedded server's slot to run in (None: the server picks).

    Never raises for provider or network failures: the returned Reply has `error` set
    (and `complete=False`), keeping any partial text. Rate limits and overloaded servers
    are retried `settings.max_retries` times with exponential backoff from
    `settings.retry_backoff` seconds, as long as no text has been streamed yet.
    Timings (`latency_s`, `ttft_s`) run from the call, so they include any retries.
    """
    body = build_body(request, settings, slot)
    started = time.perf_counter()
    url: str | None = None
    attempts = 0
    got = Collected()
    error: ProviderError | None
    try:
        url = endpoint_url(settings)
        key = settings.resolve_key()
        client = get_client(settings, url, key)
    except ProviderError as exc:
        error = exc
    else:
        while True:
            attempts += 1
            got = Collected()
            log.debug(
                "sending %s request for %s to %s (attempt %d)",
                family_of(settings).wire,
                settings.model,
                safe_url(url) or "the default URL",
                attempts,
            )
            error = _attempt(client, body, settings, got, on_delta, url, key)
            if error is None or not error.retryable or got.parts or attempts > settings.max_retries:
                break
            wait = _backoff(settings, error, attempts)
            log.info("%s; retrying in %.2f s", error.kind, wait)
            time.sleep(wait)
    ended = time.perf_counter()
    if error is not None:
        log.info(
            "call to %s (%s) failed: %s: %s",
            settings.model,
            safe_url(url) or settings.kind,
            error.kind,
            short_detail(str(error)),
        )
    return Reply(
        text=got.text,
        usage=got.usage,
        latency_s=ended - started,
        ttft_s=None if got.first_at is None else got.first_at - started,
        body=body,
        model=got.model or settings.model,
        complete=error is None and got.finished,
        error=error,
        finish_reason=got.finish_reason,
        attempts=attempts,
        provider=settings.kind,
        url=url,
    )


def as_model_fn(
    settings: ProviderSettings,
    *,
    model: str | None = None,
    max_tokens: int | None = None,
    slot: int | None = None,
) -> ModelFn:
    """A memory-core model function over `stream`, optionally with another (cheaper) model.

    It returns a Completion, and raises the ProviderError when the call fails (the memory
    core records it on the maintenance call).
    """
    changes: dict[str, Any] = {}
    if model and model != settings.model:
        changes["model"] = model
        info = model_info(settings.with_(model=model))
        changes["context_window"] = info.context_window if info else None
    if max_tokens is not None:
        changes["max_tokens"] = max_tokens
    target = settings.with_(**changes) if changes else settings

    def call(request: Request) -> Completion:
        reply = stream(request, target, slot=slot)
        if reply.error is not None:
            raise reply.error
        return Completion(text=reply.text, usage=reply.usage, body=reply.body, model=reply.model)

    return call
