"""LangChain message dump: what `langchain_core.messages.messages_to_dict` writes, a list of
``{"type": "human"|"ai"|"system"|"tool"|"chat", "data": {"content", ...}}`` (serialised
``{"lc": 1, "id": [..., "HumanMessage"], "kwargs": {...}}`` messages are read too).

The whole list is one conversation; an AI message's tool calls and tool messages become
placeholders.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from scenarios.transcripts.core import Tally, Transcript, build
from scenarios.transcripts.messages import is_langchain, langchain_item
from scenarios.transcripts.source import Record


def detect(first: Any) -> bool:
    return is_langchain(first)


def read(records: Iterator[Record]) -> Iterator[Transcript]:
    tally = Tally()
    items = [langchain_item(r.value, tally, index=r.index, line=r.line if r.index is None else None)
             for r in records]  # fmt: skip
    yield build(items, fmt="langchain", tally=tally)
