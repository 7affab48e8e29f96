"""Plain text: lines starting ``User:`` / ``Assistant:`` (``System:`` first, optionally); the
lines that follow a label, up to the next label, belong to the same message."""

from __future__ import annotations

import re

from scenarios.transcripts.core import Item, Transcript, TranscriptError, build
from scenarios.transcripts.messages import ROLES

_LABEL = re.compile(r"^\s*(user|assistant|system|human)\s*:[ \t]?(.*)$", re.IGNORECASE)


def parse_text(text: str) -> Transcript:
    """A plain-text transcript of `User:` / `Assistant:` lines (multi-line messages)."""
    items: list[Item] = []
    current: list[str] | None = None
    role = ""
    start = 0

    def flush() -> None:
        if current is None:
            return
        body = "\n".join(current).strip("\n")
        if not body.strip():
            raise TranscriptError(f"the {role.capitalize()} message is empty", line=start)
        items.append(Item(role, body.strip(), line=start))

    for number, line in enumerate(text.splitlines(), start=1):
        match = _LABEL.match(line)
        if match:
            flush()
            role = ROLES[match.group(1).lower()]
            current = [match.group(2)]
            start = number
        elif current is None:
            if line.strip():
                raise TranscriptError(
                    "expected a line starting with 'User:' or 'Assistant:' "
                    f"(got {line.strip()[:40]!r})",
                    line=number,
                )
        else:
            current.append(line)
    flush()
    if not items:
        raise TranscriptError("no 'User:' line found", line=1)
    return build(items, fmt="text")
