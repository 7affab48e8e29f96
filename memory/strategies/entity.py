"""Entity memory: facts extracted after each turn into a key/value store, plus the last K turns."""

from __future__ import annotations

from typing import Any

from memory.strategies.base import Strategy
from memory.strategies.window import check_k
from memory.types import MaintenanceCall, Request, Turn


def extract_facts(strategy: Strategy, turn: Turn) -> MaintenanceCall:
    """Ask the extractor for updates from `turn` and apply them; invalid replies change nothing."""
    call, update = strategy.upkeep.extraction(strategy.counter, strategy.facts, turn)
    if update is not None:
        to_set, to_delete = update
        for key in to_delete:
            strategy.facts.pop(key, None)
        strategy.facts.update(to_set)
    return call


class EntityMemory(Strategy):
    """A 'Known facts' JSON block in the system text, plus the last `k` turns."""

    name = "entity"
    title = "Entity memory"
    description = "Facts extracted into a key/value store after each turn, plus the last K turns."
    uses_facts = True

    def __init__(self, system_prompt: str, *, k: int = 2, **options: Any) -> None:
        super().__init__(system_prompt, **options)
        self.k = check_k(k)

    def _build(self, user_text: str) -> Request:
        n = len(self.history)
        return self.request(user_text, range(max(1, n - self.k + 1), n + 1) if self.k else ())

    def _after_turn(self, turn: Turn) -> list[MaintenanceCall]:
        return [extract_facts(self, turn)]
