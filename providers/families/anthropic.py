"""The Anthropic messages family: its body (`system` apart, strict alternation, prompt-cache
breakpoints), SDK client, stream events and usage, `messages.count_tokens` and Message
Batches.

May import: memory/, providers.families.base. The SDK is imported on first use.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from memory.types import Message, Request, Usage
from providers.families.base import (
    BatchLine,
    BatchOutcome,
    BatchState,
    BatchStatus,
    CallSettings,
    Collected,
    Family,
    count_of,
    opt_int,
)

# Put in front of a history that starts with an assistant message, because the
# Anthropic API wants the first message to come from the user.
LEADING_USER_PLACEHOLDER = "(earlier conversation omitted)"
EPHEMERAL = {"type": "ephemeral"}
# What the counting endpoint takes from a message body (the rest is about the reply).
COUNTED_FIELDS = ("model", "system", "messages", "tools", "thinking")
# The HTTP status an error type of a batch result (or a stream error event) stands for.
ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "rate_limit_error": 429,
    "overloaded_error": 529,
}


def is_anthropic_api(base_url: str | None) -> bool:
    """Whether `base_url` is Anthropic's own API (None: the SDK's default, which is)."""
    if base_url is None:
        return True
    host = urlparse(base_url).hostname or ""
    return host == "anthropic.com" or host.endswith(".anthropic.com")


def alternate(messages: tuple[Message, ...]) -> list[dict[str, str]]:
    """Messages as strict user/assistant alternation, starting with the user.

    Consecutive messages of one role are joined with a blank line; a history that opens
    with an assistant message gets a short user placeholder in front of it.
    """
    out: list[dict[str, str]] = []
    for message in messages:
        if out and out[-1]["role"] == message.role:
            out[-1] = {
                "role": message.role,
                "content": out[-1]["content"] + "\n\n" + message.content,
            }
        else:
            out.append(message.as_dict())
    if out and out[0]["role"] != "user":
        out.insert(0, {"role": "user", "content": LEADING_USER_PLACEHOLDER})
    return out


def mark_cache_breakpoints(body: dict[str, Any]) -> None:
    """Anthropic's prompt cache: the system prompt and the newest message become cache
    breakpoints (text blocks with `cache_control`), so the next turn reads the unchanged
    prefix from the cache. Prompts under the model's minimum (1,024-4,096 tokens) are
    simply not cached."""
    if isinstance(body.get("system"), str):
        body["system"] = [{"type": "text", "text": body["system"], "cache_control": EPHEMERAL}]
    if body["messages"]:
        last = body["messages"][-1]
        block = {"type": "text", "text": last["content"], "cache_control": EPHEMERAL}
        body["messages"][-1] = {"role": last["role"], "content": [block]}


def anthropic_usage(raw: Any, previous: Usage | None) -> Usage:
    """Anthropic's usage with `input` = the whole prompt (uncached + cache read + cache write).

    Anthropic's `input_tokens` leaves out tokens read from or written to the prompt cache;
    they are added back so `input` means the same for every provider, and the split is
    kept in `details`.
    """
    old = dict(previous.details) if previous else {}
    fresh = opt_int(getattr(raw, "input_tokens", None))
    read = opt_int(getattr(raw, "cache_read_input_tokens", None))
    write = opt_int(getattr(raw, "cache_creation_input_tokens", None))
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
    thinking = opt_int(
        getattr(getattr(raw, "output_tokens_details", None), "thinking_tokens", None)
    )
    if thinking is None:
        thinking = old.get("reasoning_tokens")
    if thinking is not None:
        details["reasoning_tokens"] = thinking
    output = opt_int(getattr(raw, "output_tokens", None))
    if output is None and previous is not None:
        output = previous.output
    total_in = None if fresh is None else fresh + (read or 0) + (write or 0)
    return Usage(input=total_in, output=output, details=details)


def read_event(event: Any, got: Collected) -> str:
    """Fold one messages stream event into `got`; the text it carries."""
    event_type = getattr(event, "type", "")
    if event_type == "message_start":
        message = getattr(event, "message", None)
        got.model = getattr(message, "model", None) or got.model
        usage = getattr(message, "usage", None)
        if usage is not None:
            got.usage = anthropic_usage(usage, None)
    elif event_type == "content_block_delta":
        delta = getattr(event, "delta", None)
        if getattr(delta, "type", "") == "text_delta":
            text = getattr(delta, "text", "")
            return text if isinstance(text, str) else ""
    elif event_type == "message_delta":
        reason = getattr(getattr(event, "delta", None), "stop_reason", None)
        if reason:
            got.finish_reason = str(reason)
        usage = getattr(event, "usage", None)
        if usage is not None:
            got.usage = anthropic_usage(usage, got.usage)
    elif event_type == "message_stop":
        got.finished = True
    return ""


def anthropic_requests(lines: Iterable[BatchLine]) -> list[dict[str, Any]]:
    """The `requests` of a Message Batch: each line's body as its `params`."""
    return [{"custom_id": line.custom_id, "params": line.params()} for line in lines]


