"""Claude.ai data export (`conversations.json`): a list of
``{uuid, name, created_at, chat_messages: [{sender, text, content, attachments, files}]}``.

A message's ``content`` blocks are read when present (text kept; tool use, tool results and
images as placeholders; thinking skipped), else its ``text``. Attachments and files become
``[file: name]`` placeholders after the message's text.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from scenarios.transcripts.content import content_text, placeholder
from scenarios.transcripts.core import (
    Item,
    Tally,
    Transcript,
    TranscriptError,
    build,
    kind_of,
    text_field,
)
from scenarios.transcripts.source import Record

SENDERS = {"human": "user", "assistant": "assistant"}


def detect(first: Any) -> bool:
    return isinstance(first, dict) and "chat_messages" in first


def _label(number: int, data: Any) -> str:
    text = f"conversation {number}"
    if isinstance(data, dict):
        if isinstance(data.get("name"), str) and data["name"]:
            text += f" {data['name'][:60]!r}"
        if isinstance(data.get("uuid"), str):
            text += f" (id {data['uuid']})"
    return text


def conversation(data: Any, number: int) -> Transcript:
    where = _label(number, data)
    try:
        if not isinstance(data, dict):
            raise TranscriptError(f"a conversation must be an object, not {kind_of(data)}")
        messages = data.get("chat_messages")
        if not isinstance(messages, list):
            raise TranscriptError(f"'chat_messages' must be a list, not {kind_of(messages)}")
        if not messages:
            raise TranscriptError("it has no messages (an empty conversation)")
        tally = Tally()
        items = []
        for i, message in enumerate(messages):
            place = f"chat_messages[{i}]"
            if not isinstance(message, dict):
                raise TranscriptError(
                    f"{place}: a message must be an object, not {kind_of(message)}"
                )
            if isinstance(message.get("uuid"), str):
                place += f" (uuid {message['uuid']})"
            sender = message.get("sender")
            if sender not in SENDERS:
                raise TranscriptError(f"{place}: sender {sender!r} is not 'human' or 'assistant'")
            content = message.get("content")
            if isinstance(content, list) and content:
                text = content_text(content, tally, where=place)
            elif isinstance(message.get("text"), str):
                text = message["text"]
            else:
                raise TranscriptError(
                    f"{place}: the message has neither 'content' blocks nor 'text'"
                )
            extras = []
            for key in ("attachments", "files"):
                for f in message.get(key) or ():
                    if isinstance(f, dict):
                        tally.placeholder("files")
                        extras.append(
                            placeholder("file", str(f.get("file_name") or f.get("file_uuid") or ""))
                        )
            text = "\n".join(t for t in (text, *extras) if t)
            items.append(Item(SENDERS[str(sender)], text, place=place))
        return build(
            items,
            fmt="claude",
            tally=tally,
            title=text_field(data, "name"),
            id=text_field(data, "uuid"),
            created=text_field(data, "created_at"),
            number=number,
        )
    except TranscriptError as exc:
        raise exc.within(where) from None


def each(record: Record, number: int) -> Transcript:
    return conversation(record.value, number)


def read_one(records: Iterator[Record]) -> Iterator[Transcript]:
    yield conversation(next(records).value, 1)
