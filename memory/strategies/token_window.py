"""Token window: the newest whole turns that fit a token budget (system and new message counted)."""

from __future__ import annotations

from typing import Any

from memory.errors import InvalidParameter
from memory.strategies.base import Strategy
from memory.types import Request


def check_budget(budget: Any, system_tokens: int) -> int:
    """A whole-number budget larger than the system prompt alone."""
    if isinstance(budget, bool) or not isinstance(budget, int) or budget <= 0:
        raise InvalidParameter(f"budget is a positive number of tokens; got {budget!r}")
    if budget <= system_tokens:
        raise InvalidParameter(
            f"budget {budget} is not larger than the system prompt ({system_tokens} tokens): "
            "nothing else would fit"
        )
    return budget


class TokenWindow(Strategy):
    """Keep the newest whole turns whose tokens, with system prompt and new message, fit `budget`."""

    name = "token_window"
    title = "Token window"
    description = "The newest whole turns that fit a token budget. Counts tokens, not messages."

    def __init__(self, system_prompt: str, *, budget: int = 600, **options: Any) -> None:
        super().__init__(system_prompt, **options)
        self.budget = check_budget(budget, self.counter.count(system_prompt))

    def _build(self, user_text: str) -> Request:
        self.check_fits(user_text, None, self.budget)
        room = self.budget - self.fixed_tokens(user_text, None)
        kept = self.newest_fitting(range(1, len(self.history) + 1), room)
        return self.request(user_text, kept, budget=self.budget)
