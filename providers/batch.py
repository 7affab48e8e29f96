"""Batch sweeps through the providers' own batch APIs: submit, poll, collect. Nothing more.

The OpenAI Batch API (`client.files.create` + `client.batches.create`, then
`client.batches.retrieve` and `client.files.content`) and Anthropic's Message Batches
(`client.messages.batches.create / retrieve / results`) run many requests asynchronously
within 24 hours at half the price. This module only speaks to them through the official
SDKs: no scheduler of our own.

A batch line's body is `build_body`'s body, the one the interactive path sends, with only the
streaming fields taken out (the batch endpoints answer whole messages, never streams), so a
sweep asks the model exactly what a live run would. Results come back as the same `Reply`
and `Usage` the live path gives; a line that failed, expired or never ran carries its error.
Submit, poll and collect for both providers share one normalisation.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import providers.errors as provider_errors
from memory.types import Request
from providers.bodies import api_family, build_body
from providers.clients import endpoint_url, get_client
from providers.errors import ProviderError
from providers.sdk_errors import _from_status, error_fields, map_error
from providers.send import Reply, _anthropic_usage, _openai_usage
from providers.settings import ProviderSettings

# Fields that only make sense on a streamed call; everything else is the live body unchanged.
STREAM_ONLY_FIELDS = ("stream", "stream_options")
OPENAI_ENDPOINT = "/v1/chat/completions"
COMPLETION_WINDOW = "24h"
# Both providers bill batch requests at half their list price.
BATCH_DISCOUNT = 0.5
# The providers' per-batch limits (OpenAI: 50,000 lines; Anthropic: 100,000 requests).
MAX_LINES = {"openai": 50_000, "anthropic": 100_000}

LineState = Literal["succeeded", "errored", "expired", "canceled", "missing"]
BatchState = Literal["running", "ended", "failed"]


class BatchExpired(ProviderError):
    """The batch's 24-hour window closed before this request ran; resubmit it."""


class BatchCanceled(ProviderError):
    """The batch was cancelled before this request ran; resubmit it."""


class BatchMissing(ProviderError):
    """The ended batch returned nothing for this request; resubmit it."""


class BatchNotSupported(ProviderError):
    """This endpoint has no batch API (local servers answer many requests at once instead)."""


@dataclass(frozen=True)
class BatchLine:
    """One request of a batch: its id (unique within the batch) and the body to send."""

    custom_id: str
    body: Mapping[str, Any]
    body_json: str | None = None  # the body already as compact JSON (written as is)

    def params(self) -> dict[str, Any]:
        """The body as a dict (parsed from `body_json` when only that was given)."""
        return dict(self.body) if self.body or not self.body_json else json.loads(self.body_json)


@dataclass(frozen=True)
class BatchStatus:
    """Where a submitted batch is, in the same words for both providers."""

    batch_id: str
    family: str
    state: BatchState
    raw_status: str
    total: int
    succeeded: int
    failed: int
    output_file_id: str | None = None
    error_file_id: str | None = None
    detail: str | None = None

    @property
    def ended(self) -> bool:
        """True when results can be collected (or the batch failed as a whole)."""
        return self.state != "running"


@dataclass(frozen=True)
class LineResult:
    """What came back for one line: its state and the reply (text, usage, error)."""

    custom_id: str
    state: LineState
    reply: Reply

    @property
    def ok(self) -> bool:
        return self.state == "succeeded" and self.reply.ok


def batch_body(request: Request, settings: ProviderSettings) -> dict[str, Any]:
    """The live body (`build_body`) without its streaming fields: what a batch line carries."""
    return {k: v for k, v in build_body(request, settings).items() if k not in STREAM_ONLY_FIELDS}


def batch_line(custom_id: str, request: Request, settings: ProviderSettings) -> BatchLine:
    """A line for `request`; `custom_id` must be 1-64 letters, digits, '-' or '_'."""
    check_custom_id(custom_id)
    return BatchLine(custom_id, batch_body(request, settings))


