"""Replay a recorded transcript through strategies with no model for the replies.

Replies are the transcript's own where it has them, else a filler text of exactly
`reply_tokens` tokens (seed 000's "every reply is 80 tokens" simulation). Maintenance
calls still go to the strategies' own summariser/extractor functions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from memory.strategies.base import Strategy, check_user_text
from memory.tokens import TokenCounter
from memory.types import MaintenanceCall, Request

# A transcript entry: a user message, or (user message, recorded reply or None).
Entry = str | tuple[str, str | None]


@dataclass(frozen=True)
class ReplayStep:
    """One replayed turn: the user message, the reply used, and each strategy's request."""

    turn: int
    user: str
    reply: str
    requests: Mapping[str, Request]
    maintenance: Mapping[str, tuple[MaintenanceCall, ...]]


@dataclass(frozen=True)
class GrowthRow:
    """One row of seed 000's growth table."""

    turn: int
    message_tokens: int
    history_tokens: int
    prompt_tokens: int
    sent_so_far: int


def replay(
    transcript: Sequence[Entry],
    strategies: Mapping[str, Strategy],
    *,
    counter: TokenCounter,
    reply_tokens: int = 80,
) -> list[ReplayStep]:
    """Feed every user turn through every strategy; returns the requests per turn."""
    lanes: dict[str, Strategy] = {}
    for name, strategy in strategies.items():
        if not isinstance(strategy, Strategy):
            raise TypeError(f"{name!r} is not a Strategy")
        lanes[name] = strategy
    filler = counter.text_of_tokens(reply_tokens)
    steps: list[ReplayStep] = []
    for number, entry in enumerate(transcript, start=1):
        user, recorded = (entry, None) if isinstance(entry, str) else entry
        check_user_text(user)
        reply = recorded if recorded is not None else filler
        requests: dict[str, Request] = {}
        calls: dict[str, tuple[MaintenanceCall, ...]] = {}
        for name, strategy in lanes.items():
            request = strategy.prepare(user)
            requests[name] = request
            calls[name] = request.maintenance + strategy.commit(user, reply)
        steps.append(ReplayStep(number, user, reply, requests, calls))
    return steps


def growth_table(
    steps: Sequence[ReplayStep], strategy: str, counter: TokenCounter
) -> list[GrowthRow]:
    """Seed 000's table for one strategy: message, history, prompt and running total tokens."""
    rows: list[GrowthRow] = []
    total = 0
    for step in steps:
        request = step.requests[strategy]
        prompt = request.tokens.content
        total += prompt
        history = prompt - counter.count(request.system)
        rows.append(GrowthRow(step.turn, counter.count(step.user), history, prompt, total))
    return rows


def growth_factor(rows: Sequence[GrowthRow]) -> float:
    """Last prompt over first prompt."""
    return rows[-1].prompt_tokens / rows[0].prompt_tokens if rows else 0.0
