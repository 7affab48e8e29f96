"""The storage errors: each message says what to do."""

from __future__ import annotations


class StoreError(RuntimeError):
    """The database cannot be used as asked; the message says what to do."""


class SessionNotFound(KeyError):
    """No saved session has this id (deleted, or never saved)."""

    def __str__(self) -> str:
        return f"no saved session with id {self.args[0]!r}"


class SessionFormatError(ValueError):
    """A saved or exported session that cannot be restored; the message names the field
    (its path, like ``lanes['full'].turns[3].counted``) and what is wrong with it."""
