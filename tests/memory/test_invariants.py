"""Invariants every strategy keeps, on generated conversations (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.errors import ContextOverflow
from memory.maintenance import Upkeep
from memory.registry import REGISTRY, create
from tests.memory.compositions import SAMPLE_NAMES
from tests.memory.conftest import FakeExtractor, FakeSummariser

SYSTEM = "You are a careful assistant. Never forget what the user told you."
BUDGETED = {"token_window", "summary_buffer", "hybrid"}

words = st.sampled_from(
    "salary budget rent my name is Asha river loan ₹50,000 plan 2026 fund risk SIP tax".split()
)
texts = st.lists(words, min_size=1, max_size=40).map(" ".join)
conversations = st.lists(st.tuples(texts, texts), min_size=1, max_size=12)


def build(name, counter, **params):
    return create(
        name,
        SYSTEM,
        counter=counter,
        upkeep=Upkeep(FakeSummariser(), FakeExtractor()),
        params=params,
    )


def check_request(request, system, user_text, budget=None):
    assert request.system.startswith(system), "the system prompt must be sent first, unchanged"
    msgs = request.messages
    assert msgs[-1].role == "user" and msgs[-1].content == user_text
    assert msgs[0].role == "user", "a trim must never leave an assistant message first"
    for a, b in zip(msgs, msgs[1:], strict=False):
        assert a.role != b.role, "messages must alternate user/assistant"
    if budget is not None:
        assert request.tokens.content <= budget


@pytest.mark.parametrize("name", sorted(REGISTRY) + SAMPLE_NAMES)
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(conversation=conversations, budget=st.integers(min_value=60, max_value=400))
def test_every_request_keeps_the_invariants(counter, name, conversation, budget, sample_registered):
    budgeted = name in BUDGETED or "budget" in REGISTRY[name].defaults()  # or a composition's
    params = {"budget": budget} if budgeted else {}
    strategy = build(name, counter, **params)
    for user, reply in conversation:
        try:
            request = strategy.prepare(user)
        except ContextOverflow as exc:
            assert exc.needed > exc.allowed == budget
            continue
        check_request(request, SYSTEM, user, budget if budgeted else None)
        strategy.commit(user, reply)
    assert len(strategy.history) <= len(conversation)


@pytest.mark.parametrize("name", sorted(BUDGETED))
def test_a_message_too_big_for_the_budget_overflows_and_loses_nothing(counter, name):
    strategy = build(name, counter, budget=120)
    strategy.commit("my name is Asha", "Nice to meet you, Asha.")
    before = (list(strategy.history.turns), strategy.summary, dict(strategy.facts))
    huge = counter.text_of_tokens(500)
    with pytest.raises(ContextOverflow) as info:
        strategy.prepare(huge)
    assert info.value.allowed == 120
    # only the system prompt and the message are required: summary and facts can give way
    assert info.value.needed == counter.count(SYSTEM) + 500
    assert "needs" in str(info.value) and "allows 120" in str(info.value)
    assert (list(strategy.history.turns), strategy.summary, dict(strategy.facts)) == before
    # the conversation carries on afterwards
    assert strategy.prepare("what is my name?").messages[-1].content == "what is my name?"


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_system_prompt_survives_fifty_turns(counter, name):
    strategy = build(name, counter)
    for i in range(50):
        request = strategy.prepare(f"turn {i}: my fund is F{i}")
        assert request.system.startswith(SYSTEM)
        strategy.commit(f"turn {i}: my fund is F{i}", f"noted F{i}")
