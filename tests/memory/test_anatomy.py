"""The request's parts (system, facts, summary, retrieved, recent, new message, framing) add up
exactly to its counted total, for every registered strategy, on random transcripts.

The strategies come from the registry at test time, with parameters drawn from each one's own
`Param` limits, so a strategy registered later is covered without touching this file.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from memory.errors import ContextOverflow, InvalidParameter
from memory.maintenance import Upkeep
from memory.registry import REGISTRY, StrategySpec, create
from memory.types import PARTS, Completion, Request
from tests.memory.compositions import SAMPLE_NAMES
from tests.memory.conftest import FakeExtractor, FakeSummariser

# any printable text, including the whitespace and non-Latin scripts where token merges across
# a join are most likely; a message must have something besides whitespace
texts = (
    st.text(
        st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")),
        min_size=1,
        max_size=120,
    )
    | st.lists(
        st.sampled_from("my name is Asha salary ₹1,20,000 rent loan 2026 SIP\n\n".split(" ")),
        min_size=1,
        max_size=30,
    ).map(" ".join)
).filter(lambda t: bool(t.strip()))
systems = st.sampled_from(
    [
        "You are a careful assistant.",
        "You are FinCoach.\n\n",  # trailing blank lines: the facts block joins onto them
        "",
        "सहायक  ",
    ]
)


class Flaky:
    """A model function that fails on the calls whose number is in `failing` (a failed
    summary keeps the old one; a failed extraction changes no fact)."""

    def __init__(self, inner: Any, failing: set[int]) -> None:
        self.inner, self.failing, self.calls = inner, failing, 0

    def __call__(self, request: Request) -> Completion:
        self.calls += 1
        if self.calls in self.failing:
            raise RuntimeError("injected upkeep failure")
        return self.inner(request)  # type: ignore[no-any-return]


def param_values(spec: StrategySpec) -> st.SearchStrategy[dict[str, Any]]:
    """Values for every parameter of `spec`, within its declared limits."""
    fields: dict[str, st.SearchStrategy[Any]] = {}
    for p in spec.params:
        if p.choices:
            fields[p.name] = st.sampled_from(p.choices)
        elif isinstance(p.default, bool):
            fields[p.name] = st.booleans()
        elif isinstance(p.default, int):
            low = int(p.minimum if p.minimum is not None else 0)
            high = int(min(p.maximum if p.maximum is not None else 2000, 2000))
            fields[p.name] = st.integers(low, max(low, high))
        elif isinstance(p.default, float):
            low = p.minimum if p.minimum is not None else 0.0
            high = p.maximum if p.maximum is not None else 1.0
            fields[p.name] = st.floats(low, high)
        else:
            fields[p.name] = st.just(p.default)
    return st.fixed_dictionaries(fields)


def check_parts(request: Request, counter: Any, system: str) -> None:
    account = request.account
    assert account is not None
    parts = {p.name: p for p in account.parts}
    assert [p.name for p in account.parts] == list(PARTS)
    assert all(p.tokens >= 0 for p in account.parts), account.parts
    # exact: the parts are the request's own counted totals, split
    assert sum(p.tokens for p in account.parts) == request.tokens.with_overhead
    framing = parts["framing"].tokens
    assert sum(p.tokens for p in account.parts) - framing == request.tokens.content
    # ... and the same totals as counting the request afresh
    recount = counter.request(request.system, request.messages)
    assert (recount.content, recount.with_overhead) == (
        request.tokens.content,
        request.tokens.with_overhead,
    )
    # each part holds what the account says, and the verbatim turns are the messages sent
    assert parts["new_message"].tokens == counter.count(request.messages[-1].content)
    assert parts["retrieved"].turns == account.retrieved_turns
    verbatim = sorted(parts["pinned"].turns + parts["retrieved"].turns + parts["recent"].turns)
    assert verbatim == sorted(account.kept_turns)
    pair = 2 if account.summary and request.messages[0].content.startswith("Summary of") else 0
    turn_messages = request.messages[pair:-1]
    assert len(turn_messages) == 2 * len(verbatim)
    held = parts["pinned"].tokens + parts["retrieved"].tokens + parts["recent"].tokens
    assert held == counter.count_messages(turn_messages)
    assert (parts["summary"].tokens > 0) == bool(account.summary)
    assert parts["summary"].turns == (account.summarised_turns if account.summary else ())
    assert (parts["facts"].tokens > 0) == bool(account.facts)
    assert parts["system"].tokens == counter.count(system)
    assert request.system.startswith(system)


@pytest.mark.parametrize("name", sorted(REGISTRY) + SAMPLE_NAMES)
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.data(),
    system=systems,
    conversation=st.lists(st.tuples(texts, texts), min_size=1, max_size=10),
    failing=st.sets(st.integers(1, 12), max_size=4),
)
def test_parts_add_up_to_the_counted_total(
    counter, name, data, system, conversation, failing, sample_registered
):
    spec = REGISTRY[name]
    params = data.draw(param_values(spec), label="params")
    try:
        strategy = create(
            name,
            system,
            counter=counter,
            upkeep=Upkeep(Flaky(FakeSummariser(), failing), Flaky(FakeExtractor(), failing)),
            params=params,
        )
    except InvalidParameter:
        assume(False)  # parameters the registry refuses (fold_to above trigger, ...)
        return
    for user, reply in conversation:
        try:
            request = strategy.prepare(user)
        except ContextOverflow:
            continue
        check_parts(request, counter, system)
        strategy.commit(user, reply)


def test_every_registered_strategy_is_covered():
    # the parametrisation above reads the registry: a new strategy joins it automatically
    assert {"full", "window", "summary", "hybrid", "retrieval"} <= set(REGISTRY)


def test_a_hybrid_request_splits_three_ways(counter):
    """Facts, summary and recent turns each hold their own tokens and turns."""
    strategy = create(
        "hybrid",
        "You are FinCoach.",
        counter=counter,
        upkeep=Upkeep(FakeSummariser(), FakeExtractor()),
        params={"budget": 300},
    )
    for i in range(1, 8):
        strategy.prepare(f"my goal{i} is saving{i} for the house, turn {i}")
        strategy.commit(f"my goal{i} is saving{i} for the house, turn {i}", "Noted. " * 8)
    request = strategy.prepare("what were my goals?")
    parts = {p.name: p for p in request.account.parts}
    assert parts["facts"].tokens > 0 and parts["summary"].tokens > 0
    assert parts["recent"].tokens > 0 and parts["retrieved"].tokens == 0
    assert parts["summary"].turns == tuple(range(1, len(parts["summary"].turns) + 1))
    assert parts["recent"].turns == tuple(range(parts["summary"].turns[-1] + 1, 8))
    assert parts["new_message"].tokens == counter.count("what were my goals?")