def batch_outcome(item: Any) -> BatchOutcome:
    """One result of a Message Batch, read."""
    cid = str(item.custom_id)
    result = item.result
    result_type = str(getattr(result, "type", ""))
    if result_type == "succeeded":
        message = result.message
        text = "".join(
            str(getattr(block, "text", ""))
            for block in (message.content or ())
            if getattr(block, "type", "") == "text"
        )
        usage = anthropic_usage(message.usage, None) if message.usage else None
        finish = str(message.stop_reason) if message.stop_reason else None
        return BatchOutcome(cid, "succeeded", text, usage, message.model, finish)
    if result_type == "errored":
        inner = getattr(getattr(result, "error", None), "error", None)
        fields = {
            "type": str(getattr(inner, "type", "") or ""),
            "message": str(getattr(inner, "message", "") or ""),
        }
        status = ERROR_STATUS.get(fields["type"], 500)
        return BatchOutcome(cid, "errored", status=status, error=fields)
    if result_type == "expired":
        return BatchOutcome(cid, "expired")
    return BatchOutcome(cid, "canceled")


@dataclass(frozen=True)
class AnthropicMessages(Family):
    """An endpoint speaking Anthropic's Messages API through the anthropic SDK."""

    def greedy(self, settings: CallSettings) -> bool:
        """Anthropic's own API is sent no temperature, so it samples."""
        return settings.temperature == 0 and not is_anthropic_api(settings.base_url)

    def build_body(
        self, request: Request, settings: CallSettings, slot: int | None = None
    ) -> dict[str, Any]:
        """A streaming messages body: `system` apart, alternating messages, `max_tokens` set.

        `temperature` is sent when set, except to Anthropic's own API: its current version
        (2026-10-21, what SDK 2.x sends) rejects every sampling parameter with HTTP 400.
        Other servers speaking this format (the embedded llama.cpp) still honour it.
        A request's `reply_schema` adds nothing: the Messages API has no response-format
        field, so a JSON reply rests on the prompt (which asks for JSON) and on the parser.
        """
        self.check_slot(slot)
        body: dict[str, Any] = {"model": settings.model, "max_tokens": settings.max_tokens}
        if request.system:
            body["system"] = request.system
        body["messages"] = alternate(request.messages)
        if settings.temperature is not None and not is_anthropic_api(settings.base_url):
            body["temperature"] = settings.temperature
        if settings.prompt_cache and self.prompt_cache:
            mark_cache_breakpoints(body)
        body["stream"] = True
        return body

    def client(self, base_url: str | None, key: str, *, loopback: bool) -> Any:
        import anthropic

        extra: dict[str, Any] = {}
        if loopback:
            extra["http_client"] = anthropic.DefaultHttpxClient(trust_env=False)
        return anthropic.Anthropic(api_key=key, base_url=base_url, max_retries=0, **extra)

    def create(self, client: Any) -> Callable[..., Any]:
        return client.messages.create

    def read_event(self, event: Any, got: Collected) -> str:
        return read_event(event, got)

    def count(self, client: Any, body: Mapping[str, Any], timeout: float) -> tuple[int, str]:
        args = {k: body[k] for k in COUNTED_FIELDS if k in body}
        found = client.messages.count_tokens(**args, timeout=timeout)
        return int(found.input_tokens), "anthropic messages.count_tokens"

    def batch_submit(
        self,
        client: Any,
        lines: Sequence[BatchLine],
        *,
        timeout: float,
        metadata: Mapping[str, str] | None,
    ) -> Any:
        return client.messages.batches.create(requests=anthropic_requests(lines), timeout=timeout)

    def batch_retrieve(self, client: Any, batch_id: str, *, timeout: float) -> Any:
        return client.messages.batches.retrieve(batch_id, timeout=timeout)

    def batch_status(self, batch: Any) -> BatchStatus:
        raw = str(getattr(batch, "processing_status", None) or getattr(batch, "status", ""))
        counts = getattr(batch, "request_counts", None)
        state: BatchState = "ended" if raw == "ended" else "running"
        ok = count_of(counts, "succeeded")
        bad = sum(count_of(counts, n) for n in ("errored", "expired", "canceled"))
        total = ok + bad + count_of(counts, "processing")
        return BatchStatus(str(batch.id), self.wire, state, raw, total, ok, bad)

    def batch_results(
        self, client: Any, status: BatchStatus, *, timeout: float
    ) -> Iterator[BatchOutcome]:
        for item in client.messages.batches.results(status.batch_id, timeout=timeout):
            yield batch_outcome(item)


ANTHROPIC = AnthropicMessages(
    kind="anthropic",
    label="Anthropic",
    wire="anthropic",
    sdk="anthropic",
    key_env="ANTHROPIC_API_KEY",
    hosted=True,
    batch_lines=100_000,
    prompt_cache=True,
)
