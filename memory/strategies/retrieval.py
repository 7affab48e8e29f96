"""Retrieval: the last K turns, plus older turns most relevant to the new message, in a budget.

Older turns are ranked by BM25 (stemmed, stopwords out; memory/bm25.py), each turn scored
together with its neighbours (`neighbours` x their scores), then packed best first into
`recall_budget` tokens (0: no token cap) up to `top_k` turns. A turn that does not fit the
room left is skipped and the next one tried. Retrieved turns are sent in conversation order
before the recent ones and listed as retrieved in the request's account, with their scores.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Container, Iterable, Sequence
from itertools import chain
from typing import Any

from memory.bm25 import BM25Index
from memory.errors import InvalidParameter
from memory.strategies.base import Strategy
from memory.strategies.window import check_k
from memory.types import MaintenanceCall, Request, Turn


def check_share(value: Any, name: str, *, upper: float) -> float:
    """A number in [0, upper]."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= upper:
        raise InvalidParameter(f"{name} is a number from 0 to {upper}, got {value!r}")
    return float(value)


def pack(
    ranked: Iterable[tuple[int, float]],
    cost: Callable[[int], int],
    *,
    budget: int,
    limit: int,
    smallest: int = 1,
) -> list[tuple[int, float]]:
    """Best-first greedy packing: take each ranked turn whose tokens fit the room left.

    `cost(turn)` gives a turn's tokens; `budget` 0 means no token cap; at most `limit` turns.
    Stops once the room left is below `smallest` (no turn is smaller), so the ranking is
    consumed only as far as it is needed."""
    taken: list[tuple[int, float]] = []
    used = 0
    for doc_id, score in ranked:
        if len(taken) >= limit or (budget and budget - used < smallest):
            break
        tokens = cost(doc_id)
        if budget and used + tokens > budget:
            continue
        taken.append((doc_id, score))
        used += tokens
    return taken


class TurnRecall:
    """Older turns to recall by relevance: every turn so far in a BM25 index, with its tokens.

    The retrieval, hybrid and composed strategies each keep one and learn every turn into it;
    `pick` ranks the older turns against the new message and packs them into a budget."""

    def __init__(self) -> None:
        self.index = BM25Index()
        self.smallest = 0  # tokens of the smallest turn so far (packing stops below it)
        self.tokens: list[int] = [0]  # tokens[i]: tokens of turn i

    def learn(self, turn: Turn, tokens: int, *, indexed: bool = True) -> None:
        """Count the next turn's `tokens`; index its text unless `indexed` is False."""
        self.tokens.append(tokens)
        self.smallest = min(self.smallest, tokens) if turn.index > 1 else tokens
        if indexed:
            self.index.add(turn.index, f"{turn.user}\n{turn.assistant}")

    def copy(self) -> TurnRecall:
        """An independent copy (for a strategy's fork)."""
        other = copy.copy(self)
        other.index = self.index.copy()
        other.tokens = list(self.tokens)
        return other

    def pick(
        self,
        user_text: str,
        *,
        older: int,
        neighbours: float,
        budget: int,
        limit: int,
        skip: Container[int] = (),
    ) -> list[tuple[int, float]]:
        """Turns 1..older (none in `skip`) best matching `user_text`, packed best first into
        `budget` tokens (0: no token cap), at most `limit`; (turn, score) in turn order."""
        ranked = self.index.best(user_text, max_id=older, neighbours=neighbours)
        if skip:
            ranked = (hit for hit in ranked if hit[0] not in skip)
        taken = pack(
            ranked, self.tokens.__getitem__, budget=budget, limit=limit, smallest=self.smallest
        )
        return sorted(taken)


class Retrieval(Strategy):
    """Recent turns plus older turns recalled by keyword relevance; no model needed."""

    name = "retrieval"
    title = "Retrieval"
    description = (
        "The last K turns plus the older turns that best match the new message (BM25 with "
        "stemming, neighbour-aware), packed into a token budget."
    )

    def __init__(
        self,
        system_prompt: str,
        *,
        k: int = 2,
        top_k: int = 200,
        recall_budget: int = 4000,
        neighbours: float = 0.25,
        **options: Any,
    ) -> None:
        super().__init__(system_prompt, **options)
        self.k = check_k(k)
        self.top_k = check_k(top_k, "top_k")
        if self.top_k == 0 and self.k == 0:
            raise InvalidParameter("k and top_k are both 0: the strategy would send no history")
        if isinstance(recall_budget, bool) or not isinstance(recall_budget, int):
            raise InvalidParameter(f"recall_budget is a number of tokens, got {recall_budget!r}")
        if recall_budget < 0:
            raise InvalidParameter(f"recall_budget cannot be negative, got {recall_budget}")
        self.recall_budget = recall_budget
        self.neighbours = check_share(neighbours, "neighbours", upper=1.0)
        self.recall = TurnRecall()

    def retrieve(self, user_text: str, older: int) -> list[tuple[int, float]]:
        """The retrieved turns among 1..older with their scores, in conversation order."""
        if older <= 0 or self.top_k == 0:
            return []
        return self.recall.pick(
            user_text,
            older=older,
            neighbours=self.neighbours,
            budget=self.recall_budget,
            limit=self.top_k,
        )

    def _build(self, user_text: str) -> Request:
        n = len(self.history)
        first_recent = max(1, n - self.k + 1) if self.k else n + 1
        hits = self.retrieve(user_text, first_recent - 1)
        retrieved = [d for d, _ in hits]
        recent = list(range(first_recent, n + 1))
        notes = [f"turn {d}: retrieved, score {s:.2f}" for d, s in hits]
        if self.recall_budget and hits:
            used = sum(map(self.recall.tokens.__getitem__, retrieved))
            notes.append(f"retrieved block: {used} of {self.recall_budget} tokens")
        return self.request(user_text, retrieved + recent, retrieved=retrieved, notes=notes)

    def _dropped(self, verbatim: Sequence[int]) -> tuple[int, ...]:
        """Turns not sent, built from ranges between the sent ones (C-speed, no per-turn set)."""
        gaps: list[range] = []
        start = 1
        for i in verbatim:
            if i > start:
                gaps.append(range(start, i))
            start = i + 1
        gaps.append(range(start, len(self.history) + 1))
        return tuple(chain.from_iterable(gaps))

    def _fork_extra(self, other: Strategy) -> None:
        assert isinstance(other, Retrieval)
        other.recall = self.recall.copy()

    def _after_turn(self, turn: Turn) -> list[MaintenanceCall]:
        self._restored_turn(turn)
        return []

    def _restored_turn(self, turn: Turn) -> None:
        self.recall.learn(turn, self.history.tokens([turn.index]))
