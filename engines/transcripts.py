"""Import a conversation from a file and replay it through any set of memory strategies.

Accepted shapes (`parse` detects which):

* OpenAI messages JSON: a list of ``{"role", "content"}``, or ``{"messages": [...]}``; system
  (or developer) messages before the conversation become the system prompt; content is a
  string or a list of text parts.
* Anthropic JSON: ``{"system": ..., "messages": [...]}``; ``system`` and each content are a
  string or a list of ``{"type": "text", "text": ...}`` blocks.
* Plain text: lines starting ``User:`` / ``Assistant:`` (``System:`` first, optionally); the
  lines that follow a label, up to the next label, belong to the same message.
* A Memory Lab session export (JSON): its user turns, and its own records for restoring it.

Validation stops at the first problem and names it by line (text, JSON syntax) or by index
(``messages[3]``). Parsing has no side effects, so a bad file changes nothing.

Two replay modes: ``fresh`` sends each user turn again (new replies from the model), and
``recorded`` keeps the transcript's replies — no model call for replies, only the strategies'
upkeep calls (summaries, extraction). Either way the result is a real `Session`, so the main
page, the sessions page, the store and the exports treat it like any conversation.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lanes import session as session_module
from lanes.lane import ReplyLike
from lanes.session import LaneSpec, Session, Transport
from memory.types import ModelFn, Request
from storage.store import FORMAT, SavedSession, SessionFormatError

FRESH, RECORDED = "fresh", "recorded"
MODES = (FRESH, RECORDED)
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
    saved: SavedSession | None = None  # set for a Memory Lab export: restorable as it was

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


def parse(data: str | bytes, *, name: str = "") -> Transcript:
    """Parse an uploaded file's contents (format detected; `name` only breaks ties)."""
    text = _decode(data)
    if len(text) > MAX_CHARS:
        raise TranscriptError(f"the file is larger than {MAX_CHARS:,} characters")
    stripped = text.lstrip()
    if not stripped:
        raise TranscriptError("the file is empty", line=1)
    suffix = name.lower().rsplit(".", 1)[-1] if "." in name else ""
    looks_json = suffix == "json" or (suffix not in ("txt", "md") and stripped[:1] in "[{")
    if looks_json:
        return parse_json(text)
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


def parse_json(text: str) -> Transcript:
    """OpenAI or Anthropic messages JSON, or a Memory Lab export."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TranscriptError(
            f"not valid JSON (column {exc.colno}): {exc.msg}", line=exc.lineno
        ) from None
    except RecursionError:
        raise TranscriptError("the JSON nests too deeply to read", line=1) from None
    if isinstance(data, list):
        return parse_messages(data, fmt="openai")
    if not isinstance(data, Mapping):
        raise TranscriptError(
            f"expected a list of messages or an object with 'messages', got {_kind(data)}",
            line=1,
        )
    if FORMAT in data:
        return _from_export(data)
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


def _from_export(data: Mapping[str, Any]) -> Transcript:
    try:
        saved = SavedSession.from_dict(data)
    except SessionFormatError as exc:
        raise TranscriptError(f"Memory Lab export: {exc}") from None
    lanes = list(saved.strategies)
    reference = "full" if "full" in lanes else lanes[0]
    turns = []
    for i, user in enumerate(saved.user_turns):
        record = saved.records[reference][i]
        turns.append((user, record.reply if record.ok else None))
    return Transcript(
        format="memory_lab",
        turns=tuple(turns),
        system=saved.system_prompt or None,
        notes=(f"recorded replies are the {saved.titles()[reference]} lane's",),
        saved=saved,
    )


# ---- replay ---------------------------------------------------------------------------------


class NoRecordedReply(Exception):
    """The transcript has no reply for this user message (its last turn, usually)."""


@dataclass(frozen=True)
class RecordedReply:
    """A transcript's reply, shaped like providers.Reply (nothing was sent)."""

    text: str
    body: Mapping[str, Any] | None
    complete: bool = True
    error: Exception | None = None
    usage: Any = None
    latency_s: float | None = None
    ttft_s: float | None = None
    model: str | None = "recorded reply"


class RecordedTransport:
    """While `replaying`, answers every lane with the transcript's reply for the turn (no
    model call) and records the body that *would* have been sent; otherwise — and for every
    upkeep call — it is the real transport, so a replayed session can be continued live."""

    def __init__(self, base: Transport) -> None:
        self.base = base
        self.replaying = False
        self.reply: str | None = None
        self._lock = threading.Lock()

    def set_reply(self, reply: str | None) -> None:
        with self._lock:
            self.replaying = True
            self.reply = reply

    def finish(self) -> None:
        with self._lock:
            self.replaying = False
            self.reply = None

    def stream(
        self, request: Request, settings: Any, on_delta: Callable[[str], None] | None = None
    ) -> ReplyLike:
        with self._lock:
            replaying, reply = self.replaying, self.reply
        if not replaying:
            return self.base.stream(request, settings, on_delta)
        body = would_send(request, settings, self.base)
        if reply is None:
            error = NoRecordedReply("the transcript has no reply to this message")
            return RecordedReply("", body, complete=False, error=error)
        if on_delta:
            on_delta(reply)
        return RecordedReply(reply, body)

    def as_model_fn(self, settings: Any) -> ModelFn:
        return self.base.as_model_fn(settings)


def would_send(request: Request, settings: Any, transport: Any = None) -> dict[str, Any]:
    """The provider-native body for `request` with `settings` (what a real call would send)."""
    from providers import ProviderSettings, build_body

    if isinstance(settings, ProviderSettings):
        return build_body(request, settings)
    if transport is not None and hasattr(transport, "body"):
        return dict(transport.body(request, settings))
    return {
        "model": getattr(settings, "model", None),
        "messages": [{"role": "system", "content": request.system}]
        + [m.as_dict() for m in request.messages],
    }


def replay(
    transcript: Transcript,
    lanes: Sequence[LaneSpec],
    *,
    provider: Any,
    maintenance: Any | None = None,
    transport: Transport | None = None,
    mode: str = RECORDED,
    system_prompt: str | None = None,
    name: str = "",
    on_start: Callable[[Session], Any] | None = None,
    on_turn: Callable[[int, int], Any] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> Session:
    """Run every user turn of `transcript` through `lanes`; returns the Session.

    `mode` is ``fresh`` (new replies from the model) or ``recorded`` (the transcript's
    replies; no model call except upkeep). `on_start(session)` runs before the first turn
    (track the session there to save each turn as it completes); `on_turn(done, total)`
    after each; `cancelled()` is checked before each turn (the turns so far are kept)."""
    if mode not in MODES:
        raise ValueError(f"mode is {FRESH!r} or {RECORDED!r}, got {mode!r}")
    base = transport or session_module.ProvidersTransport()
    recorded = RecordedTransport(base) if mode == RECORDED else None
    prompt = system_prompt if system_prompt is not None else transcript.system
    if not prompt:
        raise ValueError("the transcript has no system prompt: choose one")
    session = Session(
        system_prompt=prompt,
        lanes=lanes,
        provider=provider,
        maintenance=maintenance,
        transport=recorded or base,
        name=name,
    )
    if on_start is not None:
        on_start(session)
    total = len(transcript.turns)
    try:
        for done, (user, reply) in enumerate(transcript.turns, start=1):
            if cancelled is not None and cancelled():
                break
            if recorded is not None:
                recorded.set_reply(reply)
            session.run_turn(user)
            if on_turn is not None:
                on_turn(done, total)
    finally:
        if recorded is not None:
            recorded.finish()
    return session
