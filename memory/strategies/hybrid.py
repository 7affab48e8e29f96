"""Hybrid (seed 004's production shape): entity block + running summary + recent turns in a budget.

It also carries a retrieved block inside the same budget: up to `recall_share` x budget
tokens of older turns (ones no longer sent verbatim) that best match the new message (BM25,
neighbour-aware, as the retrieval strategy ranks them). Room for them is taken from the
oldest recent turns, so the request never grows past the budget; with `recall_share` 0 the
strategy is the summary buffer plus facts.
"""

from __future__ import annotations

import math
from typing import Any

from memory.strategies.base import Strategy
from memory.strategies.entity import extract_facts
from memory.strategies.retrieval import TurnRecall, check_share
from memory.strategies.summary_buffer import SummaryBuffer
from memory.types import MaintenanceCall, Request, Turn


class Hybrid(SummaryBuffer):
    """A summary buffer whose system text also carries the extracted facts (counted in the budget)."""

    name = "hybrid"
    title = "Hybrid"
    description = (
        "Known-facts block + running summary + recent turns, plus older turns retrieved by "
        "relevance, all within one token budget."
    )
    uses_facts = True

    def __init__(
        self,
        system_prompt: str,
        *,
        recall_share: float = 0.5,
        neighbours: float = 0.25,
        **options: Any,
    ) -> None:
        super().__init__(system_prompt, **options)
        self.recall_share = check_share(recall_share, "recall_share", upper=0.9)
        self.neighbours = check_share(neighbours, "neighbours", upper=1.0)
        self.recall = TurnRecall()

    def extra_maintenance(self, turn: Turn) -> list[MaintenanceCall]:
        self._restored_turn(turn)
        return [extract_facts(self, turn)]

    def _restored_turn(self, turn: Turn) -> None:
        self.recall.learn(turn, self.history.tokens([turn.index]))

    def _fork_extra(self, other: Strategy) -> None:
        assert isinstance(other, Hybrid)
        other.recall = self.recall.copy()

    def _build(self, user_text: str) -> Request:
        request = super()._build(user_text)
        account = request.account
        assert account is not None
        recent = list(account.kept_turns)
        older = (recent[0] if recent else len(self.history) + 1) - 1
        fixed = request.tokens.content - self.history.tokens(recent)
        room = min(math.floor(self.recall_share * self.budget), self.budget - fixed)
        if room <= 0 or older <= 0:
            return request
        hits = self.recall.pick(
            user_text, older=older, neighbours=self.neighbours, budget=room, limit=older
        )
        if not hits:
            return request
        retrieved = [d for d, _ in hits]
        extra = self.history.tokens(retrieved)
        spare = self.budget - request.tokens.content
        while recent and extra > spare:  # make room: the oldest recent turns give way
            spare += self.history.tokens([recent.pop(0)])
        notes = [*account.notes, *(f"turn {d}: retrieved, score {s:.2f}" for d, s in hits)]
        notes.append(f"retrieved block: {extra} of {room} tokens")
        return self.request(
            user_text,
            retrieved + recent,
            budget=self.budget,
            retrieved=retrieved,
            maintenance=request.maintenance,
            notes=[n for n in notes if not n.startswith("the summary was cut")],
            # keep out what the summary buffer left out to fit the new message
            with_summary=bool(account.summary) or not self.summary,
            with_facts=bool(account.facts) or not self.facts,
        )
