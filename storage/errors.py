"""The session store's errors: each message says what to do."""

from __future__ import annotations


class StoreError(RuntimeError):
    """The database cannot be used as asked; the message says what to do."""


class SessionNotFound(KeyError):
    """No saved session has this id (deleted, or never saved)."""

    def __str__(self) -> str:
        return f"no saved session with id {self.args[0]!r}"
