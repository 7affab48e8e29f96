"""Hybrid (seed 004's production shape): entity block + running summary + recent turns in a budget.

Blocks: known facts, a "threshold" summary (as summary_buffer's), turns retrieved by relevance
in up to `recall_share` x budget (older turns no longer sent verbatim that best match the new
message: BM25, neighbour-aware, as the retrieval strategy ranks them), then the recent turns,
all under one `budget`. Room for retrieved turns is taken from the oldest recent turns, so the
request never grows past the budget; when it is tight the recent turns give way first, then
the retrieved ones, the summary, the facts. With `recall_share` 0 it is the summary buffer
plus facts.
"""

from __future__ import annotations

from memory.compose import Block, Composition
from memory.ranking import DEFAULT_RANKING
from memory.strategies.checks import check_share, check_tokens
from memory.strategies.composed import Composed, blocks
from memory.strategies.summary_buffer import threshold_summary


class Hybrid(Composed):
    """A summary buffer whose system text also carries the extracted facts (counted in the budget)."""

    name = "hybrid"
    title = "Hybrid"
    description = (
        "Known-facts block + running summary + recent turns, plus older turns retrieved by "
        "relevance, all within one token budget."
    )

    @classmethod
    def declare(
        cls,
        *,
        budget: int = 800,
        trigger: float = 0.8,
        fold_to: float = 0.5,
        summary_placement: str = "system",
        summary_note: bool = False,
        recall_share: float = 0.5,
        neighbours: float = 0.25,
        ranking: str = DEFAULT_RANKING,
        grounded: bool = True,
    ) -> Composition:
        summary = threshold_summary(trigger, fold_to, summary_placement, summary_note)
        retrieved = Block(
            "retrieved",
            share=check_share(recall_share, "recall_share", upper=0.9),
            neighbours=check_share(neighbours, "neighbours", upper=1.0),
            ranking=ranking,
        )
        return blocks(
            cls,
            Block("facts", grounded=grounded),
            summary,
            retrieved,
            Block("recent"),
            budget=check_tokens(budget),
            give_way=("recent", "retrieved", "summary", "facts"),
        )
