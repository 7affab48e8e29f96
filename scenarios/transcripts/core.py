"""The records every transcript format produces, the one error, and messages -> turns.

A format module turns its file's shape into `Item`s (role, text, where it came from) and
hands them to `build`, which pairs them into turns the same way for every format: leading
system text is the system prompt, consecutive messages of one role are joined (and the join
is noted), an opening assistant message is left out (noted), and what a format skipped or
turned into a placeholder is counted in the transcript itself.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memory.strategies.base import MAX_MESSAGE_CHARS

MAX_TURNS = 5000
MAX_CHARS = 20_000_000  # one conversation's text (a whole file may be larger: it streams)
TITLES: dict[str, str] = {  # format name -> title; registry.py adds every registered format
    "text": "plain text (User: / Assistant:)",
    "memory_lab": "Memory Lab session export (JSON)",
}


class TranscriptError(ValueError):
    """A transcript that cannot be imported; says which conversation, where in it (line,
    message index, node id, span id) and what is wrong."""

    def __init__(
        self,
        message: str,
        *,
        line: int | None = None,
        index: int | None = None,
        part: str | None = None,
        conversation: str | None = None,
        node: str | None = None,
        span: str | None = None,
    ) -> None:
        self.line = line  # 1-based line of a text, JSON or JSONL file
        self.index = index  # 0-based index of the message in the messages list
        self.part = part  # where inside it ("content[1]", "system[0]")
        self.conversation = (
            conversation  # "conversation 3 'Trip plans'" in a many-conversation file
        )
        self.node = node  # a ChatGPT mapping node id
        self.span = span  # an OpenTelemetry span id or a LangSmith run id
        self.reason = message
        places: list[str] = []
        if conversation:
            places.append(conversation)
        if node is not None:
            places.append(f"node {node!r}")
        if span is not None:
            places.append(f"span {span!r}")
        if line is not None:
            places.append(f"line {line}")
        elif index is not None:
            places.append(f"message index {index}" + (f" ({part})" if part else ""))
        elif part:
            places.append(part)
        super().__init__("".join(p + ": " for p in places) + message)

    def within(self, conversation: str) -> TranscriptError:
        """The same error, said to be in `conversation` (when it does not say so already)."""
        if self.conversation:
            return self
        return TranscriptError(
            self.reason,
            line=self.line,
            index=self.index,
            part=self.part,
            conversation=conversation,
            node=self.node,
            span=self.span,
        )


@dataclass(frozen=True)
class TurnUsage:
    """Tokens a trace reported for the call that produced a turn's reply (None: not given)."""

    input_tokens: int | None
    output_tokens: int | None


@dataclass(frozen=True)
class Transcript:
    """An imported conversation: (user message, recorded reply or None) per turn."""

    format: str
    turns: tuple[tuple[str, str | None], ...]
    system: str | None = None
    notes: tuple[str, ...] = ()
    saved: Any = None  # a storage SavedSession for a Memory Lab export (engines/transcripts.py)
    title: str = ""
    id: str = ""
    created: str = ""  # ISO 8601 (UTC) when the file says when it began
    skipped: tuple[tuple[str, int], ...] = ()  # (what, how many) left out of the turns
    usage: tuple[TurnUsage | None, ...] = ()  # per turn, when a trace reported tokens
    number: int = 1  # its place (from 1) in a file of many conversations

    @property
    def user_turns(self) -> list[str]:
        return [u for u, _ in self.turns]

    @property
    def recorded_replies(self) -> int:
        return sum(1 for _, r in self.turns if r is not None)

    @property
    def skipped_count(self) -> int:
        return sum(n for _, n in self.skipped)

    def describe(self) -> str:
        """'12 turns, 12 recorded replies, system prompt: yes · OpenAI messages (JSON)'."""
        n, replies = len(self.turns), self.recorded_replies
        text = (
            f"{n} turn{'' if n == 1 else 's'}, {replies} recorded "
            f"repl{'y' if replies == 1 else 'ies'}, system prompt: "
            f"{'yes' if self.system else 'no'} · {TITLES.get(self.format, self.format)}"
        )
        if self.skipped:
            text += " · skipped " + ", ".join(f"{n} {what}" for what, n in self.skipped)
        return text

    def as_dict(self) -> dict[str, Any]:
        """The conversation as the lab sees it (`memory-lab transcript --json`)."""
        data: dict[str, Any] = {
            "format": self.format,
            "number": self.number,
            "id": self.id,
            "title": self.title,
            "created": self.created,
            "system": self.system,
            "turns": [{"user": u, "assistant": r} for u, r in self.turns],
            "skipped": {what: n for what, n in self.skipped},
            "notes": list(self.notes),
        }
        if any(u is not None for u in self.usage):
            data["usage"] = [
                None if u is None else {"input": u.input_tokens, "output": u.output_tokens}
                for u in self.usage
            ]
        return data


@dataclass(frozen=True)
class Conversation:
    """One entry of a file's pick list: enough to choose, none of the text."""

    number: int  # from 1, in file order
    id: str
    title: str
    created: str
    turns: int
    format: str
    skipped: int = 0
    error: str | None = None  # a conversation that cannot be read is listed with the reason

    def as_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "id": self.id,
            "title": self.title,
            "created": self.created,
            "turns": self.turns,
            "format": self.format,
            "skipped": self.skipped,
            "error": self.error,
        }

    @classmethod
    def of(cls, transcript: Transcript) -> Conversation:
        return cls(
            number=transcript.number,
            id=transcript.id,
            title=transcript.title,
            created=transcript.created,
            turns=len(transcript.turns),
            format=transcript.format,
            skipped=transcript.skipped_count,
        )


