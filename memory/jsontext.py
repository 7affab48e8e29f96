"""Reading a JSON file a user gave: one set of messages for text that is not UTF-8, not JSON,
or nested too deeply, raised as the caller's own error type (never a decode, JSON or
recursion error)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

Raise = Callable[[str], Exception]  # the caller's error type, built from a message


def decoded(text: str | bytes, what: str, error: Raise) -> str:
    """`text` as a string: bytes read as UTF-8 (a leading byte-order mark dropped)."""
    if isinstance(text, str):
        return text
    try:
        return text.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"{what} is not UTF-8 text (byte {exc.start}): save it as UTF-8") from None


def parse_json(text: str | bytes, what: str, error: Raise) -> Any:
    """The JSON value in `text`; `error(message)` naming `what` and where it went wrong."""
    text = decoded(text, what, error)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(
            f"{what} is not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}"
        ) from None
    except RecursionError:
        raise error(f"{what} nests too deeply to read") from None
