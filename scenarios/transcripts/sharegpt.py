"""ShareGPT (JSON list, JSON lines, or one object): ``{"conversations": [{"from", "value"}]}``.

``from`` is human/user, gpt/assistant/chatgpt/bard/bing, or system; function calls and
observations (tool-use datasets) become placeholders in the reply. An optional top-level
``system`` is the system prompt; ``id`` names the conversation.
"""

from __future__ import annotations

from typing import Any

from scenarios.transcripts.content import clip, placeholder
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

SPEAKERS = {
    "human": "user",
    "user": "user",
    "gpt": "assistant",
    "assistant": "assistant",
    "chatgpt": "assistant",
    "bard": "assistant",
    "bing": "assistant",
    "model": "assistant",
    "system": "system",
}
TOOL_SPEAKERS = {"function_call": "tool call", "observation": "tool result", "tool": "tool result",
                 "function_response": "tool result"}  # fmt: skip


def detect(first: Any) -> bool:
    turns = first.get("conversations") if isinstance(first, dict) else None
    return isinstance(turns, list) and (
        not turns or (isinstance(turns[0], dict) and "from" in turns[0])
    )


def conversation(data: Any, number: int, record: Record) -> Transcript:
    where = f"conversation {number}"
    if isinstance(data, dict) and isinstance(data.get("id"), str | int):
        where += f" (id {data['id']})"
    if record.line is not None and record.index is None:
        where += f" (line {record.line})"
    try:
        if not isinstance(data, dict):
            raise TranscriptError(f"a conversation must be an object, not {kind_of(data)}")
        turns = data.get("conversations")
        if not isinstance(turns, list):
            raise TranscriptError(f"'conversations' must be a list, not {kind_of(turns)}")
        if not turns:
            raise TranscriptError("it has no messages (an empty conversation)")
        tally = Tally()
        items = []
        for i, turn in enumerate(turns):
            place = f"conversations[{i}]"
            if not isinstance(turn, dict):
                raise TranscriptError(f"{place}: a message must be an object, not {kind_of(turn)}")
            speaker = turn.get("from")
            value = turn.get("value")
            if not isinstance(value, str):
                raise TranscriptError(f"{place}: 'value' must be text, not {kind_of(value)}")
            if isinstance(speaker, str) and speaker.lower() in TOOL_SPEAKERS:
                what = TOOL_SPEAKERS[speaker.lower()]
                tally.placeholder(what.replace("call", "calls").replace("result", "results"))
                items.append(Item("assistant", placeholder(what, clip(value)), place=place))
                continue
            if not isinstance(speaker, str) or speaker.lower() not in SPEAKERS:
                raise TranscriptError(
                    f"{place}: 'from' is {speaker!r}; ShareGPT speakers are human, gpt and system"
                )
            items.append(Item(SPEAKERS[speaker.lower()], value, place=place))
        system = data.get("system") if isinstance(data.get("system"), str) else None
        ident = data.get("id")
        return build(items, fmt="sharegpt", system=system, tally=tally, number=number,
                     id=str(ident) if isinstance(ident, str | int) else "",
                     title=text_field(data, "title"))  # fmt: skip
    except TranscriptError as exc:
        raise exc.within(where) from None


def each(record: Record, number: int) -> Transcript:
    return conversation(record.value, number, record)
