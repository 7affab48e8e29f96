"""The Composer page's live preview: a composition (registered or not) replayed on a
conversation with no model, and the request it would send at the latest turn.

No Streamlit here. The conversation is the main page's (its first lane's replies) or the
FinCoach demo (80-token stand-in replies, as seed 000's table); summaries and fact
extraction are done by the survival lab's rule-based stand-ins, so previewing never calls a
model. Each previewed strategy comes back as a LaneTurn, so the main page's anatomy figure
draws the composition's token split by block next to the strategies it is compared with.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engines.transcripts import would_send
from lanes.lane import OK, LaneTurn, MaintenanceRecord, TurnAccount
from lanes.session import Session
from memory.compose import Composition
from memory.errors import MemoryLabError
from memory.lane_spec import LaneSpec
from memory.maintenance import Upkeep
from memory.registry import create
from memory.replay import Entry, replay
from memory.standins import ExtractiveSummariser, RuleExtractor, fixed_reply
from memory.strategies.base import Strategy
from memory.strategies.composed import composed_class
from memory.tokens import TokenCounter
from memory.types import Request
from scenarios import fincoach

DEMO = "the FinCoach demo (5 turns, 80-token replies)"


@dataclass(frozen=True)
class Conversation:
    """What the preview replays: user messages with their replies (None: a stand-in)."""

    entries: tuple[Entry, ...]
    system_prompt: str
    source: str


@dataclass(frozen=True)
class Shown:
    """One previewed strategy at the latest turn: its record for the figures, or its error."""

    key: str
    title: str
    record: LaneTurn | None
    request: Request | None
    error: str | None = None


def conversation_of(session: Session | None) -> Conversation:
    """The main page's conversation when it has turns, else the FinCoach demo."""
    if session is None or not session.turn:
        return Conversation(tuple(fincoach.DEMO_TURNS), fincoach.SYSTEM_PROMPT, DEMO)
    lane = next(iter(session.lanes.values()))
    replies = {r.turn: r.reply for r in lane.turns if r.status == OK}
    entries = tuple(
        (user, replies.get(turn) or fixed_reply(turn))
        for turn, user in enumerate(session.user_turns, start=1)
    )
    source = f"the main page's conversation ({session.turn} turns, replies of {lane.title})"
    return Conversation(entries, session.system_prompt, source)


def record_of(key: str, turn: int, user: str, request: Request, calls: Any, body: Any) -> LaneTurn:
    """A lane's record of `request` (turn numbers are conversation turns: nothing skipped)."""
    acc = request.account
    account = TurnAccount()
    if acc is not None:
        account = TurnAccount(
            kept=acc.kept_turns,
            dropped=acc.dropped_turns,
            summarised=acc.summarised_turns,
            retrieved=acc.retrieved_turns,
            summary=acc.summary,
            facts=dict(acc.facts) if acc.facts is not None else None,
            budget=acc.budget,
            notes=acc.notes,
            parts=acc.parts,
        )
    return LaneTurn(
        key,
        turn,
        user,
        OK,
        body=body,
        n_messages=len(request.messages) + 1,
        counted=request.tokens.content,
        counted_overhead=request.tokens.with_overhead,
        estimate=request.tokens.estimate,
        account=account,
        maintenance=tuple(MaintenanceRecord.of(c) for c in calls),
    )


def _show(key: str, title: str, build: Any, conv: Conversation, settings: Any) -> Shown:
    counter = TokenCounter.for_model(getattr(settings, "model", None))
    try:
        strategy: Strategy = build(counter)
        steps = replay(list(conv.entries), {key: strategy}, counter=counter)
    except (MemoryLabError, ValueError) as exc:
        return Shown(key, title, None, None, str(exc))
    last = steps[-1]
    request = last.requests[key]
    body = would_send(request, settings)
    record = record_of(key, last.turn, last.user, request, request.maintenance, body)
    return Shown(key, title, record, request)


def preview(
    composition: Composition,
    conv: Conversation,
    settings: Any,
    compare: Sequence[LaneSpec] = (),
) -> list[Shown]:
    """The composition first, then each strategy in `compare`, at the conversation's latest
    turn (a strategy that cannot run says why in its `error`)."""
    upkeep = Upkeep(ExtractiveSummariser(), RuleExtractor())
    cls = composed_class(composition)
    title = cls.title
    shown = [
        _show(
            composition.name,
            f"{title} (this composition)",
            lambda c: cls(conv.system_prompt, counter=c, upkeep=upkeep),
            conv,
            settings,
        )
    ]
    for choice in compare:
        key = f"compare: {choice.label}"
        if key in {s.key for s in shown}:
            continue
        shown.append(
            _show(
                key,
                choice.label,
                lambda c, ch=choice: create(
                    ch.name,
                    conv.system_prompt,
                    counter=c,
                    upkeep=Upkeep(ExtractiveSummariser(), RuleExtractor()),
                    params=ch.params,
                ),
                conv,
                settings,
            )
        )
    return shown
