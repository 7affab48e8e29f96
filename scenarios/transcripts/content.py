"""Message content in every vendor's block shapes, turned into text the lab can replay.

Text blocks keep their text. Images, files, audio, tool calls and tool results become short
placeholders that say what was there (``[image: chart.png]``, ``[tool call: get_weather
{"city": "Paris"}]``), counted in the transcript's notes; reasoning blocks are left out and
counted as skipped. A block of a type none of these vendors writes is an error naming it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from scenarios.transcripts.core import Tally, TranscriptError, kind_of

TEXT = frozenset({"text", "input_text", "output_text", "refusal"})
IMAGE = frozenset({"image", "image_url", "input_image", "image_file"})
FILE = frozenset({"file", "document", "input_file", "container_upload"})
AUDIO = frozenset({"audio", "input_audio", "output_audio"})
TOOL_CALL = frozenset(
    {"tool_use", "tool_call", "function_call", "server_tool_use", "mcp_tool_use", "tool_calls"}
)
TOOL_RESULT = frozenset(
    {
        "tool_result",
        "tool_call_response",
        "function_call_output",
        "web_search_tool_result",
        "mcp_tool_result",
    }
)
REASONING = frozenset({"thinking", "redacted_thinking", "reasoning"})
KNOWN = "text, image, file, audio, tool call, tool result, reasoning"
SHORT = 200  # characters of a tool call's arguments or a tool result kept in its placeholder


def clip(text: str, limit: int = SHORT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _json_short(value: Any) -> str:
    if isinstance(value, str):
        return clip(value)
    try:
        return clip(json.dumps(value, ensure_ascii=False, sort_keys=True))
    except (TypeError, ValueError):
        return clip(str(value))


def _source_name(block: Mapping[str, Any]) -> str:
    """A file or image's name or address, never inline data."""
    for key in ("filename", "file_name", "name", "title", "file_id", "asset_pointer"):
        value = block.get(key)
        if isinstance(value, str) and value:
            return clip(value, 80)
    for key in ("file", "source", "image_url"):
        inner = block.get(key)
        if isinstance(inner, dict):
            found = _source_name(inner)
            if found:
                return found
        if isinstance(inner, str) and inner and not inner.startswith("data:"):
            return clip(inner, 80)
    for key in ("url", "uri"):
        value = block.get(key)
        if isinstance(value, str) and value:
            if value.startswith("data:"):
                return "inline " + value[5:].split(";", 1)[0]
            return clip(value, 80)
    mime = block.get("mime_type") or block.get("media_type")
    return f"inline {mime}" if isinstance(mime, str) else ""


def placeholder(kind: str, detail: str = "") -> str:
    return f"[{kind}: {detail}]" if detail else f"[{kind}]"


def block_text(block: Any, tally: Tally, *, where: str) -> str:
    """One content block as text (placeholders for what is not text); `where` names the
    block in errors ("message index 2 (content[1])", "node 'abc' parts[0]")."""
    if isinstance(block, str):
        return block
    if not isinstance(block, dict):
        raise TranscriptError(f"{where}: a content block must be an object, not {kind_of(block)}")
    kind = block.get("type", "text")
    if not isinstance(kind, str):
        raise TranscriptError(f"{where}: a content block's 'type' must be text")
    modality = block.get("modality")
    if kind in ("blob", "uri") and isinstance(modality, str):  # OpenTelemetry GenAI parts
        kind = {"image": "image", "audio": "audio", "video": "video"}.get(modality, "file")
    if kind in TEXT:
        for key in ("text", "content", "refusal"):
            value = block.get(key)
            if isinstance(value, str):
                return value
        raise TranscriptError(f"{where}: a text block needs a 'text' string")
    if kind in IMAGE or kind == "video":
        what = "image" if kind != "video" else "video"
        tally.placeholder(what + "s")
        return placeholder(what, _source_name(block))
    if kind in FILE or kind in ("blob", "uri"):
        tally.placeholder("files")
        return placeholder("file", _source_name(block))
    if kind in AUDIO:
        tally.placeholder("audio clips")
        return placeholder("audio")
    if kind in TOOL_CALL:
        tally.placeholder("tool calls")
        name = block.get("name") or (block.get("function") or {}).get("name") or "tool"
        args = block.get("input", block.get("arguments", block.get("args")))
        if args is None and isinstance(block.get("function"), dict):
            args = block["function"].get("arguments")
        return placeholder("tool call", f"{name} {_json_short(args)}" if args else str(name))
    if kind in TOOL_RESULT:
        tally.placeholder("tool results")
        result = block.get("content", block.get("response", block.get("output")))
        if isinstance(result, list):
            texts = [b.get("text", "") for b in result if isinstance(b, dict)]
            result = " ".join(t for t in texts if isinstance(t, str))
        return placeholder("tool result", _json_short(result) if result else "")
    if kind in REASONING:
        tally.skip("reasoning blocks")
        return ""
    raise TranscriptError(
        f"{where}: content of type {kind!r} is not one the lab reads (it reads {KNOWN})"
    )


def content_text(content: Any, tally: Tally, *, where: str, field: str = "content") -> str:
    """A message's content (a string, or a list of blocks) as one text."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        return block_text(content, tally, where=f"{where} ({field})")
    if isinstance(content, list):
        parts = [
            block_text(b, tally, where=f"{where} ({field}[{i}])") for i, b in enumerate(content)
        ]
        return "\n".join(p for p in parts if p)
    raise TranscriptError(
        f"{where}: content must be a string or a list of blocks, not {kind_of(content)}"
    )


def tool_calls_text(calls: Any, tally: Tally) -> str:
    """OpenAI's `tool_calls` (or the old `function_call`) on an assistant message as placeholders."""
    if isinstance(calls, dict):
        calls = [{"function": calls}]
    if not isinstance(calls, list):
        return ""
    out = []
    for call in calls:
        if not isinstance(call, dict):
            continue
        inner = call.get("function")
        function: Mapping[str, Any] = inner if isinstance(inner, dict) else call
        name = function.get("name") or "tool"
        args = function.get("arguments", function.get("args"))
        tally.placeholder("tool calls")
        out.append(placeholder("tool call", f"{name} {_json_short(args)}" if args else str(name)))
    return "\n".join(out)
