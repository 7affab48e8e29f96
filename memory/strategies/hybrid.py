"""Hybrid (seed 004's production shape): entity block + running summary + recent turns in a budget."""

from __future__ import annotations

from memory.strategies.entity import extract_facts
from memory.strategies.summary_buffer import SummaryBuffer
from memory.types import MaintenanceCall, Turn


class Hybrid(SummaryBuffer):
    """A summary buffer whose system text also carries the extracted facts (counted in the budget)."""

    name = "hybrid"
    title = "Hybrid"
    description = "Known-facts block + running summary + recent turns, all within one token budget."
    uses_facts = True

    def extra_maintenance(self, turn: Turn) -> list[MaintenanceCall]:
        return [extract_facts(self, turn)]
