"""Entity memory: facts extracted after each turn into a key/value store, plus the last K turns.

Blocks: the known-facts block ("Known facts about the user: {...}" in the system text, JSON
with sorted keys), then the last K turns (seed 004's entity strategy).
"""

from __future__ import annotations

from memory.compose import Block, Composition
from memory.strategies.checks import check_k
from memory.strategies.composed import Composed, blocks


class EntityMemory(Composed):
    """A 'Known facts' JSON block in the system text, plus the last `k` turns."""

    name = "entity"
    title = "Entity memory"
    description = "Facts extracted into a key/value store after each turn, plus the last K turns."

    @classmethod
    def declare(cls, *, k: int = 2, grounded: bool = True) -> Composition:
        return blocks(cls, Block("facts", grounded=grounded), Block("recent", count=check_k(k)))
