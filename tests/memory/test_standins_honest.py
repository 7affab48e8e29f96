"""The stand-ins never invent: every value they extract and every sentence they summarise
is stated in the text they were given (hypothesis)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from memory.maintenance import extraction_request, summary_request
from memory.numbers import amounts_in, parse_amount
from memory.standins import ExtractiveSummariser, RuleExtractor, stated_amounts
from memory.tokens import TokenCounter
from memory.types import Turn

COUNTER = TokenCounter("o200k_base")
WORDS = (
    "one two three twenty hundred a lakh thousand crore EMI loan rent salary FD SIP policy "
    "emergency fund expenses ₹50,000 1,20,000 50k 3 years ago I'm Asha my is of miss payment "
    "Rs. 4471203 the aim for"
).split()
sentence = st.lists(st.sampled_from(WORDS), min_size=1, max_size=14).map(" ".join)
text = st.lists(sentence, min_size=1, max_size=4).map(". ".join)


@settings(max_examples=150, derandomize=True, deadline=None)
@given(user=text, reply=text)
def test_extracted_values_are_stated_in_the_turn(user, reply):
    turn = Turn(1, user, reply)
    facts = json.loads(RuleExtractor()(extraction_request(COUNTER, {}, turn)).text)["set"]
    both = f"{user} {reply}"
    readable = set()
    for part in (user, reply):
        readable |= amounts_in(part) | stated_amounts(part)
    has_figure = any(ch.isdigit() for ch in both) or any(
        w in both.lower() for w in ("lakh", "thousand", "crore")
    )
    for key, value in facts.items():
        if key == "name":
            assert value in user
            continue
        # no figure, no scale word: number words alone ("one EMI") never make an amount
        assert has_figure, (key, value)
        amount = parse_amount(value)
        assert amount is not None and amount in readable, (key, value)


@settings(max_examples=150, derandomize=True, deadline=None)
@given(user=text, reply=text)
def test_summary_sentences_are_quoted_from_the_turns(user, reply):
    summary = ExtractiveSummariser()(summary_request(COUNTER, None, [Turn(1, user, reply)])).text
    if summary.startswith("The user has not stated"):
        return
    for part in summary.split("The ")[1:]:
        who, _, said = part.partition(" said: ")
        assert who in ("user", "assistant")
        source = user if who == "user" else reply
        assert said.strip() in source
