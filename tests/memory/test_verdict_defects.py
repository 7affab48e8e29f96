"""Regression tests for issue 11's defects: each one failed on the code before the fix."""

from __future__ import annotations

import json

import pytest

from memory import standins
from memory.maintenance import (
    EXTRACTION_SYSTEM,
    SUMMARY_SYSTEM,
    Upkeep,
    extraction_request,
    summary_request,
)
from memory.registry import create
from memory.standins import ExtractiveSummariser, RuleExtractor
from memory.types import Completion, Turn
from tests.memory.conftest import FakeSummariser

SYSTEM_17 = (
    "You are FinCoach, a careful and friendly personal finance assistant for Indian users today."
)


class WordySummariser:
    """A summariser like a real model: a few dozen tokens, whatever it is given."""

    def __call__(self, request):
        return Completion(
            "The user greeted the assistant twice and asked how it was; the assistant replied "
            "politely each time and no facts or figures were stated so far in the chat."
        )


@pytest.mark.parametrize("name", ["summary_buffer", "hybrid"])
def test_a_message_that_fits_with_the_system_prompt_is_sent(counter, name):
    assert counter.count(SYSTEM_17) == 17
    strategy = create(
        name,
        SYSTEM_17,
        counter=counter,
        upkeep=Upkeep(WordySummariser(), RuleExtractor()),
        params={"budget": 600},
    )
    strategy.commit("Hi there!", "Hello! How can I help?")
    strategy.commit("How are you?", "Very well, thanks.")
    message = counter.text_of_tokens(581)
    assert counter.count(SYSTEM_17) + counter.count(message) == 598
    request = strategy.prepare(message)
    assert request.tokens.content <= 600
    assert request.messages[-1].content == message
    assert request.account.summary is None
    assert any("summary was left out" in n for n in request.account.notes)
    assert request.account.dropped_turns == (1, 2)
    # the summary stays in memory for later, smaller turns
    strategy.commit(message, "ok")
    assert strategy.summary


def test_a_message_that_cannot_fit_raises_and_changes_nothing(counter):
    from memory.errors import ContextOverflow

    s = create(
        "summary_buffer",
        SYSTEM_17,
        counter=counter,
        upkeep=Upkeep(WordySummariser()),
        params={"budget": 600},
    )
    s.commit("Hi there!", "Hello! How can I help?")
    s.commit("How are you?", "Very well, thanks.")
    before = json.dumps(s.snapshot())
    with pytest.raises(ContextOverflow):
        s.prepare(counter.text_of_tokens(584))
    assert json.dumps(s.snapshot()) == before


def test_shrunk_example_tiny_budget_with_equal_marks(counter):
    """Hypothesis' shrunk failure: budget 15, trigger = fold_to = 1, two one-word turns."""
    system = "You are FinCoach, a careful personal finance assistant. Be brief."
    s = create(
        "summary_buffer",
        system,
        counter=counter,
        upkeep=Upkeep(FakeSummariser()),
        params={"budget": 15, "trigger": 1.0, "fold_to": 1.0},
    )
    assert counter.count(system) + counter.count("rent") <= 15
    for _ in range(2):
        request = s.prepare("rent")
        assert request.tokens.content <= 15
        s.commit("rent", "")


def test_number_words_are_not_amounts_for_the_stand_ins(counter):
    turn = Turn(1, "What happens if I miss one EMI payment?", "Your lender may charge a fee.")
    reply = RuleExtractor()(extraction_request(counter, {}, turn)).text
    assert json.loads(reply)["set"] == {}, "a stand-in must not invent loan: ₹1"
    assert standins.stated_amounts("I took the loan two years ago") == frozenset()
    assert standins.stated_amounts("one lakh twenty thousand") == {120000}


def test_stand_in_summary_keeps_the_policy_number_over_chatter(counter):
    chatter = [
        Turn(i, f"We moved to Pune two years ago and I started cycling {w} months ago.", "Nice.")
        for i, w in enumerate(["three", "four", "five", "six", "seven", "eight"], start=1)
    ]
    policy = Turn(7, "My LIC policy number is 4471203.", "Noted.")
    summary = ExtractiveSummariser()(
        summary_request(counter, None, [*chatter, policy], words=40)
    ).text
    assert "4471203" in summary
    assert "two years ago" not in summary


def test_maintenance_prompts_keep_facts_from_either_side_attributed():
    for prompt in (SUMMARY_SYSTEM, EXTRACTION_SYSTEM):
        assert "either side" in prompt and "assistant" in prompt
    assert "the user stated." not in SUMMARY_SYSTEM


def test_stand_ins_keep_a_figure_the_assistant_gave(counter):
    turn = Turn(
        3,
        "How big should my emergency fund be?",
        "Aim for an emergency fund of ₹3,60,000, six months of expenses.",
    )
    summary = ExtractiveSummariser()(summary_request(counter, None, [turn])).text
    assert "The assistant said: Aim for an emergency fund of ₹3,60,000" in summary
    facts = json.loads(RuleExtractor()(extraction_request(counter, {}, turn)).text)["set"]
    assert facts == {"assistant_emergency_fund": "₹3,60,000"}


def test_hybrid_leaves_out_a_facts_block_that_leaves_no_room(counter):
    class BigFacts:
        def __call__(self, request):
            return Completion(json.dumps({"set": {"notes": counter.text_of_tokens(200)}}))

    options = {"upkeep": Upkeep(WordySummariser(), BigFacts())}
    # grounded=False: these facts are 200 tokens of filler, not values the turn states
    params = {"budget": 400, "grounded": False}
    s = create("hybrid", SYSTEM_17, counter=counter, params=params, **options)
    s.commit("Hi", "Hello")
    before = json.dumps(s.snapshot())
    message = counter.text_of_tokens(400 - 17)
    request = s.prepare(message)
    assert request.tokens.content <= 400 and request.system == SYSTEM_17
    assert any("known-facts block was left out" in n for n in request.account.notes)
    assert request.account.facts == {}
    assert s.facts, "the facts stay in memory"
    assert json.loads(before)["facts"] == s.snapshot()["facts"]
