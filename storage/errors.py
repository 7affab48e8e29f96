"""The storage errors: each message says what to do."""

from __future__ import annotations

from providers.redaction import mask


class StoreError(RuntimeError):
    """The database cannot be used as asked; the message says what to do. The message is
    masked (providers.redaction): no database password or key the run knew is in it."""

    def __init__(self, message: object = "") -> None:
        super().__init__(mask(str(message)))


class SessionNotFound(KeyError):
    """No saved session has this id (deleted, or never saved)."""

    def __str__(self) -> str:
        return f"no saved session with id {self.args[0]!r}"


class SessionFormatError(ValueError):
    """A saved or exported session that cannot be restored; the message names the field
    (its path, like ``lanes['full'].turns[3].counted``) and what is wrong with it."""
