"""Import a conversation from a file and replay it through any set of memory strategies.

Every file shape (messages JSON, text, ChatGPT/Claude.ai exports, ShareGPT, OpenAI JSONL,
LangChain, LangSmith, OpenTelemetry) is parsed by scenarios/transcripts/, the one transcript
parser; this module adds a Memory Lab session export (JSON: its user turns, and its own
records for restoring it) and the replay.
Parsing has no side effects, so a bad file changes nothing.

Two replay modes: ``fresh`` sends each user turn again (new replies from the model), and
``recorded`` keeps the transcript's replies — no model call for replies, only the strategies'
upkeep calls (summaries, extraction). Either way the result is a real `Session`, so the main
page, the sessions page, the store and the exports treat it like any conversation.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from engines import sessions
from engines.sessions import RunOptions
from lanes import session as session_module
from lanes.lane import ReplyLike
from lanes.session import Session, Transport
from memory.lane_spec import LaneSpec
from memory.standins import ExtractiveSummariser, RuleExtractor
from memory.types import Completion, ModelFn, Request, Usage
from providers.settings import ProviderSettings
from scenarios.transcripts import (
    FORMATS,
    MAX_CHARS,
    MAX_TURNS,
    Conversation,
    Source,
    Transcript,
    TranscriptError,
)
from scenarios.transcripts import list_conversations as _list
from scenarios.transcripts import parse as _parse
from scenarios.transcripts import read_all as _read_all
from storage.store import FORMAT, SessionFormatError, decode_export

__all__ = [
    "FORMATS",
    "FRESH",
    "Conversation",
    "MAX_CHARS",
    "MAX_TURNS",
    "MODES",
    "RECORDED",
    "Transcript",
    "TranscriptError",
    "list_conversations",
    "parse",
    "parse_all",
    "replay",
    "would_send",
]

FRESH, RECORDED = "fresh", "recorded"
MODES = (FRESH, RECORDED)


def parse(
    data: Source,
    *,
    name: str = "",
    conversation: int | str | None = None,
    keep_bad_lines: bool = False,
) -> Transcript:
    """Parse an uploaded file (scenarios/transcripts/), a Memory Lab export included; a file
    of many conversations needs `conversation` (its number from 1, or its id)."""
    return _parse(
        data,
        name=name,
        on_object=_export_or_none,
        conversation=conversation,
        keep_bad_lines=keep_bad_lines,
    )


def parse_all(data: Source, *, name: str = "", keep_bad_lines: bool = False) -> list[Transcript]:
    """Every conversation in the file (a Memory Lab export is one)."""
    return list(
        _read_all(data, name=name, on_object=_export_or_none, keep_bad_lines=keep_bad_lines)
    )


def list_conversations(
    data: Source, *, name: str = "", keep_bad_lines: bool = False
) -> list[Conversation]:
    """The file's pick list (streamed: a big export is listed one conversation at a time)."""
    return _list(data, name=name, on_object=_export_or_none, keep_bad_lines=keep_bad_lines)


def _export_or_none(data: Mapping[str, Any]) -> Transcript | None:
    return _from_export(data) if FORMAT in data else None


def _from_export(data: Mapping[str, Any]) -> Transcript:
    try:
        saved = decode_export(data)
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


class StandInUpkeep:
    """A transport whose upkeep calls are answered by the rule-based stand-ins (no model, no
    cost: usage 0); lane replies go to `base`. For importing with no provider to reach."""

    def __init__(self, base: Transport) -> None:
        self.base = base

    def stream(
        self, request: Request, settings: Any, on_delta: Callable[[str], None] | None = None
    ) -> ReplyLike:
        return self.base.stream(request, settings, on_delta)

    def as_model_fn(self, settings: Any) -> ModelFn:
        summarise, extract = ExtractiveSummariser(), RuleExtractor()

        def stand_in(request: Request) -> Completion:
            done = (extract if request.reply_schema else summarise)(request)
            return replace(done, usage=Usage(0, 0), model="stand-in")

        return stand_in


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
    lanes: Sequence[LaneSpec[ProviderSettings]],
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
    lean: bool = False,
) -> Session:
    """Run every user turn of `transcript` through `lanes`; returns the Session.

    `mode` is ``fresh`` (new replies from the model) or ``recorded`` (the transcript's
    replies; no model call except upkeep). `on_start(session)` runs before the first turn
    (track the session there to save each turn as it completes); `on_turn(done, total)`
    after each; `cancelled()` is checked before each turn (the turns so far are kept).
    `lean`: each record is kept in memory without its bodies once `on_start`'s tracker has
    saved it (an import read back from the store), so memory grows with the turns, not
    with their payloads."""
    if mode not in MODES:
        raise ValueError(f"mode is {FRESH!r} or {RECORDED!r}, got {mode!r}")
    base = transport or session_module.ProvidersTransport()
    recorded = RecordedTransport(base) if mode == RECORDED else None
    prompt = system_prompt if system_prompt is not None else transcript.system
    if not prompt:
        raise ValueError("the transcript has no system prompt: choose one")
    run = RunOptions(provider, maintenance, recorded or base, lean=lean)
    session = sessions.start(prompt, lanes, run, name=name)
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
