"""Every snippet "Export as code" can emit is executed against random transcripts, and what it
returns must be the lab's payload for that conversation, message for message. Strategies no
framework expresses exactly get a reason, never code."""

from __future__ import annotations

from typing import Any

import pytest
import tiktoken
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.errors import ContextOverflow
from memory.registry import REGISTRY, create
from memory.tokens import TokenCounter, get_encoding
from plugins.export_code import export

pytest.importorskip("langchain_core")

COUNTER = TokenCounter("o200k_base")
SYSTEM = "You are FinCoach, a careful personal finance assistant."
WORDS = ["salary", "rent", "Asha", "₹25,000", "fund", "plan", "ok", "my", "is", "🙂", "a\nb"]
text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=60).map(" ".join)
conversations = st.lists(st.tuples(text, text), min_size=1, max_size=10)

EXPRESSIBLE: list[tuple[str, dict[str, Any]]] = [
    ("full", {}),
    ("window", {"k": 0}),
    ("window", {"k": 1}),
    ("window", {"k": 3}),
    ("token_window", {"budget": 60}),
    ("token_window", {"budget": 200}),
    ("token_window", {"budget": 600}),
]


def run_snippet(code: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    # the snippet asks tiktoken for o200k_base by name; offline, tiktoken would download it:
    # hand it the same ranks the lab counts with (memory/tokens.py)
    monkeypatch.setattr(tiktoken, "get_encoding", get_encoding)
    namespace: dict[str, Any] = {}
    exec(compile(code, "<snippet>", "exec"), namespace)
    return namespace["memory_messages"]


@pytest.mark.parametrize(("name", "params"), EXPRESSIBLE)
@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(conversation=conversations)
def test_snippet_sends_the_lab_payload(name, params, conversation, monkeypatch) -> None:
    snippet = export(name, params)
    assert snippet.code is not None and snippet.framework
    memory_messages = run_snippet(snippet.code, monkeypatch)
    lane = create(name, SYSTEM, counter=COUNTER, params=params)
    history: list[dict[str, str]] = []
    for user, reply in conversation:
        try:
            request = lane.prepare(user)
        except ContextOverflow:
            return  # the lab refuses the turn; the snippet's docstring says what it sends then
        sent = memory_messages(SYSTEM, list(history), user)
        names = {"system": "system", "human": "user", "ai": "assistant"}
        got = [(names[m.type], m.content) for m in sent]
        assert got[0] == ("system", request.system)
        assert got[1:] == [(m.role, m.content) for m in request.messages]
        lane.commit(user, reply)
        history += [{"role": "user", "content": user}, {"role": "assistant", "content": reply}]


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_registered_strategy_gets_code_or_a_reason(name) -> None:
    snippet = export(name)
    if snippet.code is None:
        assert snippet.framework is None and len(snippet.reason) > 20
    else:
        assert "def memory_messages(system, history, new_message)" in snippet.code


def test_rules_no_framework_states_exactly_are_refused() -> None:
    for name in ("summary", "summary_buffer", "entity", "hybrid", "retrieval"):
        snippet = export(name)
        assert snippet.code is None, name
