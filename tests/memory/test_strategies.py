"""Each strategy's own rule, on small conversations whose answer is known."""

from __future__ import annotations

import pytest

from memory.maintenance import Upkeep
from memory.registry import REGISTRY
from memory.strategies.base import SUMMARY_ACK, SUMMARY_NOTE
from memory.types import Completion
from tests.memory.conftest import FakeSummariser, with_fakes

SYSTEM = "You are FinCoach."
ALL = list(REGISTRY)


def make(name, counter, summarize=None, extract=None, **params):
    return with_fakes(name, SYSTEM, counter, summarize=summarize, extract=extract, **params)


def feed(strategy, n, *, prefix="turn"):
    for i in range(1, n + 1):
        strategy.prepare(f"{prefix} {i}")
        strategy.commit(f"{prefix} {i}", f"reply {i}")


def users(request):
    return [m.content for m in request.messages if m.role == "user"]


def test_full_sends_everything(counter):
    s = make("full", counter)
    feed(s, 4)
    r = s.prepare("next")
    assert users(r) == ["turn 1", "turn 2", "turn 3", "turn 4", "next"]
    assert r.account.kept_turns == (1, 2, 3, 4) and r.account.dropped_turns == ()


@pytest.mark.parametrize("k", [0, 1, 3, 10])
def test_window_keeps_the_last_k_turns(counter, k):
    s = make("window", counter, k=k)
    feed(s, 5)
    r = s.prepare("next")
    expected = [f"turn {i}" for i in range(max(1, 6 - k), 6)] if k else []
    assert users(r) == [*expected, "next"]
    assert r.account.dropped_turns == tuple(i for i in range(1, 6) if f"turn {i}" not in expected)


def test_token_window_keeps_newest_whole_turns_that_fit(counter):
    s = make("token_window", counter, budget=counter.count(SYSTEM) + 30)
    for _ in range(5):
        s.commit(counter.text_of_tokens(5), counter.text_of_tokens(5))  # 10 tokens a turn
    r = s.prepare(counter.text_of_tokens(5))  # 5 tokens: room 25 -> two whole turns
    assert r.account.kept_turns == (4, 5)
    assert r.tokens.content == counter.count(SYSTEM) + 25


def test_token_window_counts_the_new_message(counter):
    s = make("token_window", counter, budget=counter.count(SYSTEM) + 30)
    for _ in range(3):
        s.commit(counter.text_of_tokens(5), counter.text_of_tokens(5))
    assert s.prepare(counter.text_of_tokens(21)).account.kept_turns == ()
    assert s.prepare(counter.text_of_tokens(20)).account.kept_turns == (3,)


def test_summary_is_updated_every_turn_and_sent_with_the_new_message(counter):
    summariser = FakeSummariser()
    s = make("summary", counter, summarize=summariser)
    feed(s, 3)
    assert len(summariser.requests) == 3
    r = s.prepare("next")
    assert users(r) == ["next"]
    assert "turn 1" in r.system and "turn 3" in r.system
    assert r.account.summarised_turns == (1, 2, 3)


def test_summary_as_a_message_keeps_alternation(counter):
    s = make("summary", counter, summary_placement="message", summary_note=True)
    feed(s, 2)
    r = s.prepare("next")
    assert [m.role for m in r.messages] == ["user", "assistant", "user"]
    assert r.messages[0].content.startswith("Summary of our earlier conversation")
    assert r.messages[1].content == SUMMARY_ACK
    assert SUMMARY_NOTE in r.system and "Summary of the earlier" not in r.system


def test_summary_buffer_folds_old_turns_and_counts_its_summary(counter):
    budget = counter.count(SYSTEM) + 100
    s = make("summary_buffer", counter, summarize=FakeSummariser("S " * 20), budget=budget)
    for _ in range(8):
        s.commit(counter.text_of_tokens(10), counter.text_of_tokens(10))
    assert s.summarised, "turns past the trigger must be folded"
    assert s.resting_tokens() <= int(0.8 * budget)
    r = s.prepare("next")
    assert r.tokens.content <= budget
    assert set(r.account.summarised_turns) | set(r.account.kept_turns) == set(range(1, 9))
    assert r.account.dropped_turns == ()


