"""The contract of every registered strategy, on random transcripts (hypothesis).

Every strategy in the registry, including ones registered later, is run over generated
conversations (messages of 1 to 2,000 tokens, any unicode, empty replies), random budgets
and parameters, and summarisers that echo, write long summaries or fail. It must:

* send the system prompt first and unchanged, and the new message last;
* start its messages with the user and alternate roles;
* never exceed its budget, and never raise ContextOverflow when system + message fit it;
* leave `snapshot()` byte-identical when `prepare` raises;
* survive fork, snapshot and restore unchanged;
* build, on replay of the committed turns, the very requests it built live.

The default run is bounded and seeded (derandomize); `--hypothesis-profile long` runs 300
examples per strategy, and bench/bench_contracts.py prints the passing examples per strategy.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from memory.errors import ContextOverflow, InvalidParameter
from memory.grounding import is_grounded
from memory.maintenance import Upkeep
from memory.registry import REGISTRY, create
from memory.replay import replay
from memory.standins import RuleExtractor
from memory.strategies.base import Strategy
from memory.strategies.composed import Composed
from memory.tokens import TokenCounter
from memory.types import Completion, Request
from tests.memory.compositions import SAMPLE_NAMES
from tests.memory.conftest import FakeSummariser

COUNTER = TokenCounter("o200k_base")
SYSTEM = "You are FinCoach, a careful personal finance assistant. Be brief."
SYSTEM_TOKENS = COUNTER.count(SYSTEM)
LONG = settings.get_current_profile_name() == "long"
CONTRACT = settings(
    max_examples=300 if LONG else 12,
    derandomize=not LONG,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,  # sample_registered: once per test, not per example
    ],
)


class SizedSummariser:
    """A summariser whose summaries are `tokens` long: real models write long summaries too."""

    def __init__(self, tokens: int) -> None:
        self.text = "Summary: " + COUNTER.text_of_tokens(tokens, word=" facts")

    def __call__(self, request: Request) -> Completion:
        return Completion(self.text)


class FailingSummariser:
    def __call__(self, request: Request) -> Completion:
        raise RuntimeError("summariser down")


class InventingExtractor:
    """The stand-in extractor's facts plus values no turn states, as a weak model's are: a
    salary a tenth of the one said, a name nobody gave."""

    def __call__(self, request: Request) -> Completion:
        update = json.loads(RuleExtractor()(request).text)
        update["set"].update({"monthly_salary": 12_000.5, "name": "Zyxqv Wombat"})
        return Completion(json.dumps(update, ensure_ascii=False))


def summariser(kind: str, tokens: int) -> Any:
    if kind == "echo":
        return FakeSummariser()
    if kind == "sized":
        return SizedSummariser(tokens)
    return FailingSummariser()


# sentences the stand-in extractor and summariser keep, so facts blocks and summaries grow
FACTUAL = (
    "",
    "I'm Asha. ",
    "My rent is ₹25,000 and my salary is ₹1,20,000. ",
    "Aim for an emergency fund of ₹3,60,000. ",
    "My policy number is 4471203. ",
)
unicode_text = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    min_size=0,
    max_size=30,
)  # any unicode, emoji, combining marks, newlines (NUL is refused at input)


@st.composite
def message(draw: st.DrawFn, *, reply: bool = False) -> str:
    """A user message (never blank) or a reply (may be empty) of 1 to 2,000 tokens."""
    head = draw(st.sampled_from(FACTUAL)) + draw(unicode_text)
    size = draw(st.one_of(st.integers(0, 40), st.integers(0, 2000)))
    text = head + (COUNTER.text_of_tokens(size, word=" rent") if size else "")
    if not reply:
        assume(text.strip())
    return text


turns = st.lists(st.tuples(message(), message(reply=True)), min_size=1, max_size=8)


@st.composite
def params(draw: st.DrawFn, name: str) -> dict[str, Any]:
    """Random values for each registered parameter, within its limits."""
    out: dict[str, Any] = {}
    for p in REGISTRY[name].params:
        if p.choices:
            out[p.name] = draw(st.sampled_from(p.choices))
        elif isinstance(p.default, float):
            out[p.name] = draw(st.floats(p.minimum or 0.01, p.maximum or 1.0))
        elif p.name == "budget":
            out[p.name] = draw(st.integers(SYSTEM_TOKENS + 1, 3000))
        else:
            lo = int(p.minimum or 0)
            out[p.name] = draw(st.integers(lo, min(int(p.maximum or 10), lo + 10)))
    return out


def build(
    name: str, options: dict[str, Any], kind: str, tokens: int, *, inventing: bool = False
) -> Strategy:
    extractor = InventingExtractor() if inventing else RuleExtractor()
    try:
        return create(
            name,
            SYSTEM,
            counter=COUNTER,
            upkeep=Upkeep(summariser(kind, tokens), extractor),
            params=options,
        )
    except InvalidParameter:  # e.g. fold_to above trigger: refused at creation, not a contract
        assume(False)
        raise


def frozen(strategy: Strategy) -> str:
    return json.dumps(strategy.snapshot(), sort_keys=True, ensure_ascii=False)


def shape(request: Request) -> tuple[Any, ...]:
    return (request.system, tuple((m.role, m.content) for m in request.messages))


def check_request(request: Request, user: str, budget: int | None) -> None:
    assert request.system.startswith(SYSTEM), "the system prompt must come first, unchanged"
    msgs = request.messages
    assert msgs[-1].role == "user" and msgs[-1].content == user, "the new message goes last"
    assert msgs[0].role == "user", "messages start with the user"
    for a, b in zip(msgs, msgs[1:], strict=False):
        assert a.role != b.role, "roles alternate"
    if budget is not None:
        assert request.tokens.content <= budget, "the budget is never exceeded"
    if request.account is not None and request.account.parts:
        parts = request.account.parts
        assert sum(p.tokens for p in parts) == request.tokens.with_overhead, "parts add up"
        if request.account.summary is None:
            assert all(p.tokens == 0 for p in parts if p.name == "summary")


def run_contract(name: str, data: st.DataObject) -> None:
    """One example of the whole contract for strategy `name` (shared with bench/)."""
    options = data.draw(params(name), label="params")
    kind = data.draw(st.sampled_from(("echo", "sized", "fail")), label="summariser")
    tokens = data.draw(st.integers(1, 400), label="summary tokens")
    conversation = data.draw(turns, label="turns")
    inventing = data.draw(st.booleans(), label="extractor invents values")
    strategy = build(name, options, kind, tokens, inventing=inventing)
    facts_block = strategy.facts_block if isinstance(strategy, Composed) else None
    grounded = facts_block is not None and facts_block.grounded
    budget = getattr(strategy, "budget", None)
    live: list[tuple[Any, ...]] = []
    committed: list[tuple[str, str]] = []
    for user, reply in conversation:
        before = frozen(strategy)
        pinned = strategy.pinned_turns() if isinstance(strategy, Composed) else []
        needed = SYSTEM_TOKENS + COUNTER.count(user) + strategy.history.tokens(pinned)
        fits = needed <= (budget or 10**9)
        try:
            request = strategy.prepare(user)
        except ContextOverflow:
            assert not fits, "system + pinned turns + message fit the budget, yet it refused"
            assert frozen(strategy) == before, "a raise must leave the state unchanged"
            continue
        check_request(request, user, budget)
        facts_before = dict(strategy.facts)
        strategy.commit(user, reply)
        if grounded:  # no value is stored that its source turn does not state
            for key, value in strategy.facts.items():
                if facts_before.get(key) != value:
                    assert is_grounded(key, value, f"{user}\n{reply}"), (key, value)
        live.append(shape(request))
        committed.append((user, reply))

    # fork, snapshot and restore keep the state exactly
    fork = strategy.fork()
    assert frozen(fork) == frozen(strategy)
    restored = build(name, options, kind, tokens, inventing=inventing)
    restored.restore(json.loads(frozen(strategy)))
    assert frozen(restored) == frozen(strategy)
    fork.commit("a turn only the fork has", "ok")
    assert frozen(fork) != frozen(strategy), "a fork shares no state"

    # replaying the committed turns builds the requests that were sent live
    again = build(name, options, kind, tokens, inventing=inventing)
    steps = replay(committed, {name: again}, counter=COUNTER)
    assert [shape(s.requests[name]) for s in steps] == live
    assert frozen(again) == frozen(strategy)


@pytest.mark.parametrize("name", sorted(REGISTRY) + SAMPLE_NAMES)
@CONTRACT
@given(data=st.data())
def test_strategy_contract(name: str, data: st.DataObject, sample_registered: None) -> None:
    run_contract(name, data)
