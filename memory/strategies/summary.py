"""Running summary: all earlier turns folded into one summary, updated after every turn."""

from __future__ import annotations

from memory.strategies.base import Strategy
from memory.types import MaintenanceCall, Request, Turn


class RunningSummary(Strategy):
    """Send the summary and the new message; turns whose fold failed stay verbatim until it works."""

    name = "summary"
    title = "Running summary"
    description = "A summary of all earlier turns, rewritten after each turn. Small, but lossy."
    uses_summary = True

    def pending(self) -> list[int]:
        """Turns not yet in the summary (only after a failed summary call)."""
        return list(range(len(self.summarised) + 1, len(self.history) + 1))

    def _build(self, user_text: str) -> Request:
        return self.request(user_text, self.pending())

    def _after_turn(self, turn: Turn) -> list[MaintenanceCall]:
        return [self.fold(self.pending())]