def check_custom_id(custom_id: str) -> str:
    """The id itself if both providers accept it; ValueError otherwise."""
    ok = 0 < len(custom_id) <= 64 and all(c.isalnum() or c in "-_" for c in custom_id)
    if not ok or not custom_id.isascii():
        raise ValueError(f"a batch custom_id is 1-64 ASCII letters, digits, - or _: {custom_id!r}")
    return custom_id


def openai_jsonl(lines: Iterable[BatchLine]) -> bytes:
    """The OpenAI batch input file: one JSON request per line."""
    out = []
    for line in lines:
        item = {"custom_id": line.custom_id, "method": "POST", "url": OPENAI_ENDPOINT}
        head = json.dumps(item, ensure_ascii=False, separators=(",", ":"))
        body = line.body_json or json.dumps(dict(line.body), ensure_ascii=False, separators=(",", ":"))  # fmt: skip
        out.append(f'{head[:-1]},"body":{body}}}')  # the saved body is not encoded again
    return ("\n".join(out) + "\n").encode()


def anthropic_requests(lines: Iterable[BatchLine]) -> list[dict[str, Any]]:
    """The `requests` of a Message Batch: each line's body as its `params`."""
    return [{"custom_id": line.custom_id, "params": line.params()} for line in lines]


def _client(settings: ProviderSettings) -> tuple[Any, str | None, str]:
    if settings.kind == "embedded":
        raise BatchNotSupported(
            "the embedded model has no batch API: run the sweep interactively",
            provider=settings.kind,
        )
    url = endpoint_url(settings)
    key = settings.resolve_key()
    return get_client(settings, url, key), url, key


def submit(
    lines: Sequence[BatchLine],
    settings: ProviderSettings,
    *,
    metadata: Mapping[str, str] | None = None,
) -> BatchStatus:
    """Create one batch of `lines`; raises a ProviderError when the provider refuses it."""
    if not lines:
        raise ValueError("a batch needs at least one line")
    family = api_family(settings)
    if len(lines) > MAX_LINES[family]:
        raise ValueError(f"{family} batches hold at most {MAX_LINES[family]:,} requests")
    ids = [line.custom_id for line in lines]
    if len(set(ids)) != len(ids):
        raise ValueError("custom_ids must be unique within a batch")
    client, url, key = _client(settings)
    try:
        if family == "anthropic":
            batch = client.messages.batches.create(
                requests=anthropic_requests(lines), timeout=settings.timeout
            )
        else:
            uploaded = client.files.create(
                file=("sweep.jsonl", openai_jsonl(lines), "application/jsonl"),
                purpose="batch",
                timeout=settings.timeout,
            )
            batch = client.batches.create(
                input_file_id=uploaded.id,
                endpoint=OPENAI_ENDPOINT,
                completion_window=COMPLETION_WINDOW,
                metadata=dict(metadata or {}) or None,
                timeout=settings.timeout,
            )
    except Exception as exc:
        raise map_error(exc, settings, url=url, key=key) from None
    return _status(batch, family)


def poll(batch_id: str, settings: ProviderSettings) -> BatchStatus:
    """The batch's current status (one retrieve call)."""
    family = api_family(settings)
    client, url, key = _client(settings)
    try:
        if family == "anthropic":
            batch = client.messages.batches.retrieve(batch_id, timeout=settings.timeout)
        else:
            batch = client.batches.retrieve(batch_id, timeout=settings.timeout)
    except Exception as exc:
        raise map_error(exc, settings, url=url, key=key) from None
    return _status(batch, family)


def _count(counts: Any, name: str) -> int:
    value = getattr(counts, name, 0)
    return value if isinstance(value, int) else 0


