"""A summariser that raises or an extractor that returns junk never fails the turn or loses memory."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memory.maintenance import Upkeep
from memory.registry import create
from memory.types import Completion
from tests.memory.conftest import FakeExtractor, FakeSummariser

SYSTEM = "You are FinCoach."


def raising(request):
    raise TimeoutError("model timed out")


@pytest.mark.parametrize(
    "reply", ["not json at all", '{"set": {"name": "Chiru"', "[1, 2]", '{"set": [], "delete": 3}']
)
@pytest.mark.parametrize("name", ["entity", "hybrid"])
def test_invalid_extractor_json_keeps_the_facts(counter, name, reply):
    extractor = FakeExtractor()
    s = create(name, SYSTEM, counter=counter, upkeep=Upkeep(FakeSummariser(), extractor))
    s.commit("my name is Chiru", "Hi Chiru")
    assert s.facts == {"name": "Chiru"}
    s.upkeep = replace(s.upkeep, extract=lambda request: Completion(reply))
    calls = s.commit("my city is Pune", "ok")
    failed = [c for c in calls if c.kind == "extraction"]
    assert failed and not failed[0].ok and failed[0].reply == reply
    assert "JSON" in failed[0].error or "json" in failed[0].error.lower()
    assert s.facts == {"name": "Chiru"}
    assert len(s.history) == 2  # the turn still completed


def test_fenced_json_from_a_chatty_model_is_accepted(counter):
    s = create("entity", SYSTEM, counter=counter, upkeep=Upkeep(extract=FakeExtractor()))
    s.upkeep = Upkeep(
        extract=lambda r: Completion('Sure!\n```json\n{"set": {"name": "Chiru"}}\n```')
    )
    (call,) = s.commit("hello, Chiru here", "hi")
    assert call.ok and s.facts == {"name": "Chiru"}


def test_raising_summariser_keeps_summary_and_turns(counter):
    s = create(
        "summary", SYSTEM, counter=counter, upkeep=Upkeep(FakeSummariser("Chiru earns 1.2L"))
    )
    s.commit("I'm Chiru", "hi")
    s.upkeep = Upkeep(raising)
    (call,) = s.commit("my rent is 20k", "ok")
    assert not call.ok and "TimeoutError" in call.error and call.reply is None
    assert s.summary == "Chiru earns 1.2L"
    # the unsummarised turn is still sent verbatim: nothing is lost
    r = s.prepare("next")
    assert [m.content for m in r.messages] == ["my rent is 20k", "ok", "next"]
    # once the summariser works again, the pending turn is folded in
    s.upkeep = Upkeep(FakeSummariser())
    s.commit("next", "fine")
    assert s.summarised == [1, 2, 3]


def test_summary_buffer_with_a_failing_summariser_still_respects_the_budget(counter):
    budget = counter.count(SYSTEM) + 60
    s = create(
        "summary_buffer", SYSTEM, counter=counter, upkeep=Upkeep(raising), params={"budget": budget}
    )
    for _ in range(6):
        calls = s.commit(counter.text_of_tokens(10), counter.text_of_tokens(10))
    assert calls and not calls[-1].ok and s.summary is None
    r = s.prepare(counter.text_of_tokens(10))
    assert r.tokens.content <= budget
    assert r.account.dropped_turns, "turns that could not be folded are left out, and marked"
    assert r.account.notes


def test_empty_summary_is_a_recorded_failure(counter):
    s = create("summary", SYSTEM, counter=counter, upkeep=Upkeep(FakeSummariser("   ")))
    (call,) = s.commit("a", "b")
    assert not call.ok and "empty" in call.error and s.summary is None
