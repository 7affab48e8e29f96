"""Value types shared by the memory core, the providers and the lab."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from memory.errors import InvalidMessage

Role = Literal["user", "assistant"]
ROLES: tuple[str, ...] = ("user", "assistant")


@dataclass(frozen=True)
class Message:
    """One chat message; the system prompt is never a Message, it travels apart."""

    role: Role
    content: str

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise InvalidMessage(
                f"unknown role {self.role!r}: a message is 'user' or 'assistant' "
                "(the system prompt is passed separately)"
            )
        if not isinstance(self.content, str):
            raise InvalidMessage(
                f"message content must be a string, got {type(self.content).__name__}"
            )

    def as_dict(self) -> dict[str, str]:
        """The plain {role, content} form both provider APIs accept."""
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True)
class Turn:
    """One completed exchange: a user message and the reply it got (numbered from 1)."""

    index: int
    user: str
    assistant: str

    def messages(self) -> tuple[Message, Message]:
        """The turn as a user message followed by an assistant message."""
        return (Message("user", self.user), Message("assistant", self.assistant))


@dataclass(frozen=True)
class Usage:
    """Token usage as a provider billed it (input = prompt, output = completion)."""

    input: int | None = None
    output: int | None = None
    details: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class TokenCount:
    """Locally counted prompt tokens: message contents only, and with chat-template overhead."""

    content: int
    with_overhead: int
    encoding: str
    estimate: bool


@dataclass(frozen=True)
class Completion:
    """What a model function returns to the memory core: text, plus what the call cost if known."""

    text: str
    usage: Usage | None = None
    body: Mapping[str, Any] | None = None
    model: str | None = None
    # the callers one call answered, the one that sent it first (lanes/sharing.py); empty: this
    # caller's own call
    shared: tuple[str, ...] = ()


@dataclass(frozen=True)
class MaintenanceCall:
    """A model call a strategy made for its own upkeep (a summary, an extraction)."""

    kind: Literal["summary", "extraction"]
    request: Request
    reply: str | None
    tokens: TokenCount
    usage: Usage | None = None
    body: Mapping[str, Any] | None = None
    error: str | None = None
    shared: tuple[str, ...] = ()  # the Completion's `shared`
    # extraction: the values the reply gave that could not be traced to the turn and were not
    # stored, as key=JSON (memory/grounding.py)
    ungrounded: tuple[str, ...] = ()
    # extraction: facts the rule extractor filled in (stated in the turn, missing from the reply)
    filled_by_rules: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """True when the call returned and its result was used."""
        return self.error is None


# The parts a request is made of, in the order they are drawn: the system prompt, the known-facts
# block, the summary (with its note or its message pair), pinned turns (a composition's, always
# sent), turns recalled by relevance, recent turns sent verbatim, the new user message, and the
# chat template's framing tokens (an estimate, the same one `TokenCount.with_overhead` adds).
PARTS: tuple[str, ...] = (
    "system",
    "facts",
    "summary",
    "pinned",
    "retrieved",
    "recent",
    "new_message",
    "framing",
)


@dataclass(frozen=True)
class Part:
    """One part of a request: its tokens, and the history turns it holds (if any)."""

    name: str
    tokens: int
    turns: tuple[int, ...] = ()


@dataclass(frozen=True)
class Account:
    """What a strategy did to build a request: the UI shows this, it never recomputes it."""

    strategy: str
    turn: int
    kept_turns: tuple[int, ...] = ()
    dropped_turns: tuple[int, ...] = ()
    summarised_turns: tuple[int, ...] = ()
    retrieved_turns: tuple[int, ...] = ()
    summary: str | None = None
    facts: Mapping[str, Any] | None = None
    budget: int | None = None
    notes: tuple[str, ...] = ()
    # one Part per name in PARTS; their tokens add up to the request's `with_overhead` count
    # (and, without "framing", to its `content` count)
    parts: tuple[Part, ...] = ()


@dataclass(frozen=True)
class Request:
    """What goes to the model: system text, then messages ending with the new user message."""

    system: str
    messages: tuple[Message, ...]
    tokens: TokenCount
    account: Account | None = None
    maintenance: tuple[MaintenanceCall, ...] = ()
    # The reply is JSON of this shape (a JSON Schema), as upkeep calls ask for: a provider
    # that can hold its model to a shape or to JSON does so, the others rely on the prompt.
    reply_schema: Mapping[str, Any] | None = None


# A model function: the memory core hands it a Request and gets a Completion back.
# Providers adapt to this; tests pass plain fakes.
ModelFn = Callable[[Request], Completion]
