"""Summary buffer: recent turns verbatim within a token budget, older turns folded into a summary.

Blocks: a "threshold" summary, then the recent turns, under one overall `budget`; the recent
turns give way first, then the summary. Unlike LangChain's ConversationSummaryBufferMemory,
the summary's own tokens count against the budget (one longer than half the room the system
text leaves is cut to fit, and the cut is noted). After each turn, when the resting prompt
(system text with summary, plus the unsummarised turns) passes `trigger` x budget, the
oldest turns are folded into the summary until it is at most `fold_to` x budget: the prompt
saw-tooths between the two marks (fold_to = trigger folds only what it must, as LangChain
does). Before a turn, if the new message would push the request over the budget, the oldest
turns are folded (or, if the summariser fails, left out). Only the system prompt and the new
message must fit: a summary that leaves no room for the message is left out of that request
(the account says so) and stays in memory for later turns.
"""

from __future__ import annotations

from memory.compose import Block, Composition
from memory.strategies.checks import check_fold, check_placement, check_tokens
from memory.strategies.composed import Composed, blocks


def threshold_summary(trigger: float, fold_to: float, placement: str, note: bool) -> Block:
    """The checked "threshold" summary block this strategy and hybrid both declare."""
    check_placement(placement)
    check_fold(trigger, fold_to)
    return Block(
        "summary",
        policy="threshold",
        trigger=trigger,
        fold_to=fold_to,
        placement=placement,
        note=note,
    )


class SummaryBuffer(Composed):
    """Recent turns verbatim within `budget`; what falls out is summarised, not dropped."""

    name = "summary_buffer"
    title = "Summary buffer"
    description = (
        "Recent turns verbatim within a token budget; older ones folded into a running summary."
    )

    @classmethod
    def declare(
        cls,
        *,
        budget: int = 600,
        trigger: float = 0.8,
        fold_to: float = 0.5,
        summary_placement: str = "system",
        summary_note: bool = False,
    ) -> Composition:
        return blocks(
            cls,
            threshold_summary(trigger, fold_to, summary_placement, summary_note),
            Block("recent"),
            budget=check_tokens(budget),
            give_way=("recent", "summary"),
        )
