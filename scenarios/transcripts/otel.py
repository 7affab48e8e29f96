"""OpenTelemetry GenAI spans: OTLP JSON as the collector's file exporter writes it (one
``{"resourceSpans": [...]}`` a line, or one such object), and the SDK console exporter's
span objects (``{"name", "context", "attributes": {...}}``).

A span is a model call when it has ``gen_ai.input.messages`` / ``gen_ai.output.messages``
(messages with ``parts``; ``gen_ai.system_instructions`` too), or the older
``gen_ai.prompt`` / ``gen_ai.completion`` (JSON messages, or ``gen_ai.prompt.0.role`` /
``.content`` attributes). Spans are grouped by ``gen_ai.conversation.id`` (else by trace)
and read in start-time order; ``gen_ai.usage.input_tokens`` / ``output_tokens`` (or the
older ``prompt_tokens`` / ``completion_tokens``) are kept per turn, to compare with the
lab's own counts. Other spans are skipped and counted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

from scenarios.transcripts.content import content_text
from scenarios.transcripts.core import Item, Tally, Transcript, TranscriptError, TurnUsage, kind_of
from scenarios.transcripts.messages import any_item, parts_item
from scenarios.transcripts.source import Record
from scenarios.transcripts.traces import Call, Thread, rebuild

_INDEXED = re.compile(r"^gen_ai\.(prompt|completion)\.(\d+)\.(role|content)$")


def detect(first: Any) -> bool:
    return isinstance(first, dict) and ("resourceSpans" in first or _is_sdk_span(first))


def _is_sdk_span(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("context"), dict)
        and "span_id" in value["context"]
        and isinstance(value.get("attributes"), dict)
    )


def _any_value(value: Any) -> Any:
    """An OTLP JSON AnyValue ({"stringValue": ...}, {"intValue": "12"}, ...) as Python."""
    if not isinstance(value, dict):
        return value
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            return None
    if "doubleValue" in value:
        return value["doubleValue"]
    if "boolValue" in value:
        return value["boolValue"]
    if "arrayValue" in value:
        return [_any_value(v) for v in (value["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in value:
        return {
            kv.get("key"): _any_value(kv.get("value"))
            for kv in (value["kvlistValue"] or {}).get("values", [])
        }
    return None


def _spans(record: Record) -> Iterator[tuple[dict[str, Any], str, str, float]]:
    """(attributes, span id, trace id, start seconds) of every span in one record."""
    data = record.value
    if _is_sdk_span(data):
        start = data.get("start_time")
        try:
            when = datetime.fromisoformat(str(start).replace("Z", "+00:00")).timestamp()
        except ValueError:
            when = float("inf")
        ctx = data["context"]
        yield dict(data["attributes"]), str(ctx.get("span_id")), str(ctx.get("trace_id")), when
        return
    if not isinstance(data, dict) or not isinstance(data.get("resourceSpans"), list):
        raise TranscriptError(f"{record.where}: expected an OTLP JSON object with 'resourceSpans'")
    for resource in data["resourceSpans"]:
        for scope in (
            (resource or {}).get("scopeSpans")
            or (resource or {}).get("instrumentationLibrarySpans")
            or ()
        ):
            for span in (scope or {}).get("spans") or ():
                if not isinstance(span, dict):
                    raise TranscriptError(
                        f"{record.where}: a span must be an object, not {kind_of(span)}"
                    )
                span_id = str(span.get("spanId", "?"))
                attrs = {}
                for kv in span.get("attributes") or ():
                    if isinstance(kv, dict) and isinstance(kv.get("key"), str):
                        attrs[kv["key"]] = _any_value(kv.get("value"))
                try:
                    when = int(span.get("startTimeUnixNano", 0)) / 1e9
                except (TypeError, ValueError):
                    raise TranscriptError(
                        "'startTimeUnixNano' is not a number", span=span_id
                    ) from None
                yield attrs, span_id, str(span.get("traceId", "")), when


def _json_attr(attrs: Mapping[str, Any], key: str, span: str) -> Any:
    value = attrs.get(key)
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            raise TranscriptError(
                f"attribute {key} is not valid JSON ({exc.msg})", span=span
            ) from None
    return value


def _indexed(attrs: Mapping[str, Any], which: str) -> list[dict[str, Any]]:
    found: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        m = _INDEXED.match(key)
        if m and m.group(1) == which:
            found.setdefault(int(m.group(2)), {})[m.group(3)] = value
    return [found[i] for i in sorted(found)]


def _messages(
    attrs: Mapping[str, Any], span: str, tally: Tally
) -> tuple[list[Item], list[Item]] | None:
    place = f"span {span!r}"
    inputs: list[Item] = []
    if "gen_ai.input.messages" in attrs or "gen_ai.output.messages" in attrs:
        instructions = _json_attr(attrs, "gen_ai.system_instructions", span)
        if instructions:
            inputs.append(
                Item("system", content_text(instructions, tally, where=place), place=place)
            )
        raw_in = _json_attr(attrs, "gen_ai.input.messages", span) or []
        raw_out = _json_attr(attrs, "gen_ai.output.messages", span) or []
        if not isinstance(raw_in, list) or not isinstance(raw_out, list):
            raise TranscriptError("gen_ai.input/output.messages must be JSON lists", span=span)
        inputs += [
            parts_item(m, tally, place=f"{place} gen_ai.input.messages[{i}]")
            for i, m in enumerate(raw_in)
        ]
        outputs = [
            parts_item(m, tally, place=f"{place} gen_ai.output.messages[{i}]")
            for i, m in enumerate(raw_out)
        ]
        return inputs, outputs
    prompt = _json_attr(attrs, "gen_ai.prompt", span)
    completion = _json_attr(attrs, "gen_ai.completion", span)
    if prompt is None and completion is None:
        prompt, completion = (
            _indexed(attrs, "prompt") or None,
            _indexed(attrs, "completion") or None,
        )
    if prompt is None and completion is None:
        return None

    def items(value: Any, field: str, default_role: str) -> list[Item]:
        if isinstance(value, str):
            return [Item(default_role, value, place=f"{place} {field}")]
        if isinstance(value, dict):
            value = [value]
        if not isinstance(value, list):
            raise TranscriptError(f"{field} must be a message list or text", span=span)
        return [any_item({"role": default_role, **m} if isinstance(m, dict) and "role" not in m else m,
                         tally, place=f"{place} {field}[{i}]") for i, m in enumerate(value)]  # fmt: skip

    return items(prompt or [], "gen_ai.prompt", "user"), items(
        completion or [], "gen_ai.completion", "assistant"
    )


def _usage(attrs: Mapping[str, Any]) -> TurnUsage | None:
    def get(*keys: str) -> int | None:
        for key in keys:
            value = attrs.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        return None

    found = TurnUsage(
        get("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens"),
        get("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens"),
    )
    return None if found.input_tokens is None and found.output_tokens is None else found


def read(records: Iterator[Record]) -> Iterator[Transcript]:
    threads: dict[str, Thread] = {}
    other = 0
    for record in records:
        for attrs, span, trace, start in _spans(record):
            key = str(attrs.get("gen_ai.conversation.id") or trace)
            thread = threads.setdefault(key, Thread(key))
            try:
                found = _messages(attrs, span, thread.tally)
            except TranscriptError as exc:
                raise exc.within(f"conversation {key}") from None
            if found is None:
                thread.tally.skip("spans without GenAI messages")
                other += 1
                continue
            when = ""
            if start != float("inf") and start > 0:
                when = datetime.fromtimestamp(start, UTC).isoformat(timespec="seconds")
            thread.calls.append(
                Call(start, f"span {span!r}", found[0], found[1], _usage(attrs), when)
            )
    number = 0
    for key, thread in threads.items():
        if not thread.calls:
            continue
        number += 1
        try:
            yield rebuild(thread, fmt="otel", number=number, title=f"conversation {key}")
        except TranscriptError as exc:
            raise exc.within(f"conversation {number} ({key})") from None
    if number == 0:
        raise TranscriptError(
            f"no GenAI spans: none of the {other} spans has gen_ai.input.messages, "
            "gen_ai.output.messages, gen_ai.prompt or gen_ai.completion"
        )