def _status(batch: Any, family: str) -> BatchStatus:
    raw = str(getattr(batch, "processing_status", None) or getattr(batch, "status", ""))
    counts = getattr(batch, "request_counts", None)
    if family == "anthropic":
        state: BatchState = "ended" if raw == "ended" else "running"
        ok = _count(counts, "succeeded")
        bad = sum(_count(counts, n) for n in ("errored", "expired", "canceled"))
        total = ok + bad + _count(counts, "processing")
        return BatchStatus(str(batch.id), family, state, raw, total, ok, bad)
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
        family,
        state,
        raw,
        _count(counts, "total"),
        _count(counts, "completed"),
        _count(counts, "failed"),
        output_file_id=getattr(batch, "output_file_id", None),
        error_file_id=getattr(batch, "error_file_id", None),
        detail=detail,
    )


def collect(
    status: BatchStatus,
    settings: ProviderSettings,
    bodies: Mapping[str, Mapping[str, Any]],
) -> list[LineResult]:
    """The results of an ended batch, one per custom_id in `bodies` (the lines it held).

    Lines the batch returned nothing for come back as "missing", with a BatchMissing error,
    so every line ends with a result that can be shown and, if it failed, resubmitted.
    """
    if not status.ended:
        raise ValueError(f"batch {status.batch_id} is still {status.raw_status}")
    client, url, key = _client(settings)
    found: dict[str, LineResult] = {}
    try:
        if status.family == "anthropic":
            for item in client.messages.batches.results(status.batch_id, timeout=settings.timeout):
                cid = str(item.custom_id)
                if cid in bodies:
                    found[cid] = _anthropic_result(item, bodies[cid], settings, url)
        else:
            for file_id in (status.output_file_id, status.error_file_id):
                if not file_id:
                    continue
                raw = client.files.content(file_id, timeout=settings.timeout).read()
                for text in raw.decode("utf-8").splitlines():
                    if not text.strip():
                        continue
                    item = json.loads(text)
                    cid = str(item.get("custom_id"))
                    if cid in bodies:
                        found[cid] = _openai_result(item, bodies[cid], settings, url, key)
    except ProviderError:
        raise
    except Exception as exc:
        raise map_error(exc, settings, url=url, key=key) from None
    out = []
    for cid, body in bodies.items():
        if cid in found:
            out.append(found[cid])
            continue
        why = (
            f"the batch {status.raw_status} without running this request"
            if status.state == "failed" or status.raw_status in ("cancelled", "expired")
            else "the batch returned no result for this request"
        )
        error_cls = BatchExpired if status.raw_status == "expired" else BatchMissing
        error = error_cls(f"{why}: resubmit it", provider=settings.kind, detail=status.detail)
        out.append(LineResult(cid, "missing", _reply(body, settings, url, error=error)))
    return out


def _reply(
    body: Mapping[str, Any],
    settings: ProviderSettings,
    url: str | None,
    *,
    text: str = "",
    usage: Any = None,
    model: str | None = None,
    finish: str | None = None,
    error: ProviderError | None = None,
) -> Reply:
    return Reply(
        text=text,
        usage=usage,
        latency_s=0.0,  # batch lines have no meaningful latency of their own
        ttft_s=None,
        body=body,
        model=model or settings.model,
        complete=error is None,
        error=error,
        finish_reason=finish,
        attempts=1,
        provider=settings.kind,
        url=url,
    )


def _openai_result(
    item: Mapping[str, Any],
    body: Mapping[str, Any],
    settings: ProviderSettings,
    url: str | None,
    key: str,
) -> LineResult:
    cid = str(item.get("custom_id"))
    problem = item.get("error")
    response = item.get("response") or {}
    status = int(response.get("status_code") or 0)
    if problem:
        fields = error_fields(problem)
        if str(fields.get("code")) == "batch_expired":
            error: ProviderError = BatchExpired(
                "the batch's 24-hour window closed before this request ran: resubmit it",
                provider=settings.kind,
                detail=str(fields.get("message") or "") or None,
            )
            return LineResult(cid, "expired", _reply(body, settings, url, error=error))
        error = _from_status(status or 500, fields, Exception(), settings, url or "", key)
        return LineResult(cid, "errored", _reply(body, settings, url, error=error))
    payload = response.get("body") or {}
    if status >= 400 or not isinstance(payload, Mapping) or "choices" not in payload:
        fields = error_fields(payload)
        error = _from_status(status or 500, fields, Exception(), settings, url or "", key)
        return LineResult(cid, "errored", _reply(body, settings, url, error=error))
    from openai.types.chat import ChatCompletion  # the SDK's own model of the answer

    completion = ChatCompletion.model_validate(payload)
    choice = completion.choices[0] if completion.choices else None
    text = (choice.message.content if choice else None) or ""
    usage = _openai_usage(completion.usage) if completion.usage else None
    finish = str(choice.finish_reason) if choice and choice.finish_reason else None
    reply = _reply(
        body, settings, url, text=text, usage=usage, model=completion.model, finish=finish
    )
    return LineResult(cid, "succeeded", reply)


