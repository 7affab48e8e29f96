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
What differs per provider (upload, status words, result reading) is each family's
(providers/families/); submit, poll and collect share one normalisation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import providers.errors as provider_errors
from memory.types import Request
from providers.bodies import build_body, family_of
from providers.clients import endpoint_url, get_client
from providers.errors import ProviderError
from providers.families.base import BatchLine, BatchOutcome, BatchStatus
from providers.sdk_errors import _from_status, error_fields, map_error
from providers.send import Reply
from providers.settings import ProviderSettings

# Fields that only make sense on a streamed call; everything else is the live body unchanged.
STREAM_ONLY_FIELDS = ("stream", "stream_options")
# Both providers bill batch requests at half their list price.
BATCH_DISCOUNT = 0.5

LineState = Literal["succeeded", "errored", "expired", "canceled", "missing"]


class BatchExpired(ProviderError):
    """The batch's 24-hour window closed before this request ran; resubmit it."""


class BatchCanceled(ProviderError):
    """The batch was cancelled before this request ran; resubmit it."""


class BatchMissing(ProviderError):
    """The ended batch returned nothing for this request; resubmit it."""


class BatchNotSupported(ProviderError):
    """This endpoint has no batch API (local servers answer many requests at once instead)."""


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


def max_lines(settings: ProviderSettings) -> int:
    """How many requests one batch of this endpoint may hold (0: it has no batch API)."""
    return family_of(settings).batch_lines


def _client(settings: ProviderSettings) -> tuple[Any, str | None, str]:
    chosen = family_of(settings)
    if not chosen.has_batch:
        raise BatchNotSupported(
            f"{chosen.label} has no batch API: run the sweep interactively",
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
    chosen = family_of(settings)
    if chosen.has_batch and len(lines) > chosen.batch_lines:
        raise ValueError(f"{chosen.wire} batches hold at most {chosen.batch_lines:,} requests")
    ids = [line.custom_id for line in lines]
    if len(set(ids)) != len(ids):
        raise ValueError("custom_ids must be unique within a batch")
    client, url, key = _client(settings)
    try:
        batch = chosen.batch_submit(client, lines, timeout=settings.timeout, metadata=metadata)
    except Exception as exc:
        raise map_error(exc, settings, url=url, key=key) from None
    return chosen.batch_status(batch)


def poll(batch_id: str, settings: ProviderSettings) -> BatchStatus:
    """The batch's current status (one retrieve call)."""
    chosen = family_of(settings)
    client, url, key = _client(settings)
    try:
        batch = chosen.batch_retrieve(client, batch_id, timeout=settings.timeout)
    except Exception as exc:
        raise map_error(exc, settings, url=url, key=key) from None
    return chosen.batch_status(batch)


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
        for outcome in family_of(settings).batch_results(client, status, timeout=settings.timeout):
            if outcome.custom_id in bodies:
                body = bodies[outcome.custom_id]
                found[outcome.custom_id] = _line_result(outcome, body, settings, url, key)
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


def _line_result(
    outcome: BatchOutcome,
    body: Mapping[str, Any],
    settings: ProviderSettings,
    url: str | None,
    key: str,
) -> LineResult:
    """A family's reading of one result as the Reply the live path would give."""
    cid = outcome.custom_id
    if outcome.state == "succeeded":
        reply = _reply(
            body,
            settings,
            url,
            text=outcome.text,
            usage=outcome.usage,
            model=outcome.model,
            finish=outcome.finish,
        )
        return LineResult(cid, "succeeded", reply)
    error: ProviderError
    if outcome.state == "errored":
        fields = error_fields(outcome.error)
        error = _from_status(outcome.status or 500, fields, Exception(), settings, url or "", key)
    elif outcome.state == "expired":
        error = BatchExpired(
            "the batch's 24-hour window closed before this request ran: resubmit it",
            provider=settings.kind,
            detail=outcome.detail,
        )
    else:
        error = BatchCanceled(
            "the batch was cancelled before this request ran: resubmit it",
            provider=settings.kind,
        )
    return LineResult(cid, outcome.state, _reply(body, settings, url, error=error))


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