def test_entity_block_adds_updates_and_deletes(counter):
    s = make("entity", counter, k=1)
    s.commit("my name is Chiru and my city is Pune", "Hello Chiru")
    s.commit("my city is Mumbai now", "Noted")
    r = s.prepare("what do you know?")
    assert r.account.facts == {"name": "Chiru", "city": "Mumbai"}
    assert 'Known facts about the user: {"city": "Mumbai", "name": "Chiru"}' in r.system
    s.commit("forget my city", "Done")
    assert s.prepare("and now?").account.facts == {"name": "Chiru"}
    assert users(s.prepare("x")) == ["forget my city", "x"]


def test_hybrid_has_facts_summary_and_recent_turns(counter):
    s = make("hybrid", counter, budget=counter.count(SYSTEM) + 160)
    s.commit("my name is Chiru", "Hello")
    for i in range(10):
        s.commit(f"filler {i} " + counter.text_of_tokens(10), "ok " + counter.text_of_tokens(8))
    r = s.prepare("what is my name?")
    assert "Chiru" in r.system and "Summary of the earlier conversation" in r.system
    assert r.account.kept_turns and r.account.kept_turns[-1] == 11
    assert r.tokens.content <= counter.count(SYSTEM) + 160


def test_retrieval_brings_back_the_relevant_old_turn(counter):
    s = make("retrieval", counter, k=1, top_k=1)
    s.commit("My salary is ₹1,20,000 per month", "Good to know")
    for i in range(6):
        s.commit(f"Tell me about topic {i} gardening", "ok")
    r = s.prepare("what is my salary?")
    assert r.account.retrieved_turns == (1,)
    assert users(r)[0] == "My salary is ₹1,20,000 per month"
    assert r.account.kept_turns == (1, 7)


def test_maintenance_calls_carry_their_own_request_and_tokens(counter):
    s = make("entity", counter)
    (call,) = s.commit("my name is Chiru", "Hi")
    assert call.kind == "extraction" and call.ok
    assert call.tokens == counter.request(call.request.system, call.request.messages)
    assert "my name is Chiru" in call.request.messages[0].content


def test_model_usage_and_body_are_kept_on_the_call(counter):
    from memory.types import Usage

    def model(request):
        return Completion("a summary", usage=Usage(40, 5), body={"model": "cheap"})

    s = make("summary", counter, summarize=model)
    (call,) = s.commit("hello", "hi")
    assert call.usage == Usage(40, 5) and call.body == {"model": "cheap"}


@pytest.mark.parametrize("name", ALL)
def test_a_fork_can_be_probed_without_changing_the_original(counter, name):
    s = make(name, counter)
    s.commit("my name is Chiru", "Hi Chiru")
    s.commit("my salary is 120000", "Noted")
    before = s.prepare("probe")
    fork = s.fork()
    fork.commit("my name is Kira", "ok")
    fork.commit("forget my name", "ok")
    after = s.prepare("probe")
    assert after == before
    assert len(s.history) == 2 and len(fork.history) == 4


@pytest.mark.parametrize("name", ALL)
def test_snapshot_and_restore_give_the_same_next_request(counter, name):
    import json

    s = make(name, counter, **({"budget": 200} if "budget" in _params(name) else {}))
    for i in range(8):
        s.commit(f"my item{i} is value{i} about salary", f"noted value{i} " * 5)
    data = json.loads(json.dumps(s.snapshot()))  # survives JSON
    fresh = make(name, counter, **({"budget": 200} if "budget" in _params(name) else {}))
    fresh.upkeep = Upkeep()  # restoring calls no model
    fresh.restore(data)
    assert fresh.prepare("what is my salary?") == s.prepare("what is my salary?")


def _params(name):
    from memory.registry import REGISTRY

    return {p.name for p in REGISTRY[name].params}


def test_restore_refuses_another_strategys_snapshot(counter):
    from memory.errors import InvalidParameter

    s = make("full", counter)
    with pytest.raises(InvalidParameter, match="cannot restore"):
        make("window", counter).restore(s.snapshot())
