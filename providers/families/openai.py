"""The OpenAI chat-completions family: its body, SDK client, stream chunks and usage,
`responses.input_tokens.count` and the Batch API's JSONL files. `OPENAI` is OpenAI's own
API; `COMPATIBLE` is any server speaking the same format at a given URL (vLLM, Ollama,
Groq...), which is sent only the fields every such server takes.

May import: memory/, providers.families.base. The SDK is imported on first use.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memory.types import Request, Usage
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

BATCH_ENDPOINT = "/v1/chat/completions"
COMPLETION_WINDOW = "24h"


def openai_usage(raw: Any) -> Usage:
    """A chat completion's usage, with cache and reasoning counts in `details`."""
    details: dict[str, int] = {}
    prompt_details = getattr(raw, "prompt_tokens_details", None)
    completion_details = getattr(raw, "completion_tokens_details", None)
    for name, source, attr in (
        ("cached_tokens", prompt_details, "cached_tokens"),
        ("cache_write_tokens", prompt_details, "cache_write_tokens"),
        ("reasoning_tokens", completion_details, "reasoning_tokens"),
        ("total_tokens", raw, "total_tokens"),
    ):
        value = opt_int(getattr(source, attr, None))
        if value is not None:
            details[name] = value
    return Usage(
        input=opt_int(getattr(raw, "prompt_tokens", None)),
        output=opt_int(getattr(raw, "completion_tokens", None)),
        details=details,
    )


def read_chunk(chunk: Any, got: Collected) -> str:
    """Fold one chat-completions stream chunk into `got`; the text it carries."""
    got.model = getattr(chunk, "model", None) or got.model
    usage = getattr(chunk, "usage", None)
    if usage is not None:
        got.usage = openai_usage(usage)
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


def openai_jsonl(lines: Iterable[BatchLine]) -> bytes:
    """The OpenAI batch input file: one JSON request per line."""
    out = []
    for line in lines:
        item = {"custom_id": line.custom_id, "method": "POST", "url": BATCH_ENDPOINT}
        head = json.dumps(item, ensure_ascii=False, separators=(",", ":"))
        body = line.body_json or json.dumps(dict(line.body), ensure_ascii=False, separators=(",", ":"))  # fmt: skip
        out.append(f'{head[:-1]},"body":{body}}}')  # the saved body is not encoded again
    return ("\n".join(out) + "\n").encode()


def batch_line_outcome(item: Mapping[str, Any]) -> BatchOutcome:
    """One line of a batch output or error file, read."""
    cid = str(item.get("custom_id"))
    problem = item.get("error")
    response = item.get("response") or {}
    status = int(response.get("status_code") or 0)
    if problem:
        inner = problem.get("error", problem) if isinstance(problem, Mapping) else {}
        if isinstance(inner, Mapping) and str(inner.get("code")) == "batch_expired":
            return BatchOutcome(cid, "expired", detail=str(inner.get("message") or "") or None)
        return BatchOutcome(cid, "errored", status=status or 500, error=problem)
    payload = response.get("body") or {}
    if status >= 400 or not isinstance(payload, Mapping) or "choices" not in payload:
        return BatchOutcome(cid, "errored", status=status or 500, error=payload)
    from openai.types.chat import ChatCompletion  # the SDK's own model of the answer

    completion = ChatCompletion.model_validate(payload)
    choice = completion.choices[0] if completion.choices else None
    text = (choice.message.content if choice else None) or ""
    usage = openai_usage(completion.usage) if completion.usage else None
    finish = str(choice.finish_reason) if choice and choice.finish_reason else None
    return BatchOutcome(cid, "succeeded", text, usage, completion.model, finish)


