"""Send a Request with the official SDK, stream the reply, and account for what happened.

`stream` builds the body with `providers.bodies.build_body`, passes that very dict to
`client.chat.completions.create(...)` or `client.messages.create(...)`, forwards text
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
from providers.bodies import api_family, build_body
from providers.catalog import model_info
from providers.clients import endpoint_url, get_client
from providers.errors import ProviderError, short_detail
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


class _Collected:
    """What one attempt gathered from the stream."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.first_at: float | None = None
        self.finish_reason: str | None = None
        self.finished = False
        self.model: str | None = None
        self.usage: Usage | None = None

    @property
    def text(self) -> str:
        return "".join(self.parts)


_signature_lock = threading.Lock()
_known_params: dict[str, frozenset[str]] = {}


def _create_params(family: str, create: Callable[..., Any]) -> frozenset[str]:
    """The keyword arguments the SDK's create() declares (the rest go in extra_body)."""
    with _signature_lock:
        if family not in _known_params:
            names = set(inspect.signature(create).parameters) - _SDK_OWN
            _known_params[family] = frozenset(names)
        return _known_params[family]


def _split(family: str, create: Callable[..., Any], body: Mapping[str, Any]) -> dict[str, Any]:
    """Keyword arguments that put exactly `body` on the wire.

    Fields the installed SDK has no argument for (anthropic SDK 2.x dropped `temperature`,
    which llama.cpp still honours) travel in `extra_body`, which the SDK merges into the
    JSON it sends, unchanged.
    """
    known = _create_params(family, create)
    kwargs = {k: v for k, v in body.items() if k in known}
    extra = {k: v for k, v in body.items() if k not in known}
    if extra:
        kwargs["extra_body"] = extra
    return kwargs


def _opt_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _openai_usage(raw: Any) -> Usage:
    details: dict[str, int] = {}
    prompt_details = getattr(raw, "prompt_tokens_details", None)
    completion_details = getattr(raw, "completion_tokens_details", None)
    for name, source, attr in (
        ("cached_tokens", prompt_details, "cached_tokens"),
        ("cache_write_tokens", prompt_details, "cache_write_tokens"),
        ("reasoning_tokens", completion_details, "reasoning_tokens"),
        ("total_tokens", raw, "total_tokens"),
    ):
        value = _opt_int(getattr(source, attr, None))
        if value is not None:
            details[name] = value
    return Usage(
        input=_opt_int(getattr(raw, "prompt_tokens", None)),
        output=_opt_int(getattr(raw, "completion_tokens", None)),
        details=details,
    )


def _anthropic_usage(raw: Any, previous: Usage | None) -> Usage:
    """Anthropic's usage with `input` = the whole prompt (uncached + cache read + cache write).

    Anthropic's `input_tokens` leaves out tokens read from or written to the prompt cache;
    they are added back so `input` means the same for every provider, and the split is
    kept in `details`.
    """
    old = dict(previous.details) if previous else {}
    fresh = _opt_int(getattr(raw, "input_tokens", None))
    read = _opt_int(getattr(raw, "cache_read_input_tokens", None))
    write = _opt_int(getattr(raw, "cache_creation_input_tokens", None))
    fresh = fresh if fresh is not None else old.get("uncached_input_tokens")
    read = read if read is not None else old.get("cached_tokens")
    write = write if write is not None else old.get("cache_write_tokens")
    details: dict[str, int] = {}
    if fresh is not None:
        details["uncached_input_tokens"] = fresh
    if read is not None:
        details["cached_tokens"] = read
    if write is not None:
        details["cache_write_tokens"] = write
    thinking = _opt_int(
        getattr(getattr(raw, "output_tokens_details", None), "thinking_tokens", None)
    )
    if thinking is None:
        thinking = old.get("reasoning_tokens")
    if thinking is not None:
        details["reasoning_tokens"] = thinking
    output = _opt_int(getattr(raw, "output_tokens", None))
    if output is None and previous is not None:
        output = previous.output
    total_in = None if fresh is None else fresh + (read or 0) + (write or 0)
    return Usage(input=total_in, output=output, details=details)


def _openai_chunk(chunk: Any, got: _Collected) -> str:
    got.model = getattr(chunk, "model", None) or got.model
    usage = getattr(chunk, "usage", None)
    if usage is not None:
        got.usage = _openai_usage(usage)
    text = ""
    for choice in getattr(chunk, "choices", None) or ():
        delta = getattr(choice, "delta", None)
        content = getattr(delta, "content", None)
        if isinstance(content, str) and content:
            text += content
        reason = getattr(choice, "finish_reason", None)
        if reason:
            got.finish_reason = str(reason)
            got.finished = True
    return text


def _anthropic_event(event: Any, got: _Collected) -> str:
    kind = getattr(event, "type", "")
    if kind == "message_start":
        message = getattr(event, "message", None)
        got.model = getattr(message, "model", None) or got.model
        usage = getattr(message, "usage", None)
        if usage is not None:
            got.usage = _anthropic_usage(usage, None)
    elif kind == "content_block_delta":
        delta = getattr(event, "delta", None)
        if getattr(delta, "type", "") == "text_delta":
            text = getattr(delta, "text", "")
            return text if isinstance(text, str) else ""
    elif kind == "message_delta":
        reason = getattr(getattr(event, "delta", None), "stop_reason", None)
        if reason:
            got.finish_reason = str(reason)
        usage = getattr(event, "usage", None)
        if usage is not None:
            got.usage = _anthropic_usage(usage, got.usage)
    elif kind == "message_stop":
        got.finished = True
    return ""


def _attempt(
    client: Any,
    body: Mapping[str, Any],
    settings: ProviderSettings,
    got: _Collected,
    on_delta: OnDelta | None,
    url: str | None,
    key: str,
) -> ProviderError | None:
    """One call: open the stream, read it to the end, return the error if any."""
    family = api_family(settings)
    handle: Callable[[Any, _Collected], str]
    if family == "anthropic":
        create = client.messages.create
        handle = _anthropic_event
    else:
        create = client.chat.completions.create
        handle = _openai_chunk
    try:
        response = create(**_split(family, create, body), timeout=settings.timeout)
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
            text = handle(item, got)
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
    got = _Collected()
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
            got = _Collected()
            log.debug(
                "sending %s request for %s to %s (attempt %d)",
                api_family(settings),
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
