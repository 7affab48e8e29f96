"""Transcripts from files, parsed with no side effects: one parser, one `TranscriptError`.

The format is detected from the file's shape (registry.py lists them, one module each):
OpenAI and Anthropic messages JSON, plain ``User:``/``Assistant:`` text, ChatGPT and
Claude.ai data exports, ShareGPT, OpenAI chat JSONL and Batch API input, LangChain
``messages_to_dict`` dumps, LangSmith run exports and OpenTelemetry GenAI spans. A Memory
Lab session export is read by engines/transcripts.py (it needs storage/) through `on_object`.

A file may hold many conversations (exports do): `list_conversations` streams it and returns
a pick list (title, date, turns) without keeping their text; `parse(..., conversation=N|ID)`
picks one; `parse_all` returns every one. Errors name the conversation and the place (line,
message index, node id, span id). `simple_turns` also reads looser shapes for filler.

May import: memory/ only (and the standard library), like the rest of scenarios/.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from scenarios.transcripts.core import (
    MAX_CHARS,
    MAX_TURNS,
    TITLES,
    Conversation,
    Transcript,
    TranscriptError,
    TurnUsage,
)
from scenarios.transcripts.loose import Pair, load_json, loose_pairs
from scenarios.transcripts.openai import messages_transcript
from scenarios.transcripts.registry import REGISTRY, Format, find, register, title_of
from scenarios.transcripts.source import Document, Record, open_document
from scenarios.transcripts.text import parse_text

__all__ = [
    "FORMATS",
    "MAX_CHARS",
    "MAX_TURNS",
    "REGISTRY",
    "Conversation",
    "Source",
    "Format",
    "Transcript",
    "TranscriptError",
    "TurnUsage",
    "list_conversations",
    "load_json",
    "parse",
    "parse_all",
    "parse_json",
    "parse_messages",
    "parse_text",
    "read_all",
    "register",
    "simple_turns",
    "title_of",
]

FORMATS: dict[str, str] = TITLES  # every format's title by name

ObjectHook = Callable[[Mapping[str, Any]], "Transcript | None"]
Source = bytes | str | IO[bytes] | Path


def _keys(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(sorted(map(str, value))[:8]) or "none"
    return type(value).__name__


@dataclass
class _Opened:
    """A file opened for reading: either one conversation already read (`whole`: plain text,
    or an object `on_object` claimed) or its format and records (the first one included)."""

    doc: Document
    whole: Transcript | None = None
    fmt: Format | None = None
    records: Iterator[Record] = field(default_factory=lambda: iter(()))


def _open(
    source: Source, *, name: str, on_object: ObjectHook | None, keep_bad_lines: bool
) -> _Opened:
    """The one walk into a file every reader here takes: container, first record, the
    claim of `on_object`, the format detected from the first record's shape."""
    doc = open_document(source, name=name, keep_bad_lines=keep_bad_lines)
    if doc.container == "text":
        suffix = name.lower().rsplit(".", 1)[-1] if "." in name else ""
        if suffix in ("json", "jsonl"):
            raise TranscriptError("not valid JSON: it does not start with '[' or '{'", line=1)
        if len(doc.text) > MAX_CHARS:
            raise TranscriptError(f"the file is larger than {MAX_CHARS:,} characters")
        return _Opened(doc, whole=parse_text(doc.text))
    first = _first(doc)
    if doc.container == "object" and on_object is not None and isinstance(first.value, dict):
        claimed = on_object(first.value)
        if claimed is not None:
            return _Opened(doc, whole=claimed)
    fmt = find(doc.container, first.value) or _fallback(doc, first)
    return _Opened(doc, fmt=fmt, records=_chain(first, doc.records))


def read_all(
    source: Source,
    *,
    name: str = "",
    on_object: ObjectHook | None = None,
    keep_bad_lines: bool = False,
    notes: list[str] | None = None,
) -> Iterator[Transcript]:
    """Every conversation in `source`, read one at a time (a big export streams)."""
    opened = _open(source, name=name, on_object=on_object, keep_bad_lines=keep_bad_lines)
    if opened.whole is not None:
        yield opened.whole
        return
    assert opened.fmt is not None
    yield from opened.fmt.read(opened.records)
    if notes is not None:
        notes.extend(opened.doc.notes)


def _chain(first: Record, rest: Iterator[Record]) -> Iterator[Record]:
    yield first
    yield from rest


def _fallback(doc: Document, first: Record) -> Format:
    if doc.container == "list":
        return REGISTRY["openai_list"]  # its errors name the message that is wrong
    known = ", ".join(sorted({f.title for f in REGISTRY.values()}))
    if doc.container == "object":
        raise TranscriptError(
            "a JSON object needs a 'messages' list (OpenAI or Anthropic format) or the shape of "
            f"one of the formats read ({known}); its keys: {_keys(first.value)}",
            line=1,
        )
    raise TranscriptError(
        f"these JSON lines are none of the formats read ({known}); the first line's keys: "
        f"{_keys(first.value)}",
        line=first.line,
    )


def _matches(t: Transcript, conversation: int | str) -> bool:
    if isinstance(conversation, int):
        return t.number == conversation
    return conversation in (t.id, str(t.number))


