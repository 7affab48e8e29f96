"""Full buffer: every earlier turn, verbatim (seed 000's ConversationBufferMemory).

Blocks: one recent block with no limit. Perfect recall; the prompt grows every turn.
"""

from __future__ import annotations

from memory.compose import Block, Composition
from memory.strategies.composed import Composed, blocks


class FullBuffer(Composed):
    """Send the whole history on every call."""

    name = "full"
    title = "Full buffer"
    description = "Every earlier turn, verbatim. Perfect recall; the prompt grows every turn."

    @classmethod
    def declare(cls) -> Composition:
        return blocks(cls, Block("recent"))
