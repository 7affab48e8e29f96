"""Retrieval: the last K turns plus the top-k older turns most relevant to the new message (BM25)."""

from __future__ import annotations

from typing import Any

from memory.bm25 import BM25Index
from memory.errors import InvalidParameter
from memory.strategies.base import Strategy
from memory.strategies.window import check_k
from memory.types import MaintenanceCall, Request, Turn


class Retrieval(Strategy):
    """Recent turns plus older turns recalled by keyword relevance; no model needed."""

    name = "retrieval"
    title = "Retrieval"
    description = "The last K turns plus the older turns that best match the new message (BM25)."

    def __init__(self, system_prompt: str, *, k: int = 2, top_k: int = 2, **options: Any) -> None:
        super().__init__(system_prompt, **options)
        self.k = check_k(k)
        self.top_k = check_k(top_k, "top_k")
        if self.top_k == 0 and self.k == 0:
            raise InvalidParameter("k and top_k are both 0: the strategy would send no history")
        self.index = BM25Index()

    def _build(self, user_text: str) -> Request:
        n = len(self.history)
        first_recent = max(1, n - self.k + 1) if self.k else n + 1
        older = first_recent - 1
        hits = self.index.search(user_text, max_id=older, top=self.top_k) if older else []
        retrieved = sorted(d for d, _ in hits)
        recent = list(range(first_recent, n + 1))
        notes = [f"turn {d}: BM25 score {s:.2f}" for d, s in sorted(hits)]
        return self.request(user_text, retrieved + recent, retrieved=retrieved, notes=notes)

    def _fork_extra(self, other: Strategy) -> None:
        assert isinstance(other, Retrieval)
        other.index = self.index.copy()

    def _after_turn(self, turn: Turn) -> list[MaintenanceCall]:
        self._restored_turn(turn)
        return []

    def _restored_turn(self, turn: Turn) -> None:
        self.index.add(turn.index, f"{turn.user}\n{turn.assistant}")