@dataclass(frozen=True)
class OpenAIChat(Family):
    """An endpoint speaking OpenAI's chat completions through the openai SDK."""

    reasoning_models: bool = False  # o1/o3/o4/gpt-5 names take max_completion_tokens
    json_mode: bool = False  # a JSON reply is asked with response_format json_object

    def is_reasoning(self, settings: CallSettings) -> bool:
        """OpenAI's reasoning models (o1, o3, o4-mini, gpt-5...): they take
        `max_completion_tokens` (which also covers their hidden reasoning) and refuse
        `temperature`."""
        name = settings.model.lower()
        if not self.reasoning_models or name.startswith("gpt-5-chat"):
            return False
        return name.startswith(("o1", "o3", "o4", "gpt-5"))

    def greedy(self, settings: CallSettings) -> bool:
        return settings.temperature == 0 and not self.is_reasoning(settings)

    def json_fields(self, request: Request, settings: CallSettings) -> dict[str, Any]:
        """The fields asking for a JSON reply. OpenAI: JSON mode (strict `json_schema`
        cannot say "an object with any keys", which a fact store is; o1-mini and o1-preview
        refuse `response_format`). Other servers: nothing, since an unknown server may
        reject a field it does not know; the prompt asks for JSON and the parser finds it."""
        if request.reply_schema is None or not self.json_mode:
            return {}
        if settings.model.lower().startswith(("o1-mini", "o1-preview")):
            return {}
        return {"response_format": {"type": "json_object"}}

    def server_fields(self, settings: CallSettings, slot: int | None) -> dict[str, Any]:
        """Fields of this server's own (none here; the embedded server adds llama.cpp's)."""
        return {}

    def build_body(
        self, request: Request, settings: CallSettings, slot: int | None = None
    ) -> dict[str, Any]:
        """A streaming chat-completions body: the system message first, then the history."""
        slot = self.check_slot(slot)
        messages: list[dict[str, str]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        messages.extend(m.as_dict() for m in request.messages)
        body: dict[str, Any] = {"model": settings.model, "messages": messages}
        body.update(self.json_fields(request, settings))
        if self.is_reasoning(settings):
            body["max_completion_tokens"] = settings.max_tokens
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
            return body
        if settings.temperature is not None:
            body["temperature"] = settings.temperature
        body["max_tokens"] = settings.max_tokens
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
        body.update(self.server_fields(settings, slot))
        return body

    def client(self, base_url: str | None, key: str, *, loopback: bool) -> Any:
        import openai

        extra: dict[str, Any] = {}
        if loopback:
            extra["http_client"] = openai.DefaultHttpxClient(trust_env=False)
        return openai.OpenAI(api_key=key, base_url=base_url, max_retries=0, **extra)

    def create(self, client: Any) -> Callable[..., Any]:
        return client.chat.completions.create

    def read_event(self, event: Any, got: Collected) -> str:
        return read_chunk(event, got)

    def count(self, client: Any, body: Mapping[str, Any], timeout: float) -> tuple[int, str]:
        if not self.hosted:
            return super().count(client, body, timeout)
        items = [{"role": m["role"], "content": m["content"]} for m in body["messages"]]
        found = client.responses.input_tokens.count(
            model=body["model"], input=items, timeout=timeout
        )
        return int(found.input_tokens), "openai responses.input_tokens"

    def batch_submit(
        self,
        client: Any,
        lines: Sequence[BatchLine],
        *,
        timeout: float,
        metadata: Mapping[str, str] | None,
    ) -> Any:
        uploaded = client.files.create(
            file=("sweep.jsonl", openai_jsonl(lines), "application/jsonl"),
            purpose="batch",
            timeout=timeout,
        )
        return client.batches.create(
            input_file_id=uploaded.id,
            endpoint=BATCH_ENDPOINT,
            completion_window=COMPLETION_WINDOW,
            metadata=dict(metadata or {}) or None,
            timeout=timeout,
        )

    def batch_retrieve(self, client: Any, batch_id: str, *, timeout: float) -> Any:
        return client.batches.retrieve(batch_id, timeout=timeout)

    def batch_status(self, batch: Any) -> BatchStatus:
        raw = str(getattr(batch, "status", ""))
        counts = getattr(batch, "request_counts", None)
        state: BatchState
        if raw in ("completed", "expired", "cancelled"):
            state = "ended"
        elif raw == "failed":
            state = "failed"
        else:
            state = "running"
        detail = None
        problems = getattr(getattr(batch, "errors", None), "data", None) or ()
        if problems:
            detail = "; ".join(str(getattr(p, "message", p)) for p in problems)[:300]
        return BatchStatus(
            str(batch.id),
            self.wire,
            state,
            raw,
            count_of(counts, "total"),
            count_of(counts, "completed"),
            count_of(counts, "failed"),
            output_file_id=getattr(batch, "output_file_id", None),
            error_file_id=getattr(batch, "error_file_id", None),
            detail=detail,
        )

    def batch_results(
        self, client: Any, status: BatchStatus, *, timeout: float
    ) -> Iterator[BatchOutcome]:
        for file_id in (status.output_file_id, status.error_file_id):
            if not file_id:
                continue
            raw = client.files.content(file_id, timeout=timeout).read()
            for text in raw.decode("utf-8").splitlines():
                if text.strip():
                    yield batch_line_outcome(json.loads(text))


OPENAI = OpenAIChat(
    kind="openai",
    label="OpenAI",
    wire="openai",
    sdk="openai",
    key_env="OPENAI_API_KEY",
    hosted=True,
    batch_lines=50_000,
    batch_per_model=True,
    reasoning_models=True,
    json_mode=True,
)
COMPATIBLE = OpenAIChat(
    kind="openai_compatible",
    label="the endpoint",
    wire="openai",
    sdk="openai",
    needs_base_url=True,
    batch_lines=50_000,  # a server that has the Batch API takes OpenAI's files
    batch_per_model=True,
)
