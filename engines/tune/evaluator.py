"""What the search asks of a conversation: for one LaneSpec, how much is kept and what
it costs. The search (search.py) knows nothing else about the conversation.

An `Evaluator` measures a setting payload-only (no model; upkeep by the rule-based
stand-ins), deterministically, and says how far each kind of size parameter may go on its
conversation (`room`): token budgets up to what the full buffer sends, turn counts up to the
conversation's length. facts.py and questions.py hold the evaluators.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

from memory.lane_spec import LaneSpec
from memory.registry import Param
from memory.tokens import TokenCounter

DEFAULT_SYSTEM = "You are a helpful assistant."  # for a transcript that has no system prompt


@dataclass(frozen=True)
class Point:
    """One judged point: a fact at a probe turn (total 1), or a question's evidence turns."""

    turn: int  # the probe turn N, or the turn a question is asked after
    kept: int
    total: int
    error: str | None = None


@dataclass(frozen=True)
class Measure:
    """One setting on one conversation: its points, its cost, and its largest request."""

    points: tuple[Point, ...]
    cost: float  # tokens per turn (facts) or per request at the question points (questions)
    peak_tokens: int = 0  # the largest request it sent (the full buffer's sets the caps)
    error: str | None = None  # the setting could not run at all (e.g. a budget too small)

    def judged(self, at: Sequence[int]) -> tuple[Point, ...]:
        """The points the target looks at: those at the turns `at` (all when empty)."""
        return tuple(p for p in self.points if not at or p.turn in at)


def is_token_amount(param: Param) -> bool:
    """A whole-number parameter counted in tokens (budget, recall_budget, a block's budget);
    the others count turns or items (k, top_k)."""
    return param.name == "budget" or param.name.endswith("budget") or "tokens" in param.name


class Evaluator(ABC):
    """A conversation with what must be kept in it; measures one setting at a time.

    Subclasses set `what` (what `kept` counts), `cost` (what the cost measures),
    `system_prompt`, `counter` and `last_turn`, and implement `measure` and `describe`."""

    what: str
    cost: str
    system_prompt: str
    counter: TokenCounter
    last_turn: int

    @abstractmethod
    def measure(self, choice: LaneSpec) -> Measure:
        """Run `choice` over the conversation payload-only and judge every point."""

    @abstractmethod
    def describe(self) -> str:
        """One line naming the conversation and what is judged, for tables and exports."""

    @property
    @abstractmethod
    def judged_turns(self) -> tuple[int, ...]:
        """The turns with points (a target's `at` must name some of these)."""

    def notes(self, strategies: Sequence[str]) -> list[str]:
        """Notes for the result (e.g. that upkeep was done by stand-ins)."""
        return []

    def full_tokens(self) -> int:
        """The largest request the full buffer sends here, plus a margin: room to keep all."""
        if not hasattr(self, "_full_tokens"):
            self._full_tokens = self.measure(LaneSpec("full")).peak_tokens + 64
        return self._full_tokens

    def room(self, param: Param) -> tuple[int | None, int]:
        """(lowest, highest) value worth trying for a whole-number parameter.

        Token amounts go up to twice `full_tokens()` (strategies that fold before their budget
        is full need more than the full buffer's size to keep all) and start at 1 (0 means
        "no cap" for some); a whole-prompt budget starts just above the system prompt (less
        cannot hold a message). Counts go from their minimum to the conversation's length."""
        if is_token_amount(param):
            low = max(1, int(param.minimum or 0))
            if param.name == "budget":
                low = self.counter.count(self.system_prompt) + 16
            return low, 2 * self.full_tokens()
        return None, self.last_turn
