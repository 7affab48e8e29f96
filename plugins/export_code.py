"""A strategy's rule written as framework code ("Export as code"), only where the framework
can express it exactly: what the snippet sends for any conversation is what the lab's lane
sends (tests/plugins/test_export_code.py executes every snippet against random transcripts).

Every snippet defines `memory_messages(system, history, new_message)`: `history` is the
earlier turns as `{"role", "content"}` dicts, and the function returns the LangChain
messages to send. Where no framework states the rule exactly (summaries, extracted facts,
retrieval, compositions beyond a plain window), `export` says so instead of approximating.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memory.registry import spec


@dataclass(frozen=True)
class Snippet:
    """Framework code for one strategy setting, or why there is none."""

    strategy: str
    framework: str | None  # "LangGraph (langchain-core)"; None when none fits exactly
    code: str | None
    reason: str  # what the code does, or why no framework can say it exactly


_PREAMBLE = '''from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, trim_messages


def as_messages(system, history, new_message):
    """The conversation as LangChain messages: system, the earlier turns, the new message."""
    out = [SystemMessage(system)] if system else []
    for item in history:
        kind = HumanMessage if item["role"] == "user" else AIMessage
        out.append(kind(item["content"]))
    return [*out, HumanMessage(new_message)]
'''

_TOKEN_WINDOW = (
    """# Memory Lab: {label}, as LangGraph's trim_messages (langchain-core).
# pip install langchain-core tiktoken
import tiktoken

"""
    + _PREAMBLE
    + '''
_ENCODING = tiktoken.get_encoding("{encoding}")


def count_content_tokens(messages):
    """{encoding} tokens of each message's content, with no per-message overhead."""
    return sum(len(_ENCODING.encode(m.content, disallowed_special=())) for m in messages)


def memory_messages(system, history, new_message):
    """The newest whole turns that fit {budget} tokens with the system prompt and the new
    message (when those two alone do not fit, Memory Lab refuses the turn; trim_messages
    would send the system prompt alone)."""
    return trim_messages(
        as_messages(system, history, new_message),
        max_tokens={budget},
        strategy="last",
        token_counter=count_content_tokens,
        start_on="human",
        include_system=True,
        allow_partial=False,
    )
'''
)

_WINDOW = (
    """# Memory Lab: {label}, as LangGraph's trim_messages (langchain-core), counting messages.
# pip install langchain-core

"""
    + _PREAMBLE
    + '''

def memory_messages(system, history, new_message):
    """The last {k} turn(s) and the new message, after the system prompt."""
    return trim_messages(
        as_messages(system, history, new_message),
        max_tokens={k2} + (1 if system else 0),  # 2 per turn, the new message, the system
        strategy="last",
        token_counter=len,
        start_on="human",
        include_system=True,
    )
'''
)

_FULL = (
    """# Memory Lab: full, as LangChain messages: every earlier turn, verbatim.
# pip install langchain-core

"""
    + _PREAMBLE
    + '''

def memory_messages(system, history, new_message):
    """Everything: the system prompt, every earlier turn, the new message."""
    return as_messages(system, history, new_message)
'''
)

_NOT_EXACT = {
    "summary": "a running summary written by a model: no framework writes the lab's summary "
    "prompt and placement exactly",
    "summary_buffer": "folds old turns into a summary that counts against the budget; "
    "LangChain's ConversationSummaryBufferMemory does not count its summary",
    "entity": "a known-facts block extracted by the lab's prompt; no framework's memory block "
    "sends the same block",
    "hybrid": "facts + summary + recent + retrieved turns in one budget: no framework "
    "composes these exactly",
    "retrieval": "BM25 with stemming and neighbour scores over the history: no framework "
    "memory ranks turns this way",
}


def export(
    name: str, params: Mapping[str, Any] | None = None, *, encoding: str = "o200k_base"
) -> Snippet:
    """Framework code for strategy `name` with `params` (defaults filled in), or the reason
    none can be exact."""
    found = spec(name)
    values = {**found.defaults(), **dict(params or {})}
    label = found.label(params)
    if name == "token_window":
        code = _TOKEN_WINDOW.format(label=label, budget=int(values["budget"]), encoding=encoding)
        return Snippet(
            name, "LangGraph (langchain-core)", code, "trim_messages over content tokens"
        )
    if name == "window":
        k = int(values["k"])
        code = _WINDOW.format(label=label, k=k, k2=2 * k + 1)
        return Snippet(name, "LangGraph (langchain-core)", code, "trim_messages counting messages")
    if name == "full":
        return Snippet(name, "LangChain (langchain-core)", _FULL, "every message, no trimming")
    if name == "langgraph_trim":
        budget = int(values["max_tokens"])
        if not values.get("allow_partial"):
            code = _TOKEN_WINDOW.format(label=label, budget=budget, encoding=encoding)
            return Snippet(name, "LangGraph (langchain-core)", code, "the lane's own call")
        return Snippet(name, None, None, "allow_partial cuts a message: export the lane's own "
                       "call from plugins/frameworks/langgraph_trim.py instead")  # fmt: skip
    if found.composition is not None:
        blocks = found.composition.blocks
        plain = len(blocks) == 1 and blocks[0].kind == "recent" and found.composition.budget is None
        if (
            plain
            and getattr(blocks[0], "count", None) is not None
            and getattr(blocks[0], "budget", None) is None
        ):
            k = int(values.get("recent_k", blocks[0].count or 0))
            code = _WINDOW.format(label=label, k=k, k2=2 * k + 1)
            return Snippet(name, "LangGraph (langchain-core)", code, "a plain recent-turns window")
        return Snippet(name, None, None, "a composition of blocks: no framework composes "
                       "pinned, summary, facts and retrieved blocks with give-way order exactly")  # fmt: skip
    reason = _NOT_EXACT.get(name, f"{name} is not one of the rules a framework states exactly")
    return Snippet(name, None, None, reason)
