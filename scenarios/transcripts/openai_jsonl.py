"""OpenAI chat JSON lines: one conversation a line, as fine-tuning and evals files hold them
(``{"messages": [...]}``), or a Batch API input file (``{"custom_id", "method", "url",
"body": {"model", "messages": [...]}}``; the Responses API's ``body.input`` too).

Each line is its own conversation, named by its line (and ``custom_id``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scenarios.transcripts.core import Tally, Transcript, TranscriptError, build, kind_of
from scenarios.transcripts.messages import openai_item
from scenarios.transcripts.source import Record


def detect_chat(first: Any) -> bool:
    return isinstance(first, dict) and isinstance(first.get("messages"), list)


def detect_batch(first: Any) -> bool:
    return isinstance(first, dict) and "custom_id" in first and isinstance(first.get("body"), dict)


def _messages(data: Mapping[str, Any], fmt: str) -> Any:
    if fmt == "openai_batch":
        body = data.get("body")
        if not isinstance(body, dict):
            raise TranscriptError(f"'body' must be an object, not {kind_of(body)}")
        if "messages" in body:
            return body["messages"], "body.messages"
        if isinstance(body.get("input"), list):
            return body["input"], "body.input"
        if isinstance(body.get("input"), str):
            return [{"role": "user", "content": body["input"]}], "body.input"
        raise TranscriptError("'body' has no 'messages' (nor a Responses API 'input')")
    return data.get("messages"), "messages"


def conversation(record: Record, number: int, fmt: str) -> Transcript:
    data = record.value
    custom = data.get("custom_id") if isinstance(data, dict) else None
    where = (
        f"conversation {number} (line {record.line})" if record.line else f"conversation {number}"
    )
    if isinstance(custom, str):
        where += f" (custom_id {custom!r})"
    try:
        if not isinstance(data, dict):
            raise TranscriptError(f"a line must hold an object, not {kind_of(data)}")
        messages, field = _messages(data, fmt)
        if not isinstance(messages, list):
            raise TranscriptError(f"'{field}' must be a list, not {kind_of(messages)}")
        if not messages:
            raise TranscriptError(f"'{field}' is empty (an empty conversation)")
        tally = Tally()
        items = [openai_item(m, tally, place=f"{field}[{i}]") for i, m in enumerate(messages)]
        title = custom if isinstance(custom, str) else f"line {record.line}" if record.line else ""
        return build(items, fmt=fmt, tally=tally, number=number, title=title,
                     id=custom if isinstance(custom, str) else str(number))  # fmt: skip
    except TranscriptError as exc:
        raise exc.within(where) from None


def each_chat(record: Record, number: int) -> Transcript:
    return conversation(record, number, "openai_jsonl")


def each_batch(record: Record, number: int) -> Transcript:
    return conversation(record, number, "openai_batch")
