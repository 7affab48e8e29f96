"""Summary buffer: recent turns verbatim within a token budget, older turns folded into a summary.

Unlike LangChain's ConversationSummaryBufferMemory, the summary's own tokens count against
the budget (a summary longer than half the room left by the system text is cut to fit, and
the cut is noted). After each turn, when the resting prompt (system text with summary, plus
the buffered turns) exceeds `trigger` x budget, the oldest turns are folded into the summary
until it is at most `fold_to` x budget: the prompt saw-tooths between the two marks
(fold_to = trigger folds only what it must, as LangChain does). A fold takes as many turns
as it needs counting on the summary's expected length (`expected_growth`), so one summary
call usually does it; a second follows only when the summary came out longer. Before a turn, if the new
message would push the request over the budget, the oldest buffered turns are folded (or, if
the summariser fails, left out). Only the system prompt and the new message must fit: if the
summary (or, for hybrid, the facts block) leaves no room for the message, it is left out of
that request and the account says so; it stays in memory for later turns.
"""

from __future__ import annotations

import math
from typing import Any

from memory.errors import ContextOverflow, InvalidParameter
from memory.strategies.base import Strategy
from memory.strategies.token_window import check_budget
from memory.types import MaintenanceCall, Request, Turn


class SummaryBuffer(Strategy):
    """Recent turns verbatim within `budget`; what falls out is summarised, not dropped."""

    name = "summary_buffer"
    title = "Summary buffer"
    description = (
        "Recent turns verbatim within a token budget; older ones folded into a running summary."
    )
    uses_summary = True

    def __init__(
        self, system_prompt: str, *, budget: int = 600, fold_to: float = 0.5, **options: Any
    ) -> None:
        super().__init__(system_prompt, **options)
        self.budget = check_budget(budget, self.counter.count(system_prompt))
        if not 0 < fold_to <= self.trigger:
            raise InvalidParameter(
                f"fold_to ({fold_to}) must be above 0 and at most the trigger ({self.trigger})"
            )
        self.fold_to = fold_to

    @property
    def threshold(self) -> int:
        """Resting tokens above which older turns are folded: floor(trigger x budget)."""
        return math.floor(self.trigger * self.budget)

    def summary_cap(self) -> int:
        """Half of what the budget leaves after the system text: the rest is for turns."""
        return max(1, (self.budget - self.counter.count(self.system_text(None))) // 2)

    def buffer(self) -> list[int]:
        """Turns not yet folded into the summary, oldest first."""
        return list(range(len(self.summarised) + 1, len(self.history) + 1))

    def resting_tokens(self) -> int:
        """System text (with summary and facts), summary messages and the buffered turns."""
        return (
            self.counter.count(self.system_text(self.summary))
            + self.counter.count_messages(self.summary_messages(self.summary))
            + self.history.tokens(self.buffer())
        )

    @property
    def low_water(self) -> int:
        """Once folding starts, it goes on until resting tokens are at most this."""
        return math.floor(self.fold_to * self.budget)

    def _after_turn(self, turn: Turn) -> list[MaintenanceCall]:
        calls = self.extra_maintenance(turn)
        if self.resting_tokens() > self.threshold:
            calls.extend(self.compress(self.low_water))
        return calls

    def extra_maintenance(self, turn: Turn) -> list[MaintenanceCall]:
        """Hook for subclasses that do more upkeep after a turn (hybrid: fact extraction)."""
        return []

    def compress(self, limit: int, *, reserve: int = 0) -> list[MaintenanceCall]:
        """Fold oldest buffered turns until resting tokens + `reserve` <= `limit` (or a fold fails)."""
        calls: list[MaintenanceCall] = []
        while self.resting_tokens() + reserve > limit and self.buffer():
            buffer = self.buffer()
            # fold the fewest oldest turns that bring the buffer under the limit (at least one),
            # counting on the summary growing as it is expected to: one fold call, not a
            # second one because the first one's summary took the room it freed
            excess = self.resting_tokens() + reserve + self.expected_growth() - limit
            count, freed = 0, 0
            while count < len(buffer) and freed < excess:
                freed += self.history.tokens([buffer[count]])
                count += 1
            call = self.fold(buffer[:count])
            calls.append(call)
            if not call.ok:
                break
        return calls

    def _build(self, user_text: str) -> Request:
        # only the system prompt and the new message are required; all else can give way
        needed = self.counter.count(self.system_prompt) + self.counter.count(user_text)
        if needed > self.budget:
            raise ContextOverflow(needed, self.budget, what="the system prompt and the new message")
        calls = self.compress(self.budget, reserve=self.counter.count(user_text))
        notes: list[str] = []
        with_summary = with_facts = True
        if self.fixed_tokens(user_text, self.summary) > self.budget:
            with_summary = False
            notes.append(
                "the summary was left out this turn: with it the new message would not fit "
                "the budget"
            )
            if self.fixed_tokens(user_text, None) > self.budget:
                with_facts = False
                notes.append("the known-facts block was left out this turn, for the same reason")
        summary = self.summary if with_summary else None
        room = self.budget - self.fixed_tokens(user_text, summary, facts=with_facts)
        kept = self.newest_fitting(self.buffer(), room)
        if len(kept) < len(self.buffer()) and not calls_ok(calls):
            notes.append("the summariser failed: the oldest buffered turns were left out this turn")
        elif len(kept) < len(self.buffer()):
            notes.append("the oldest buffered turns were left out this turn to fit the budget")
        return self.request(
            user_text,
            kept,
            budget=self.budget,
            maintenance=calls,
            notes=notes,
            with_summary=with_summary,
            with_facts=with_facts,
        )


def calls_ok(calls: list[MaintenanceCall]) -> bool:
    """True when every maintenance call of this turn succeeded."""
    return all(c.ok for c in calls)
