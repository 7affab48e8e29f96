"""Running summary: all earlier turns folded into one summary, updated after every turn.

Blocks: a summary folded every turn ("every_turn"), then the turns not yet in it (only after
a failed summary call: they stay verbatim until a fold works). Small, but lossy (seed 002).
"""

from __future__ import annotations

from memory.compose import Block, Composition
from memory.strategies.checks import check_placement
from memory.strategies.composed import Composed, blocks


class RunningSummary(Composed):
    """Send the summary and the new message; turns whose fold failed stay verbatim until it works."""

    name = "summary"
    title = "Running summary"
    description = "A summary of all earlier turns, rewritten after each turn. Small, but lossy."

    @classmethod
    def declare(
        cls, *, summary_placement: str = "system", summary_note: bool = False
    ) -> Composition:
        check_placement(summary_placement)
        summary = Block("summary", placement=summary_placement, note=summary_note)
        return blocks(cls, summary, Block("recent"))
