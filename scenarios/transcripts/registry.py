"""The transcript formats, detected by shape: one `Format` per format module, in one registry.

Detection looks at the file's container (one JSON object, a JSON list, JSON lines or text)
and its first record; formats are tried in registry order, so the more specific shapes come
first. Adding a format is one module with `detect` and `read`, and one line below.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import scenarios.transcripts.chatgpt as chatgpt
import scenarios.transcripts.claude as claude
import scenarios.transcripts.langchain as langchain
import scenarios.transcripts.langsmith as langsmith
import scenarios.transcripts.openai as openai
import scenarios.transcripts.openai_jsonl as openai_jsonl
import scenarios.transcripts.otel as otel
import scenarios.transcripts.sharegpt as sharegpt
from scenarios.transcripts.core import TITLES, Transcript
from scenarios.transcripts.source import Record

Reader = Callable[[Iterator[Record]], Iterator[Transcript]]


@dataclass(frozen=True)
class Format:
    """A transcript format: its name, title, where it can be, how to tell it, how to read it."""

    name: str
    title: str
    containers: frozenset[str]  # "object", "list", "lines"
    detect: Callable[[Any], bool]  # on the first record's value
    read: Reader
    many: bool = False  # a file can hold several conversations
    each: Callable[[Record, int], Transcript] | None = None  # one record is one conversation


def per_record(
    name: str,
    title: str,
    containers: frozenset[str],
    detect: Callable[[Any], bool],
    each: Callable[[Record, int], Transcript],
) -> Format:
    """A format whose every record (list element or line) is one conversation."""

    def read(records: Iterator[Record]) -> Iterator[Transcript]:
        for number, record in enumerate(records, start=1):
            yield each(record, number)

    return Format(name, title, containers, detect, read, True, each)  # fmt: skip


REGISTRY: dict[str, Format] = {}


def register(fmt: Format) -> Format:
    """Add a format (its name must be new)."""
    if fmt.name in REGISTRY or fmt.name in ("text", "memory_lab"):
        raise ValueError(f"a transcript format named {fmt.name!r} is registered already")
    REGISTRY[fmt.name] = fmt
    TITLES.setdefault(fmt.name, fmt.title)
    return fmt


def title_of(name: str) -> str:
    fmt = REGISTRY.get(name)
    return fmt.title if fmt else TITLES.get(name, name)


def find(container: str, first: Any) -> Format | None:
    """The first registered format that can be in `container` and fits `first`."""
    for fmt in REGISTRY.values():
        if container in fmt.containers and fmt.detect(first):
            return fmt
    return None


ANY = frozenset({"list", "lines"})
OBJ = frozenset({"object"})
register(
    per_record(
        "chatgpt", "ChatGPT data export (conversations.json)", ANY, chatgpt.detect, chatgpt.each
    )
)
register(
    Format("chatgpt_one", "ChatGPT conversation (one, JSON)", OBJ, chatgpt.detect, chatgpt.read_one)
)
register(
    per_record(
        "claude", "Claude.ai data export (conversations.json)", ANY, claude.detect, claude.each
    )
)
register(
    Format("claude_one", "Claude.ai conversation (one, JSON)", OBJ, claude.detect, claude.read_one)
)
register(
    per_record(
        "sharegpt", "ShareGPT (JSON or JSON lines)", ANY | OBJ, sharegpt.detect, sharegpt.each
    )
)
register(per_record("openai_batch", "OpenAI Batch API input (JSONL)", frozenset({"lines", "object"}),
                    openai_jsonl.detect_batch, openai_jsonl.each_batch))  # fmt: skip
register(per_record("openai_jsonl", "OpenAI chat JSONL (fine-tuning, evals)", frozenset({"lines"}),
                    openai_jsonl.detect_chat, openai_jsonl.each_chat))  # fmt: skip
register(
    Format(
        "langsmith",
        "LangSmith run export (JSON or JSONL)",
        ANY | OBJ,
        langsmith.detect,
        langsmith.read,
        True,
    )
)
register(
    Format("otel", "OpenTelemetry GenAI spans (OTLP JSON)", ANY | OBJ, otel.detect, otel.read, True)
)
register(
    Format(
        "langchain",
        "LangChain messages (messages_to_dict)",
        frozenset({"list"}),
        langchain.detect,
        langchain.read,
    )
)
register(
    Format(
        "anthropic",
        "Anthropic messages (JSON)",
        OBJ,
        openai.detect_anthropic,
        openai.read_anthropic,
    )
)
register(Format("openai", "OpenAI messages (JSON)", OBJ, openai.detect_openai, openai.read_openai))
register(
    Format(
        "openai_list",
        "OpenAI messages (JSON)",
        frozenset({"list"}),
        openai.detect_list,
        openai.read_list,
    )
)
