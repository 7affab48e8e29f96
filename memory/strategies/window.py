"""Sliding window: the last K turns (a turn = a user message and its reply), seed 002's deque.

Blocks: recent, count K. K=0 sends only the new message; older turns are dropped.
"""

from __future__ import annotations

from memory.compose import Block, Composition
from memory.strategies.checks import check_k
from memory.strategies.composed import Composed, blocks


class SlidingWindow(Composed):
    """Keep the last `k` turns; K=0 sends only the new message."""

    name = "window"
    title = "Sliding window"
    description = "The last K turns, verbatim; older turns are dropped. Flat cost, short memory."

    @classmethod
    def declare(cls, *, k: int = 3) -> Composition:
        return blocks(cls, Block("recent", count=check_k(k)))