def _anthropic_result(
    item: Any, body: Mapping[str, Any], settings: ProviderSettings, url: str | None
) -> LineResult:
    cid = str(item.custom_id)
    result = item.result
    kind = str(getattr(result, "type", ""))
    if kind == "succeeded":
        message = result.message
        text = "".join(
            str(getattr(block, "text", ""))
            for block in (message.content or ())
            if getattr(block, "type", "") == "text"
        )
        usage = _anthropic_usage(message.usage, None) if message.usage else None
        finish = str(message.stop_reason) if message.stop_reason else None
        reply = _reply(
            body, settings, url, text=text, usage=usage, model=message.model, finish=finish
        )
        return LineResult(cid, "succeeded", reply)
    if kind == "errored":
        inner = getattr(getattr(result, "error", None), "error", None)
        fields = {
            "type": str(getattr(inner, "type", "") or ""),
            "message": str(getattr(inner, "message", "") or ""),
        }
        status = {
            "invalid_request_error": 400,
            "authentication_error": 401,
            "permission_error": 403,
            "not_found_error": 404,
            "rate_limit_error": 429,
            "overloaded_error": 529,
        }.get(fields["type"], 500)
        error: ProviderError = _from_status(status, fields, Exception(), settings, url or "", None)
        return LineResult(cid, "errored", _reply(body, settings, url, error=error))
    if kind == "expired":
        error = BatchExpired(
            "the batch's 24-hour window closed before this request ran: resubmit it",
            provider=settings.kind,
        )
        return LineResult(cid, "expired", _reply(body, settings, url, error=error))
    error = BatchCanceled(
        "the batch was cancelled before this request ran: resubmit it", provider=settings.kind
    )
    return LineResult(cid, "canceled", _reply(body, settings, url, error=error))


def error_from_kind(kind: str, message: str, status: int | None = None) -> ProviderError:
    """A saved error back as its class (by `ProviderError.kind`), for results read from a store."""
    cls = globals().get(kind) or getattr(provider_errors, kind, None)
    if not (isinstance(cls, type) and issubclass(cls, ProviderError)):
        cls = ProviderError
    return cls(message, status=status)


def reply_from_dict(data: Mapping[str, Any]) -> Reply:
    """A `Reply.public_dict()` back as a Reply (usage and error included)."""
    from memory.types import Usage

    usage_data = data.get("usage")
    usage = None
    if usage_data:
        usage = Usage(
            input=usage_data.get("input"),
            output=usage_data.get("output"),
            details=dict(usage_data.get("details") or {}),
        )
    err = data.get("error")
    error = None
    if err:
        error = error_from_kind(str(err.get("kind")), str(err.get("message")), err.get("status"))
    return Reply(
        text=str(data.get("text") or ""),
        usage=usage,
        latency_s=float(data.get("latency_s") or 0.0),
        ttft_s=data.get("ttft_s"),
        body=data.get("body") or {},
        model=str(data.get("model") or ""),
        complete=bool(data.get("complete")),
        error=error,
        finish_reason=data.get("finish_reason"),
        attempts=int(data.get("attempts") or 0),
        provider=str(data.get("provider") or ""),
        url=data.get("url"),
    )
