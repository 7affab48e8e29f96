"""Looser shapes for the survival lab's filler: after the strict formats, a JSON list of
strings or of ``{user, reply}`` objects, CSV with a ``user`` column, or one user message a
line."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping
from typing import Any

from scenarios.transcripts.core import TranscriptError

Pair = tuple[str, "str | None"]


def _pairs_from_messages(messages: Iterable[Mapping[str, Any]]) -> list[Pair]:
    """Role/content messages paired up leniently: each user message with the reply after it."""
    turns: list[Pair] = []
    pending: str | None = None
    for m in messages:
        role, content = m.get("role"), m.get("content")
        if not isinstance(content, str):
            continue
        if role == "user":
            if pending is not None:
                turns.append((pending, None))
            pending = content
        elif role == "assistant" and pending is not None:
            turns.append((pending, content))
            pending = None
    if pending is not None:
        turns.append((pending, None))
    return turns


def _pairs_from_json(data: Any, depth: int = 0) -> list[Pair]:
    if isinstance(data, dict):
        for key in ("turns", "messages", "user_turns", "conversation"):
            if key in data and depth < 3:
                return _pairs_from_json(data[key], depth + 1)
        raise TranscriptError(
            "the JSON object has none of the keys turns, messages, user_turns, conversation"
        )
    if not isinstance(data, list):
        raise TranscriptError("the JSON must be a list of messages or turns")
    if all(isinstance(x, str) for x in data):
        return [(x, None) for x in data]
    if all(isinstance(x, dict) and "role" in x for x in data):
        return _pairs_from_messages(data)
    turns: list[Pair] = []
    for x in data:
        if isinstance(x, dict) and isinstance(x.get("user"), str):
            reply = x.get("assistant", x.get("reply"))
            turns.append((x["user"], reply if isinstance(reply, str) and reply else None))
        elif isinstance(x, str):
            turns.append((x, None))
    return turns


def _pairs_from_csv(text: str) -> list[Pair]:
    reader = csv.DictReader(io.StringIO(text))
    fields = [f.strip().lower() for f in reader.fieldnames or []]
    if "user" not in fields:
        raise TranscriptError("a CSV transcript needs a 'user' column (and optionally 'reply')")
    turns: list[Pair] = []
    for row in reader:
        row = {(k or "").strip().lower(): v for k, v in row.items()}
        reply = row.get("reply") or row.get("assistant") or None
        turns.append((row["user"], reply))
    return turns


def loose_pairs(text: str, *, kind: str) -> list[Pair]:
    """Pairs from the loose shapes alone (after the strict formats found none)."""
    stripped = text.strip()
    if kind == ".json" or (not kind and stripped[:1] in "[{"):
        pairs = _pairs_from_json(load_json(stripped))
    elif kind == ".csv":
        pairs = _pairs_from_csv(text)
    else:
        pairs = [(line.strip(), None) for line in stripped.splitlines() if line.strip()]
    pairs = [p for p in pairs if p[0].strip()]
    if not pairs:
        raise TranscriptError("the transcript holds no user messages")
    return pairs


def load_json(text: str) -> Any:
    """Parsed JSON; TranscriptError (never RecursionError) for anything that is not."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise TranscriptError(
            f"not valid JSON (column {exc.colno}): {exc.msg}", line=exc.lineno
        ) from None
    except RecursionError:
        raise TranscriptError("the JSON nests too deeply to read", line=1) from None
