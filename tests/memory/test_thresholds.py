"""Behaviour exactly at the trigger threshold, one token below and one above (seed 004's check,
quoted in docs/seed-figures.md)."""

from __future__ import annotations

import pytest

from memory.maintenance import Upkeep
from memory.registry import create
from tests.memory.conftest import FakeSummariser

SYSTEM = "You are terse."


@pytest.mark.parametrize(("offset", "folds"), [(-1, False), (0, False), (1, True)])
def test_summary_buffer_folds_only_above_the_threshold(counter, offset, folds):
    budget, trigger = 200, 0.5  # threshold = 100 tokens at rest
    s = create(
        "summary_buffer",
        SYSTEM,
        counter=counter,
        upkeep=Upkeep(FakeSummariser("short")),
        params={"budget": budget, "trigger": trigger},
    )
    assert s.threshold == 100
    system = counter.count(SYSTEM)
    user = counter.text_of_tokens(20)
    reply = counter.text_of_tokens(100 - system - 20 + offset)
    calls = s.commit(user, reply)
    assert s.resting_tokens() <= 100 or not folds
    assert bool(calls) is folds
    assert (s.summarised == [1]) is folds


@pytest.mark.parametrize(("offset", "kept"), [(-1, (1,)), (0, (1,)), (1, ())])
def test_token_window_at_the_exact_budget(counter, offset, kept):
    budget = 100
    s = create("token_window", SYSTEM, counter=counter, params={"budget": budget})
    s.commit(counter.text_of_tokens(10), counter.text_of_tokens(10))
    new = counter.text_of_tokens(budget - counter.count(SYSTEM) - 20 + offset)
    r = s.prepare(new)
    assert r.account.kept_turns == kept
    assert r.tokens.content <= budget


@pytest.mark.parametrize(("offset", "overflows"), [(0, False), (1, True)])
def test_new_message_exactly_filling_the_budget_is_sent(counter, offset, overflows):
    from memory.errors import ContextOverflow

    s = create("token_window", SYSTEM, counter=counter, params={"budget": 50})
    text = counter.text_of_tokens(50 - counter.count(SYSTEM) + offset)
    if overflows:
        with pytest.raises(ContextOverflow):
            s.prepare(text)
    else:
        assert s.prepare(text).tokens.content == 50


def test_once_triggered_the_summary_buffer_folds_down_to_fold_to(counter):
    budget = 400
    s = create(
        "summary_buffer",
        SYSTEM,
        counter=counter,
        upkeep=Upkeep(FakeSummariser("short")),
        params={"budget": budget, "trigger": 0.8, "fold_to": 0.4},
    )
    resting = []
    for _ in range(30):
        s.commit(counter.text_of_tokens(20), counter.text_of_tokens(20))
        resting.append(s.resting_tokens())
    assert max(resting) <= 320
    # a saw-tooth: it falls to the low-water mark, then climbs back to the trigger
    drops = [b for a, b in zip(resting, resting[1:], strict=False) if b < a]
    assert drops and all(d <= 160 for d in drops)
    assert max(resting) > 280


def test_fold_to_above_the_trigger_is_refused(counter):
    from memory.errors import InvalidParameter

    with pytest.raises(InvalidParameter, match="fold_to"):
        create(
            "summary_buffer",
            SYSTEM,
            counter=counter,
            upkeep=Upkeep(FakeSummariser()),
            params={"trigger": 0.5, "fold_to": 0.7},
        )
