"""Sliding window: the last K turns (a turn = a user message and its reply)."""

from __future__ import annotations

from typing import Any

from memory.errors import InvalidParameter
from memory.strategies.base import Strategy
from memory.types import Request


def check_k(k: Any, name: str = "k") -> int:
    """A non-negative whole number of turns."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise InvalidParameter(f"{name} is a number of turns, 0 or more; got {k!r}")
    return k


class SlidingWindow(Strategy):
    """Keep the last `k` turns; K=0 sends only the new message."""

    name = "window"
    title = "Sliding window"
    description = "The last K turns, verbatim; older turns are dropped. Flat cost, short memory."

    def __init__(self, system_prompt: str, *, k: int = 3, **options: Any) -> None:
        super().__init__(system_prompt, **options)
        self.k = check_k(k)

    def _build(self, user_text: str) -> Request:
        n = len(self.history)
        return self.request(user_text, range(max(1, n - self.k + 1), n + 1) if self.k else ())
