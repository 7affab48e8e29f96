"""Single messages in the shapes the formats share: OpenAI `{role, content}`, LangChain's
`messages_to_dict` `{type, data}` and its serialised `{lc, id, kwargs}` form, and the
OpenTelemetry GenAI `{role, parts}` form, each turned into one `Item`.

Tool results become assistant-side placeholders (so a tool exchange stays inside the reply
it belongs to, and the join is noted); tool calls on an assistant message become
placeholders after its text.
"""

from __future__ import annotations

from typing import Any

from scenarios.transcripts.content import clip, content_text, placeholder, tool_calls_text
from scenarios.transcripts.core import Item, Tally, TranscriptError, kind_of

ROLES = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "model": "assistant",
    "bot": "assistant",
    "gpt": "assistant",
    "chatbot": "assistant",
    "tool": "tool",
    "function": "tool",
    "ipython": "tool",
}
ROLE_NAMES = "system, developer, user, assistant, tool"


def role_of(value: Any, *, where: str) -> str:
    if not isinstance(value, str):
        raise TranscriptError(f"{where}: the message has no 'role'")
    role = ROLES.get(value.lower())
    if role is None:
        raise TranscriptError(
            f"{where}: role {value!r} is not supported (roles read: {ROLE_NAMES})"
        )
    return role


def _item(
    role: str,
    text: str,
    *,
    where: str,
    index: int | None,
    line: int | None,
    place: str,
    tally: Tally,
    tool_name: Any = None,
) -> Item:
    if role == "tool":
        tally.placeholder("tool results")
        name = f"{tool_name} " if isinstance(tool_name, str) and tool_name else ""
        text = placeholder("tool result", (name + clip(text)).strip())
        role = "assistant"
    return Item(role, text, line=line, index=index, place=place)


def openai_item(
    message: Any,
    tally: Tally,
    *,
    index: int | None = None,
    line: int | None = None,
    place: str = "",
) -> Item:
    """One OpenAI (or Anthropic) chat message as an Item."""
    where = place or (f"line {line}" if line is not None else f"message index {index}")

    def fail(reason: str) -> TranscriptError:
        if place:
            return TranscriptError(f"{place}: {reason}")
        return TranscriptError(reason, index=index, line=line)

    if not isinstance(message, dict):
        raise fail(f"a message must be an object, not {kind_of(message)}")
    if not isinstance(message.get("role"), str):
        raise fail("the message has no 'role'")
    try:
        role = role_of(message["role"], where=where)
    except TranscriptError:
        raise fail(
            f"role {message['role']!r} is not supported (roles read: {ROLE_NAMES})"
        ) from None
    if "content" not in message and not message.get("tool_calls"):
        raise fail("the message has no 'content'")
    content = message.get("content")
    calls = message.get("tool_calls") or message.get("function_call")
    if content is None and not calls:
        raise fail("the content is null and there are no tool calls: nothing was said")
    text = "" if content is None else content_text(content, tally, where=where)
    if calls and role == "assistant":
        text = "\n".join(t for t in (text, tool_calls_text(calls, tally)) if t)
    return _item(
        role,
        text,
        where=where,
        index=index,
        line=line,
        place=place,
        tally=tally,
        tool_name=message.get("name"),
    )


_LC_CLASSES = {
    "HumanMessage": "human",
    "HumanMessageChunk": "human",
    "AIMessage": "ai",
    "AIMessageChunk": "ai",
    "SystemMessage": "system",
    "SystemMessageChunk": "system",
    "ToolMessage": "tool",
    "ToolMessageChunk": "tool",
    "FunctionMessage": "function",
    "ChatMessage": "chat",
}


def is_langchain(value: Any) -> bool:
    """A `messages_to_dict` entry or a serialised LangChain message."""
    if not isinstance(value, dict):
        return False
    if isinstance(value.get("data"), dict) and isinstance(value.get("type"), str):
        return True
    return value.get("lc") == 1 and isinstance(value.get("kwargs"), dict)


def langchain_item(
    message: Any,
    tally: Tally,
    *,
    index: int | None = None,
    line: int | None = None,
    place: str = "",
) -> Item:
    """One LangChain message (`messages_to_dict` form or serialised) as an Item."""
    where = place or (f"line {line}" if line is not None else f"message index {index}")
    if not isinstance(message, dict):
        raise TranscriptError(f"{where}: a message must be an object, not {kind_of(message)}")
    if message.get("lc") == 1:
        ident = message.get("id")
        cls = ident[-1] if isinstance(ident, list) and ident else ""
        data = message.get("kwargs") or {}
        kind = _LC_CLASSES.get(str(cls), str(data.get("type", "")))
    else:
        data = message.get("data")
        kind = message.get("type", "")
        if not isinstance(data, dict):
            raise TranscriptError(f"{where}: a LangChain message needs a 'data' object")
    if kind == "chat":
        kind = str(data.get("role", "chat"))
    if not isinstance(kind, str) or kind.lower() not in ROLES:
        raise TranscriptError(
            f"{where}: message type {kind!r} is not supported (human, ai, system, tool, chat)"
        )
    role = ROLES[kind.lower()]
    if "content" not in data:
        raise TranscriptError(f"{where}: the message has no 'content' in its data")
    text = content_text(data.get("content") or "", tally, where=where)
    calls = data.get("tool_calls")
    if role == "assistant" and calls:
        text = "\n".join(t for t in (text, tool_calls_text(calls, tally)) if t)
    elif role == "assistant" and not text:
        extra = data.get("additional_kwargs") or {}
        if isinstance(extra, dict) and (extra.get("tool_calls") or extra.get("function_call")):
            text = tool_calls_text(extra.get("tool_calls") or extra.get("function_call"), tally)
    return _item(
        role, text, where=where, index=index, line=line, place=place, tally=tally,
        tool_name=data.get("name"),
    )  # fmt: skip


def parts_item(message: Any, tally: Tally, *, place: str) -> Item:
    """An OpenTelemetry GenAI message `{role, parts: [{type, content}...]}` as an Item."""
    if not isinstance(message, dict):
        raise TranscriptError(f"{place}: a message must be an object, not {kind_of(message)}")
    role = role_of(message.get("role"), where=place)
    if "parts" in message:
        text = content_text(message["parts"], tally, where=place, field="parts")
    elif "content" in message:
        text = content_text(message.get("content") or "", tally, where=place)
    else:
        raise TranscriptError(f"{place}: the message has neither 'parts' nor 'content'")
    return _item(role, text, where=place, index=None, line=None, place=place, tally=tally)


def any_item(message: Any, tally: Tally, *, place: str) -> Item:
    """A message in whichever of the shapes above it has."""
    if is_langchain(message):
        return langchain_item(message, tally, place=place)
    if isinstance(message, dict) and "parts" in message:
        return parts_item(message, tally, place=place)
    return openai_item(message, tally, place=place)
