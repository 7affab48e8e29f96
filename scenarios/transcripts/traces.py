"""Conversations rebuilt from traced model calls (LangSmith runs, OpenTelemetry spans).

Each call recorded its whole input and its output. In time order, a call's input messages
that the conversation does not hold yet are added (all of them when the input repeats the
conversation so far; after a trimmed history, those after its last assistant message), then
its output, which carries the call's reported token usage.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from scenarios.transcripts.core import Item, Tally, Transcript, TurnUsage, build, merge_history


@dataclass
class Call:
    """One traced model call: when, where (a span or run id), what went in, what came out."""

    start: float
    place: str
    inputs: list[Item]
    outputs: list[Item]
    usage: TurnUsage | None = None
    when: str = ""  # the start as the file wrote it (ISO 8601)


@dataclass
class Thread:
    """The calls of one conversation (one `gen_ai.conversation.id`, thread or trace)."""

    key: str
    calls: list[Call] = field(default_factory=list)
    tally: Tally = field(default_factory=Tally)
    created: str = ""


def rebuild(thread: Thread, *, fmt: str, number: int, title: str) -> Transcript:
    calls = sorted(thread.calls, key=lambda c: c.start)
    created = thread.created or next((c.when for c in calls if c.when), "")
    items: list[Item] = []
    system: str | None = None
    for call in calls:
        systems = [i.text for i in call.inputs if i.role == "system"]
        if systems and system is None:
            system = "\n\n".join(systems)
        items += merge_history(items, call.inputs)
        outs = list(call.outputs)
        if outs and call.usage is not None:
            outs[-1] = Item(outs[-1].role, outs[-1].text, place=outs[-1].place, usage=call.usage)
        items += outs
    return build(
        _drop_system(items), fmt=fmt, system=system, tally=thread.tally, number=number,
        title=title, id=thread.key, created=created,
    )  # fmt: skip


def _drop_system(items: Sequence[Item]) -> list[Item]:
    return [i for i in items if i.role != "system"]
