"""Token window: the newest whole turns that fit a token budget (system and new message counted).

Blocks: recent with no count, under an overall `budget`; the recent turns give way (oldest
first) to fit it. Counts tokens, not messages (seed 002's gotcha).
"""

from __future__ import annotations

from memory.compose import Block, Composition
from memory.strategies.checks import check_tokens
from memory.strategies.composed import Composed, blocks


class TokenWindow(Composed):
    """Keep the newest whole turns whose tokens, with system prompt and new message, fit `budget`."""

    name = "token_window"
    title = "Token window"
    description = "The newest whole turns that fit a token budget. Counts tokens, not messages."

    @classmethod
    def declare(cls, *, budget: int = 600) -> Composition:
        return blocks(cls, Block("recent"), budget=check_tokens(budget), give_way=("recent",))
