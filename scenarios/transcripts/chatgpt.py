"""ChatGPT data export (`conversations.json`): a list of conversations, each a `mapping` tree.

Each node is ``{id, parent, children, message}``; a message has ``author.role``,
``content.content_type`` and ``parts``, ``recipient`` and ``metadata``. The conversation is
the active branch: from ``current_node`` up the ``parent`` links to the root. Regenerated
replies and edited prompts leave sibling branches, which are not part of it. Skipped (and
counted): empty nodes, hidden system context, tool messages, the assistant's calls to tools,
and reasoning. A cycle, a missing parent or an unknown content type is an error naming the
node.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

from scenarios.transcripts.content import block_text, clip, placeholder
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

TEXT_TYPES = frozenset({"text", "multimodal_text"})
TOOL_TYPES = frozenset(
    {"code", "execution_output", "tether_browsing_display", "tether_quote", "system_error",
     "computer_output", "sonic_webpage", "app_pairing_content"}
)  # fmt: skip
HIDDEN_TYPES = frozenset({"user_editable_context", "model_editable_context"})
REASONING_TYPES = frozenset({"thoughts", "reasoning_recap"})


def detect(first: Any) -> bool:
    return isinstance(first, dict) and isinstance(first.get("mapping"), dict)


def iso(value: Any) -> str:
    """An export's epoch seconds (or ISO text) as ISO 8601 UTC."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value, UTC).isoformat(timespec="seconds")
        except (OverflowError, OSError, ValueError):
            return ""
    return value if isinstance(value, str) else ""


def label(number: int, data: Mapping[str, Any]) -> str:
    title = data.get("title") if isinstance(data, dict) else None
    ident = conversation_id(data) if isinstance(data, dict) else ""
    text = f"conversation {number}"
    if isinstance(title, str) and title:
        text += f" {clip(title, 60)!r}"
    if ident:
        text += f" (id {ident})"
    return text


def conversation_id(data: Mapping[str, Any]) -> str:
    for key in ("conversation_id", "id", "uuid"):
        value = data.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def active_branch(mapping: Mapping[str, Any], current: Any) -> list[tuple[str, Mapping[str, Any]]]:
    """(node id, node) from the root down to `current`, following `parent` links."""
    if not isinstance(current, str) or not current:
        leaves = [k for k, n in mapping.items() if isinstance(n, dict) and not n.get("children")]
        if not leaves:
            raise TranscriptError("no 'current_node', and every node has children (a cycle?)")
        current = leaves[-1]
    if current not in mapping:
        raise TranscriptError(f"'current_node' {current!r} is not a node of the mapping")
    path: list[tuple[str, Mapping[str, Any]]] = []
    seen: set[str] = set()
    node_id: Any = current
    while node_id is not None:
        if node_id in seen:
            raise TranscriptError(
                "the parent links go round in a cycle (the tree is damaged)", node=node_id
            )
        seen.add(node_id)
        node = mapping.get(node_id)
        if not isinstance(node, dict):
            child = path[-1][0] if path else node_id
            raise TranscriptError(f"its parent {node_id!r} is missing from the mapping", node=child)
        path.append((node_id, node))
        node_id = node.get("parent")
        if node_id is not None and not isinstance(node_id, str):
            raise TranscriptError(
                f"'parent' must be a node id, not {kind_of(node_id)}", node=path[-1][0]
            )
    path.reverse()
    return path


def _message_text(node_id: str, message: Mapping[str, Any], tally: Tally) -> str | None:
    """The text a node contributes, or None when it is skipped (counted in `tally`)."""
    content = message.get("content")
    if not isinstance(content, dict):
        raise TranscriptError("the message has no 'content' object", node=node_id)
    kind = content.get("content_type")
    if kind in HIDDEN_TYPES:
        tally.skip("hidden context nodes")
        return None
    if kind in REASONING_TYPES:
        tally.skip("reasoning nodes")
        return None
    if kind in TOOL_TYPES:
        tally.skip("tool nodes")
        return None
    if kind not in TEXT_TYPES:
        raise TranscriptError(
            f"content type {kind!r} is not one the lab reads (text, multimodal_text; tool "
            "and hidden types are skipped)",
            node=node_id,
        )
    parts = content.get("parts")
    if parts is None and isinstance(content.get("text"), str):
        parts = [content["text"]]
    if not isinstance(parts, list):
        raise TranscriptError("'parts' must be a list", node=node_id)
    texts = []
    for i, part in enumerate(parts):
        if isinstance(part, dict):
            texts.append(_asset(part, tally, f"node {node_id!r} parts[{i}]"))
        else:
            texts.append(block_text(part, tally, where=f"node {node_id!r} parts[{i}]"))
    return "\n".join(t for t in texts if t)


