"""Full buffer: every earlier turn, verbatim (seed 000's ConversationBufferMemory)."""

from __future__ import annotations

from memory.strategies.base import Strategy
from memory.types import Request


class FullBuffer(Strategy):
    """Send the whole history on every call."""

    name = "full"
    title = "Full buffer"
    description = "Every earlier turn, verbatim. Perfect recall; the prompt grows every turn."

    def _build(self, user_text: str) -> Request:
        return self.request(user_text, range(1, len(self.history) + 1))