def parse(
    data: Source,
    *,
    name: str = "",
    on_object: ObjectHook | None = None,
    conversation: int | str | None = None,
    keep_bad_lines: bool = False,
) -> Transcript:
    """The conversation in an uploaded file (format detected; `name` only breaks ties).

    A file of many conversations needs `conversation`: its number (from 1, as listed) or
    its id. `on_object` may claim a JSON object first (engines/transcripts.py reads a Memory
    Lab session export this way); it returns None to leave the object to the parsers here."""
    notes: list[str] = []
    found: Transcript | None = None
    count = 0
    for t in _pick(data, name, on_object, keep_bad_lines, notes, conversation):
        count += 1
        if conversation is None:
            if found is not None:
                raise TranscriptError(
                    "the file holds several conversations: pick one by number or id "
                    "(`memory-lab transcript FILE --list` lists them)"
                )
            found = t
        elif _matches(t, conversation):
            found = t
            break
    if found is None:
        raise TranscriptError(
            f"no conversation {conversation!r} in the file (it holds {count}; numbers run from 1)"
        )
    return _with_notes(found, notes)


def _pick(
    data: Source,
    name: str,
    on_object: ObjectHook | None,
    keep_bad_lines: bool,
    notes: list[str],
    conversation: int | str | None,
) -> Iterator[Transcript]:
    """The file's conversations; when one is asked for, another that cannot be read is
    passed over (only the chosen one's errors matter)."""
    if conversation is None:
        yield from read_all(data, name=name, on_object=on_object, keep_bad_lines=keep_bad_lines,
                            notes=notes)  # fmt: skip
        return
    opened = _open(data, name=name, on_object=on_object, keep_bad_lines=keep_bad_lines)
    if opened.whole is not None:
        yield opened.whole
        return
    fmt = opened.fmt
    assert fmt is not None
    if fmt.each is None:
        yield from fmt.read(opened.records)
        notes.extend(opened.doc.notes)
        return
    for number, record in enumerate(opened.records, start=1):
        raw = record.value if isinstance(record.value, dict) else {}
        ids = {
            str(raw.get(k)) for k in ("id", "uuid", "conversation_id", "custom_id") if raw.get(k)
        }
        wanted = conversation == number or str(conversation) in ids | {str(number)}
        try:
            t = fmt.each(record, number)
        except TranscriptError:
            if wanted:
                raise
            continue
        if wanted:
            notes.extend(opened.doc.notes)
            yield t
            return
        yield t
    notes.extend(opened.doc.notes)


def _first(doc: Document) -> Record:
    try:
        return next(doc.records)
    except StopIteration:
        raise TranscriptError(
            "the file holds an empty list: no messages or conversations", line=1
        ) from None


def _with_notes(t: Transcript, notes: list[str]) -> Transcript:
    if not notes:
        return t
    from dataclasses import replace

    return replace(t, notes=(*t.notes, *notes))


def parse_all(data: Source, *, name: str = "", keep_bad_lines: bool = False) -> list[Transcript]:
    """Every conversation in the file."""
    return list(read_all(data, name=name, keep_bad_lines=keep_bad_lines))


def list_conversations(
    data: Source,
    *,
    name: str = "",
    on_object: ObjectHook | None = None,
    keep_bad_lines: bool = False,
) -> list[Conversation]:
    """The pick list of a file: one entry per conversation (title, date, turns), read one
    conversation at a time so a big export is listed without holding its text. A
    conversation that cannot be read is listed with its error, and the rest still are."""
    out: list[Conversation] = []
    for entry in _entries(data, name=name, on_object=on_object, keep_bad_lines=keep_bad_lines):
        out.append(entry)
    return out


def _entries(
    data: Source, *, name: str, on_object: ObjectHook | None, keep_bad_lines: bool
) -> Iterator[Conversation]:
    opened = _open(data, name=name, on_object=on_object, keep_bad_lines=keep_bad_lines)
    if opened.whole is not None:
        yield Conversation.of(opened.whole)
        return
    fmt = opened.fmt
    assert fmt is not None
    if fmt.each is None:
        for t in fmt.read(opened.records):
            yield Conversation.of(t)
        return
    for number, record in enumerate(opened.records, start=1):
        try:
            yield Conversation.of(fmt.each(record, number))
        except TranscriptError as exc:
            value = record.value if isinstance(record.value, dict) else {}
            yield Conversation(
                number=number,
                id=str(value.get("id") or value.get("uuid") or value.get("conversation_id") or ""),
                title=str(value.get("title") or value.get("name") or ""),
                created="",
                turns=0,
                format=fmt.name,
                error=str(exc),
            )


# ---- the older entry points, kept for callers that know their shape -------------------------


def parse_json(text: str, *, on_object: ObjectHook | None = None) -> Transcript:
    """A JSON transcript (any JSON format above, or what `on_object` claims)."""
    return parse(text, name="transcript.json", on_object=on_object)


def parse_messages(
    messages: Any, *, system: str | None = None, fmt: str = "openai", field: str = ""
) -> Transcript:
    """A list of {role, content} messages (either vendor's content shapes)."""
    return messages_transcript(messages, fmt=fmt, system=system, field=field)


def simple_turns(text: str, *, name: str = "") -> list[Pair]:
    """(user, reply or None) pairs from any accepted shape: first the strict formats above,
    then a JSON list of strings or {user, reply} objects, CSV with a 'user' column, or plain
    text with one user message a line. TranscriptError when no user message is found."""
    kind = "." + name.lower().rsplit(".", 1)[-1] if "." in name else ""
    if not text.strip():
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
    return loose_pairs(text, kind=kind)
