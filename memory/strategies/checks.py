"""The parameter checks the built-in declarations share; their messages name the built-ins'
parameters (`k`, `budget`, `recall_share`, ...) rather than a block's fields.

May import: memory/errors.py only.
"""

from __future__ import annotations

from typing import Any

from memory.errors import InvalidParameter


def check_k(k: Any, name: str = "k") -> int:
    """A non-negative whole number of turns."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise InvalidParameter(f"{name} is a number of turns, 0 or more; got {k!r}")
    return k


def check_tokens(budget: Any, name: str = "budget") -> int:
    """A positive whole number of tokens."""
    if isinstance(budget, bool) or not isinstance(budget, int) or budget <= 0:
        raise InvalidParameter(f"{name} is a positive number of tokens; got {budget!r}")
    return budget


def check_budget(budget: Any, system_tokens: int) -> int:
    """A whole-number budget larger than the system prompt alone."""
    check_tokens(budget)
    if budget <= system_tokens:
        raise InvalidParameter(
            f"budget {budget} is not larger than the system prompt ({system_tokens} tokens): "
            "nothing else would fit"
        )
    return int(budget)


def check_share(value: Any, name: str, *, upper: float) -> float:
    """A number in [0, upper]."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= upper:
        raise InvalidParameter(f"{name} is a number from 0 to {upper}, got {value!r}")
    return float(value)


def check_fold(trigger: Any, fold_to: Any) -> None:
    """A threshold summary's marks: 0 < fold_to <= trigger <= 1."""
    if isinstance(trigger, bool) or not isinstance(trigger, int | float) or not 0 < trigger <= 1:
        raise InvalidParameter(f"trigger is a fraction of the budget in (0, 1], got {trigger}")
    if isinstance(fold_to, bool) or not isinstance(fold_to, int | float):
        raise InvalidParameter(f"fold_to is a fraction of the budget, got {fold_to!r}")
    if not 0 < fold_to <= trigger:
        raise InvalidParameter(
            f"fold_to ({fold_to}) must be above 0 and at most the trigger ({trigger})"
        )


def check_placement(placement: Any) -> None:
    """Where a summary goes: in the system text or as a message pair."""
    if placement not in ("system", "message"):
        raise InvalidParameter("summary_placement is 'system' or 'message'")