@dataclass(frozen=True)
class Item:
    """One message on its way to a turn: role (system, user, assistant), text, and where."""

    role: str
    text: str
    line: int | None = None
    index: int | None = None
    place: str = ""  # how a format names its place ("node 'abc'", "span '1f2e'")
    usage: TurnUsage | None = None  # tokens reported for the call that wrote this reply

    @property
    def where(self) -> str:
        if self.place:
            return self.place
        return f"line {self.line}" if self.line is not None else f"message index {self.index}"

    def error(self, message: str) -> TranscriptError:
        if self.place:
            return TranscriptError(f"{self.place}: {message}")
        return TranscriptError(message, line=self.line, index=self.index)


@dataclass
class Tally:
    """What a format left out (`skip`) or drew as a placeholder (`placeholder`), counted."""

    skipped: Counter[str] = field(default_factory=Counter)
    placeholders: Counter[str] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)

    def skip(self, what: str, n: int = 1) -> None:
        if n > 0:
            self.skipped[what] += n

    def placeholder(self, what: str) -> None:
        self.placeholders[what] += 1


def kind_of(value: Any) -> str:
    """A short name for a JSON value's type, for error messages."""
    return {dict: "an object", list: "a list", str: "a string", type(None): "null"}.get(
        type(value), type(value).__name__
    )


def build(
    items: Sequence[Item],
    *,
    fmt: str,
    system: str | None = None,
    tally: Tally | None = None,
    title: str = "",
    id: str = "",
    created: str = "",
    number: int = 1,
    system_late: str = "error",
) -> Transcript:
    """Messages -> turns: leading system text is the system prompt; consecutive messages of
    one role are joined (noted); an opening assistant message is left out (noted).

    `system_late` says what a system message after the first user message does: ``error``
    (the strict formats) or ``skip`` (exports whose hidden system nodes sit mid-thread)."""
    tally = tally or Tally()
    notes: list[str] = list(tally.notes)
    system_parts = [system] if system else []
    turns: list[list[Any]] = []  # [user, reply or None, usage]
    started = False
    for item in items:
        if item.role == "system":
            if started:
                if system_late == "skip":
                    tally.skip("system messages after the start")
                    continue
                raise item.error(
                    "a system message after the conversation started cannot be replayed "
                    "(move it to the top)"
                )
            if item.text.strip():
                system_parts.append(item.text)
            continue
        if not item.text.strip():
            raise item.error(f"the {item.role} message is empty")
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
                turns.append([item.text, None, None])
        else:
            if turns[-1][1] is not None:
                notes.append(f"two assistant messages in a row ({item.where}): joined")
                turns[-1][1] += "\n\n" + item.text
            else:
                turns[-1][1] = item.text
            if item.usage is not None:
                turns[-1][2] = _add_usage(turns[-1][2], item.usage)
    if not turns:
        raise TranscriptError("no user message found", line=1 if fmt == "text" else None)
    longest = max(range(len(turns)), key=lambda i: max(len(turns[i][0]), len(turns[i][1] or "")))
    if max(len(turns[longest][0]), len(turns[longest][1] or "")) > MAX_MESSAGE_CHARS:
        raise TranscriptError(
            f"turn {longest + 1} has a message over {MAX_MESSAGE_CHARS:,} characters, the most "
            "one message may hold: shorten it or split the conversation"
        )
    if len(turns) > MAX_TURNS:
        raise TranscriptError(
            f"{len(turns):,} turns: at most {MAX_TURNS:,} can be replayed (split the conversation)"
        )
    if tally.placeholders:
        shown = ", ".join(f"{n} {what}" for what, n in sorted(tally.placeholders.items()))
        notes.append(f"shown as text placeholders: {shown}")
    usage = tuple(t[2] for t in turns)
    return Transcript(
        format=fmt,
        turns=tuple((u, r) for u, r, _ in turns),
        system="\n\n".join(system_parts) or None,
        notes=tuple(notes),
        title=title,
        id=id,
        created=created,
        skipped=tuple(sorted(tally.skipped.items())),
        usage=usage if any(u is not None for u in usage) else (),
        number=number,
    )


def _add_usage(old: TurnUsage | None, new: TurnUsage) -> TurnUsage:
    if old is None:
        return new

    def plus(a: int | None, b: int | None) -> int | None:
        return None if a is None and b is None else (a or 0) + (b or 0)

    return TurnUsage(
        plus(old.input_tokens, new.input_tokens), plus(old.output_tokens, new.output_tokens)
    )


def merge_history(seen: list[Item], inputs: Sequence[Item]) -> list[Item]:
    """The messages of one model call that the conversation so far does not hold yet.

    Traces record each call's whole input: when it repeats the conversation so far, only the
    rest is new; when the app trimmed its history, the new part is what follows the input's
    last assistant message (the user's new message)."""
    said = [(i.role, i.text) for i in seen if i.role != "system"]
    sent = [i for i in inputs if i.role != "system"]
    key = [(i.role, i.text) for i in sent]
    if key[: len(said)] == said:
        return sent[len(said) :]
    last_reply = max((n for n, i in enumerate(sent) if i.role == "assistant"), default=-1)
    return sent[last_reply + 1 :]


def one_text(parts: Iterable[str]) -> str:
    return "\n".join(p for p in parts if p)


def text_field(data: Mapping[str, Any], key: str, default: str = "") -> str:
    value = data.get(key, default)
    return value if isinstance(value, str) else default
