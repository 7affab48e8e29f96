"""Retrieval: the last K turns, plus older turns most relevant to the new message, in a budget.

Blocks: retrieved, then recent (count K). Older turns are ranked by BM25 (stemmed, stopwords
out; memory/bm25.py), each turn scored together with its neighbours (`neighbours` x their
scores), then packed best first into `recall_budget` tokens (0: no token cap) up to `top_k`
turns. A turn that does not fit the room left is skipped and the next one tried. Retrieved
turns are sent in conversation order before the recent ones and listed as retrieved in the
request's account, with their scores. No model needed.
"""

from __future__ import annotations

from memory.compose import Block, Composition
from memory.errors import InvalidParameter
from memory.ranking import DEFAULT_RANKING
from memory.strategies.checks import check_k, check_share
from memory.strategies.composed import Composed, blocks


class Retrieval(Composed):
    """Recent turns plus older turns recalled by keyword relevance; no model needed."""

    name = "retrieval"
    title = "Retrieval"
    description = (
        "The last K turns plus the older turns that best match the new message (BM25 with "
        "stemming, neighbour-aware), packed into a token budget."
    )

    @classmethod
    def declare(
        cls,
        *,
        k: int = 2,
        top_k: int = 200,
        recall_budget: int = 4000,
        neighbours: float = 0.25,
        ranking: str = DEFAULT_RANKING,
    ) -> Composition:
        check_k(k)
        if check_k(top_k, "top_k") == 0 and k == 0:
            raise InvalidParameter("k and top_k are both 0: the strategy would send no history")
        if isinstance(recall_budget, bool) or not isinstance(recall_budget, int):
            raise InvalidParameter(f"recall_budget is a number of tokens, got {recall_budget!r}")
        if recall_budget < 0:
            raise InvalidParameter(f"recall_budget cannot be negative, got {recall_budget}")
        retrieved = Block(
            "retrieved",
            top_k=top_k,
            budget=recall_budget or None,
            neighbours=check_share(neighbours, "neighbours", upper=1.0),
            ranking=ranking,
        )
        return blocks(cls, retrieved, Block("recent", count=k))
