"""OpenAI and Anthropic messages JSON: a list of `{role, content}`, `{"messages": [...]}`, or
Anthropic's `{"system": ..., "messages": [...]}` (system as a string or text blocks).

Content is a string or a list of blocks; images, files and tool calls become placeholders.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from scenarios.transcripts.content import content_text
from scenarios.transcripts.core import Tally, Transcript, TranscriptError, build, kind_of
from scenarios.transcripts.messages import openai_item
from scenarios.transcripts.source import Record


def detect_list(first: Any) -> bool:
    return isinstance(first, dict) and "role" in first


def detect_openai(value: Any) -> bool:
    return isinstance(value, dict) and "messages" in value and "system" not in value


def detect_anthropic(value: Any) -> bool:
    return isinstance(value, dict) and "messages" in value and "system" in value


def messages_transcript(
    messages: Any, *, fmt: str, system: str | None = None, field: str = ""
) -> Transcript:
    """A list of {role, content} messages (either vendor's content shapes)."""
    if not isinstance(messages, list):
        raise TranscriptError(
            f"'messages' must be a list, not {kind_of(messages)}", part=field or None
        )
    tally = Tally()
    items = [openai_item(m, tally, index=i) for i, m in enumerate(messages)]
    return build(items, fmt=fmt, system=system, tally=tally)


def read_list(records: Iterator[Record]) -> Iterator[Transcript]:
    yield messages_transcript([r.value for r in records], fmt="openai")


def read_openai(records: Iterator[Record]) -> Iterator[Transcript]:
    data = next(records).value
    yield messages_transcript(data["messages"], fmt="openai", field="messages")


def system_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return content_text(value, Tally(), where="system")
    raise TranscriptError(
        f"must be a string or a list of text blocks, not {kind_of(value)}", part="system"
    )


def read_anthropic(records: Iterator[Record]) -> Iterator[Transcript]:
    data = next(records).value
    yield messages_transcript(
        data["messages"], fmt="anthropic", system=system_text(data["system"]), field="messages"
    )
