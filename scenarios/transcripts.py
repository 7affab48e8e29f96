"""Transcripts from files, parsed with no side effects: one parser, one `TranscriptError`.

Accepted shapes (`parse` detects which):

* OpenAI messages JSON: a list of ``{"role", "content"}``, or ``{"messages": [...]}``; system
  (or developer) messages before the conversation become the system prompt; content is a
  string or a list of text parts.
* Anthropic JSON: ``{"system": ..., "messages": [...]}``; ``system`` and each content are a
  string or a list of ``{"type": "text", "text": ...}`` blocks.
* Plain text: lines starting ``User:`` / ``Assistant:`` (``System:`` first, optionally); the
  lines that follow a label, up to the next label, belong to the same message.

Validation stops at the first problem and names it by line (text, JSON syntax) or by index
(``messages[3]``). `simple_turns` also reads looser shapes for filler: a JSON list of strings
or of ``{user, reply}`` objects, CSV with a ``user`` column, or one user message a line.
A Memory Lab session export is read by engines/transcripts.py (it needs storage/).

Over 400 lines on purpose: the strict formats and the loose filler shapes are one parser,
so that every importer in the app accepts and rejects the same files.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MAX_TURNS = 5000
MAX_CHARS = 20_000_000
FORMATS = {
    "openai": "OpenAI messages (JSON)",
    "anthropic": "Anthropic messages (JSON)",
    "text": "plain text (User: / Assistant:)",
    "memory_lab": "Memory Lab session export (JSON)",
}
_ROLE_ALIASES = {"developer": "system", "human": "user", "ai": "assistant", "model": "assistant"}
_LABEL = re.compile(r"^\s*(user|assistant|system|human)\s*:[ \t]?(.*)$", re.IGNORECASE)


class TranscriptError(ValueError):
    """A transcript that cannot be imported; says where (line or index) and what is wrong."""

    def __init__(
        self,
        message: str,
        *,
        line: int | None = None,
        index: int | None = None,
        part: str | None = None,
    ) -> None:
        self.line = line  # 1-based line of a text or JSON file
        self.index = index  # 0-based index of the message in the messages list
        self.part = part  # where inside it ("content[1]", "system[0]")
        self.reason = message
        if line is not None:
            where = f"line {line}: "
        elif index is not None:
            where = f"message index {index}" + (f" ({part})" if part else "") + ": "
        else:
            where = f"{part}: " if part else ""
        super().__init__(where + message)


@dataclass(frozen=True)
class Transcript:
    """An imported conversation: (user message, recorded reply or None) per turn."""

    format: str
    turns: tuple[tuple[str, str | None], ...]
    system: str | None = None
    notes: tuple[str, ...] = ()
    saved: Any = None  # a storage SavedSession for a Memory Lab export (engines/transcripts.py)

    @property
    def user_turns(self) -> list[str]:
        return [u for u, _ in self.turns]

    @property
    def recorded_replies(self) -> int:
        return sum(1 for _, r in self.turns if r is not None)

    def describe(self) -> str:
        """'12 turns, 12 recorded replies, system prompt: yes · OpenAI messages (JSON)'."""
        return (
            f"{len(self.turns)} turns, {self.recorded_replies} recorded replies, system prompt: "
            f"{'yes' if self.system else 'no'} · {FORMATS.get(self.format, self.format)}"
        )


@dataclass(frozen=True)
class _Item:
    role: str
    text: str
    line: int | None = None
    index: int | None = None

    @property
    def where(self) -> str:
        return f"line {self.line}" if self.line is not None else f"message index {self.index}"


# ---- parsing ---------------------------------------------------------------------------------


ObjectHook = Callable[[Mapping[str, Any]], "Transcript | None"]


def parse(data: str | bytes, *, name: str = "", on_object: ObjectHook | None = None) -> Transcript:
    """Parse an uploaded file's contents (format detected; `name` only breaks ties).

    `on_object` may claim a JSON object first (engines/transcripts.py reads a Memory Lab
    session export this way); it returns None to leave the object to the parsers here."""
    text = _decode(data)
    if len(text) > MAX_CHARS:
        raise TranscriptError(f"the file is larger than {MAX_CHARS:,} characters")
    stripped = text.lstrip()
    if not stripped:
        raise TranscriptError("the file is empty", line=1)
    suffix = name.lower().rsplit(".", 1)[-1] if "." in name else ""
    looks_json = suffix == "json" or (suffix not in ("txt", "md") and stripped[:1] in "[{")
    if looks_json:
        return parse_json(text, on_object=on_object)
    return parse_text(text)


def _decode(data: str | bytes) -> str:
    if isinstance(data, str):
        return data.removeprefix("\ufeff")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise TranscriptError(
            f"not UTF-8 text (byte {exc.start}); save the file as UTF-8", line=line
        ) from None


def parse_json(text: str, *, on_object: ObjectHook | None = None) -> Transcript:
    """OpenAI or Anthropic messages JSON (or what `on_object` claims)."""
    data = load_json(text)
    if isinstance(data, list):
        return parse_messages(data, fmt="openai")
    if not isinstance(data, Mapping):
        raise TranscriptError(
            f"expected a list of messages or an object with 'messages', got {_kind(data)}",
            line=1,
        )
    claimed = on_object(data) if on_object is not None else None
    if claimed is not None:
        return claimed
    if "messages" not in data:
        keys = ", ".join(sorted(map(str, data))[:6]) or "none"
        raise TranscriptError(
            f"a JSON object needs a 'messages' list (OpenAI or Anthropic format); its keys: {keys}",
            line=1,
        )
    if "system" in data:
        system = _system_text(data["system"])
        return parse_messages(data["messages"], system=system, fmt="anthropic", field="messages")
    return parse_messages(data["messages"], fmt="openai", field="messages")


def _system_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return _blocks_text(value, "system")
    raise TranscriptError(
        f"must be a string or a list of text blocks, not {_kind(value)}", part="system"
    )


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", type(None): "null"}.get(
        type(value), type(value).__name__
    )


def _blocks_text(blocks: list[Any], field: str, index: int | None = None) -> str:
    parts = []
    for i, block in enumerate(blocks):
        at: dict[str, Any] = {"index": index, "part": f"{field}[{i}]"}
        if isinstance(block, str):
            parts.append(block)
            continue
        if not isinstance(block, Mapping):
            raise TranscriptError(f"a content block must be an object, not {_kind(block)}", **at)
        kind = block.get("type", "text")
        if kind not in ("text", "input_text", "output_text"):
            raise TranscriptError(
                f"content block of type {kind!r}: only text can be replayed (remove images, "
                "tool calls and tool results)",
                **at,
            )
        value = block.get("text")
        if not isinstance(value, str):
            raise TranscriptError("a text block needs a 'text' string", **at)
        parts.append(value)
    return "\n".join(parts)


def parse_messages(
    messages: Any,
    *,
    system: str | None = None,
    fmt: str = "openai",
    field: str = "",
) -> Transcript:
    """A list of {role, content} messages (either vendor's content shapes)."""
    if not isinstance(messages, list):
        raise TranscriptError(
            f"'messages' must be a list, not {_kind(messages)}", part=field or None
        )
    items: list[_Item] = []
    for i, message in enumerate(messages):
        where = i
        if not isinstance(message, Mapping):
            raise TranscriptError(f"a message must be an object, not {_kind(message)}", index=where)
        role = message.get("role")
        if not isinstance(role, str):
            raise TranscriptError("the message has no 'role'", index=where)
        role = _ROLE_ALIASES.get(role.lower(), role.lower())
        if role not in ("system", "user", "assistant"):
            raise TranscriptError(
                f"role {message['role']!r} is not supported (only system, user and assistant "
                "messages can be replayed; remove tool messages)",
                index=where,
            )
        if "content" not in message:
            raise TranscriptError("the message has no 'content'", index=where)
        content = message["content"]
        if content is None:
            raise TranscriptError(
                "the content is null (a tool call?): only text messages can be replayed",
                index=where,
            )
        if isinstance(content, list):
            text = _blocks_text(content, "content", i)
        elif isinstance(content, str):
            text = content
        else:
            raise TranscriptError(
                f"content must be a string or a list of text blocks, not {_kind(content)}",
                index=where,
            )
        items.append(_Item(role, text, index=i))
    return _pair(items, fmt=fmt, system=system)


def parse_text(text: str) -> Transcript:
    """A plain-text transcript of `User:` / `Assistant:` lines (multi-line messages)."""
    items: list[_Item] = []
    current: list[str] | None = None
    role = ""
    start = 0
    lines = text.splitlines()

    def flush() -> None:
        if current is None:
            return
        body = "\n".join(current).strip("\n")
        if not body.strip():
            raise TranscriptError(f"the {role.capitalize()} message is empty", line=start)
        items.append(_Item(role, body.strip(), line=start))

    for number, line in enumerate(lines, start=1):
        match = _LABEL.match(line)
        if match:
            flush()
            role = _ROLE_ALIASES.get(match.group(1).lower(), match.group(1).lower())
            current = [match.group(2)]
            start = number
        elif current is None:
            if line.strip():
                raise TranscriptError(
                    "expected a line starting with 'User:' or 'Assistant:' "
                    f"(got {line.strip()[:40]!r})",
                    line=number,
                )
        else:
            current.append(line)
    flush()
    if not items:
        raise TranscriptError("no 'User:' line found", line=1)
    return _pair(items, fmt="text")


def _pair(items: Sequence[_Item], *, fmt: str, system: str | None = None) -> Transcript:
    """Messages -> turns: leading system text is the system prompt; consecutive messages of
    one role are joined (noted); an opening assistant message is left out (noted)."""
    notes: list[str] = []
    system_parts = [system] if system else []
    turns: list[list[Any]] = []  # [user, reply or None, where]
    started = False
    for item in items:
        if item.role == "system":
            if started:
                raise TranscriptError(
                    "a system message after the conversation started cannot be replayed "
                    "(move it to the top)",
                    line=item.line,
                    index=item.index,
                )
            if item.text.strip():
                system_parts.append(item.text)
            continue
        if not item.text.strip():
            raise TranscriptError(
                f"the {item.role} message is empty", line=item.line, index=item.index
            )
        if item.role == "assistant" and not turns:
            notes.append(
                f"the opening assistant message ({item.where}) was left out: turns start with "
                "a user message"
            )
            started = True
            continue
        started = True
        if item.role == "user":
            if turns and turns[-1][1] is None:
                notes.append(f"two user messages in a row ({item.where}): joined into one turn")
                turns[-1][0] += "\n\n" + item.text
            else:
                turns.append([item.text, None, item.where])
        else:
            if turns[-1][1] is not None:
                notes.append(f"two assistant messages in a row ({item.where}): joined")
                turns[-1][1] += "\n\n" + item.text
            else:
                turns[-1][1] = item.text
    if not turns:
        raise TranscriptError("no user message found", line=1 if fmt == "text" else None)
    if len(turns) > MAX_TURNS:
        raise TranscriptError(f"{len(turns):,} turns: at most {MAX_TURNS:,} can be replayed")
    return Transcript(
        format=fmt,
        turns=tuple((u, r) for u, r, _ in turns),
        system="\n\n".join(system_parts) or None,
        notes=tuple(notes),
    )


def load_json(text: str) -> Any:
    """Parsed JSON; TranscriptError (never RecursionError) for anything that is not."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise TranscriptError(
            f"not valid JSON (column {exc.colno}): {exc.msg}", line=exc.lineno
        ) from None
    except RecursionError:
        raise TranscriptError("the JSON nests too deeply to read", line=1) from None


# ---- looser shapes (filler for the survival lab) ----------------------------------------------

Pair = tuple[str, "str | None"]


def _pairs_from_messages(messages: Iterable[Mapping[str, Any]]) -> list[Pair]:
    """Role/content messages paired up leniently: each user message with the reply after it."""
    turns: list[Pair] = []
    pending: str | None = None
    for m in messages:
        role, content = m.get("role"), m.get("content")
        if not isinstance(content, str):
            continue
        if role == "user":
            if pending is not None:
                turns.append((pending, None))
            pending = content
        elif role == "assistant" and pending is not None:
            turns.append((pending, content))
            pending = None
    if pending is not None:
        turns.append((pending, None))
    return turns


def _pairs_from_json(data: Any, depth: int = 0) -> list[Pair]:
    if isinstance(data, Mapping):
        for key in ("turns", "messages", "user_turns", "conversation"):
            if key in data and depth < 3:
                return _pairs_from_json(data[key], depth + 1)
        raise TranscriptError(
            "the JSON object has none of the keys turns, messages, user_turns, conversation"
        )
    if not isinstance(data, list):
        raise TranscriptError("the JSON must be a list of messages or turns")
    if all(isinstance(x, str) for x in data):
        return [(x, None) for x in data]
    if all(isinstance(x, Mapping) and "role" in x for x in data):
        return _pairs_from_messages(data)
    turns: list[Pair] = []
    for x in data:
        if isinstance(x, Mapping) and isinstance(x.get("user"), str):
            reply = x.get("assistant", x.get("reply"))
            turns.append((x["user"], reply if isinstance(reply, str) and reply else None))
        elif isinstance(x, str):
            turns.append((x, None))
    return turns


def _pairs_from_csv(text: str) -> list[Pair]:
    reader = csv.DictReader(io.StringIO(text))
    fields = [f.strip().lower() for f in reader.fieldnames or []]
    if "user" not in fields:
        raise TranscriptError("a CSV transcript needs a 'user' column (and optionally 'reply')")
    turns: list[Pair] = []
    for row in reader:
        row = {(k or "").strip().lower(): v for k, v in row.items()}
        reply = row.get("reply") or row.get("assistant") or None
        turns.append((row["user"], reply))
    return turns


def simple_turns(text: str, *, name: str = "") -> list[Pair]:
    """(user, reply or None) pairs from any accepted shape: first the strict formats above,
    then a JSON list of strings or {user, reply} objects, CSV with a 'user' column, or plain
    text with one user message a line. TranscriptError when no user message is found."""
    kind = "." + name.lower().rsplit(".", 1)[-1] if "." in name else ""
    stripped = text.strip()
    if not stripped:
        raise TranscriptError("the transcript is empty")
    if len(text) > MAX_CHARS:  # the same limit as the main page's importer
        raise TranscriptError(f"the file is larger than {MAX_CHARS:,} characters")
    if kind != ".csv":
        try:
            found = parse(text, name=name)
        except TranscriptError:
            pass  # not one of those formats: try the simple shapes below
        else:
            turns = [(user, reply or None) for user, reply in found.turns if user.strip()]
            if turns:
                return turns
    if kind == ".json" or (not kind and stripped[:1] in "[{"):
        pairs = _pairs_from_json(load_json(stripped))
    elif kind == ".csv":
        pairs = _pairs_from_csv(text)
    else:
        pairs = [(line.strip(), None) for line in stripped.splitlines() if line.strip()]
    pairs = [p for p in pairs if p[0].strip()]
    if not pairs:
        raise TranscriptError("the transcript holds no user messages")
    return pairs