def _asset(part: Mapping[str, Any], tally: Tally, where: str) -> str:
    kind = str(part.get("content_type", part.get("type", "")))
    name = part.get("asset_pointer") or part.get("name") or ""
    if "image" in kind:
        tally.placeholder("images")
        size = ""
        if isinstance(part.get("width"), int) and isinstance(part.get("height"), int):
            size = f", {part['width']}x{part['height']}"
        return placeholder("image", f"{name}{size}".strip(", "))
    if "audio" in kind:
        tally.placeholder("audio clips")
        return placeholder("audio")
    if "video" in kind:
        tally.placeholder("videos")
        return placeholder("video")
    if kind in ("file", "real_time_user_audio_video_asset_pointer") or name:
        tally.placeholder("files")
        return placeholder("file", str(name))
    return block_text(part, tally, where=where)


def conversation(data: Any, number: int) -> Transcript:
    """One conversation of the export (its active branch) as a Transcript."""
    where = label(number, data if isinstance(data, dict) else {})
    try:
        if not isinstance(data, dict):
            raise TranscriptError(f"a conversation must be an object, not {kind_of(data)}")
        mapping = data.get("mapping")
        if not isinstance(mapping, dict):
            raise TranscriptError("it has no 'mapping' object (the tree of messages)")
        tally = Tally()
        items: list[Item] = []
        branch = active_branch(mapping, data.get("current_node"))
        tally.skip("nodes on other branches", _count_reachable(mapping) - len(branch))
        for node_id, node in branch:
            message = node.get("message")
            if message is None:
                tally.skip("empty nodes")
                continue
            if not isinstance(message, dict):
                raise TranscriptError(
                    f"'message' must be an object, not {kind_of(message)}", node=node_id
                )
            author = message.get("author")
            role = author.get("role") if isinstance(author, dict) else None
            raw_meta = message.get("metadata")
            metadata: Mapping[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
            if role == "tool":
                tally.skip("tool nodes")
                continue
            if role not in ("system", "user", "assistant"):
                raise TranscriptError(
                    f"author role {role!r} is not one the lab reads", node=node_id
                )
            if role == "system" and (metadata.get("is_visually_hidden_from_conversation") or
                                     not _has_text(message)):  # fmt: skip
                tally.skip("hidden system nodes")
                continue
            if metadata.get("is_visually_hidden_from_conversation"):
                tally.skip("hidden context nodes")
                continue
            recipient = message.get("recipient", "all")
            if role == "assistant" and recipient not in ("all", None):
                tally.skip("tool nodes")
                continue
            text = _message_text(node_id, message, tally)
            if text is None:
                continue
            if not text.strip():
                tally.skip("empty messages")
                continue
            items.append(Item(role, text, place=f"node {node_id!r}"))
        if not items:
            raise TranscriptError("the active branch holds no messages (an empty conversation)")
        return build(
            items,
            fmt="chatgpt",
            tally=tally,
            title=text_field(data, "title"),
            id=conversation_id(data),
            created=iso(data.get("create_time")),
            number=number,
            system_late="skip",
        )
    except TranscriptError as exc:
        raise exc.within(where) from None


def _has_text(message: Mapping[str, Any]) -> bool:
    content = message.get("content")
    parts = content.get("parts") if isinstance(content, dict) else None
    return isinstance(parts, list) and any(isinstance(p, str) and p.strip() for p in parts)


def _count_reachable(mapping: Mapping[str, Any]) -> int:
    return sum(1 for n in mapping.values() if isinstance(n, dict))


def each(record: Record, number: int) -> Transcript:
    return conversation(record.value, number)


def read_one(records: Iterator[Record]) -> Iterator[Transcript]:
    """A single conversation object (one conversation saved on its own)."""
    yield conversation(next(records).value, 1)
