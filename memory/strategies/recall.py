"""The retrieved block's index: every turn so far in a BM25 index with its tokens, and the
best-first packing of the ranked turns into a budget.

The composed engine (memory/strategies/composed.py) keeps one per running strategy; the
ranking itself is memory/bm25.py's. May import: memory/bm25.py and memory/types.py.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Container, Iterable

from memory.bm25 import BM25Index
from memory.types import Turn


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

    A running strategy keeps one and learns every turn into it; `pick` ranks the older turns
    against the new message and packs them into a budget."""

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
