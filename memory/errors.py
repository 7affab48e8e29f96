"""Errors raised by the memory core, each with a message a person can act on."""

from __future__ import annotations


class MemoryLabError(Exception):
    """Base of every error the memory core raises on purpose."""


class InvalidMessage(MemoryLabError, ValueError):
    """A message that cannot be sent: empty, not text, or with an unknown role."""


class UnknownStrategy(MemoryLabError, KeyError):
    """A strategy name that is not in the registry."""

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0]) if self.args else "unknown strategy"


class InvalidParameter(MemoryLabError, ValueError):
    """A strategy parameter outside its allowed range or of the wrong type."""


class DuplicateStrategy(MemoryLabError, ValueError):
    """A second strategy registered under a name that is taken."""


class ContextOverflow(MemoryLabError):
    """The request cannot fit its token budget, even with all history left out."""

    def __init__(self, needed: int, allowed: int, *, what: str = "the new message") -> None:
        self.needed = needed
        self.allowed = allowed
        super().__init__(
            f"{what} needs {needed} tokens but the budget allows {allowed} "
            f"({needed - allowed} too many); shorten the message or raise the budget"
        )
