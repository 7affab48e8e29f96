"""Grounded facts (memory/grounding.py): a value enters a fact store only if its turn states
it. The FinCoach demo's misreadings on the embedded model are the examples; hypothesis writes
turns stating an amount in any form and extractors that read it back right or wrong."""

from __future__ import annotations

import json
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from lanes.lane import MaintenanceRecord
from memory.grounding import is_grounded, split_grounded
from memory.maintenance import Upkeep
from memory.numbers import format_inr
from memory.registry import create
from memory.tokens import TokenCounter
from memory.types import Completion, Request
from present.anatomy_data import ungrounded_lines

COUNTER = TokenCounter("o200k_base")
TURN_1 = "Hi! I'm Chiru. My monthly take-home salary is ₹1,20,000.\nHello Chiru!"


def test_the_demos_misread_values_are_not_grounded() -> None:
    facts = {
        "name": "Chiru",
        "monthly_salary": 12000,  # what the embedded model stored for ₹1,20,000
        "assistant_suggested_emergency_fund": 12000,
        "salary_text": "12000",
    }
    kept, dropped = split_grounded(facts, TURN_1)
    assert kept == {"name": "Chiru"}
    assert set(dropped) == {"monthly_salary", "assistant_suggested_emergency_fund", "salary_text"}


def test_values_the_turn_states_in_another_form_are_grounded() -> None:
    for value in (120000, 120000.0, "₹1,20,000", "120,000", "Rs 1.2 lakh", "1.2L", "INR 120000"):
        assert is_grounded("monthly_salary", value, TURN_1), value
    assert is_grounded("risk", "risk-averse", "I'm a bit risk-averse, to be honest.")
    assert not is_grounded("risk", "cautious investor", "I'm a bit risk-averse, to be honest.")
    assert is_grounded("owns_car", True, "I have a car loan")
    assert not is_grounded("owns_house", True, "I have a car loan")
    assert not is_grounded("x", None, TURN_1) and not is_grounded("x", "", TURN_1)
    assert not is_grounded("x", ["Chiru"], TURN_1)  # not a value the store takes


def forms(amount: int) -> list[str]:
    """Ways a person writes `amount` rupees."""
    out = [format_inr(amount), f"{amount:,}", str(amount), f"Rs {amount}", f"INR {amount:,}"]
    if amount % 100_000 == 0:
        out.append(f"{amount // 100_000} lakh")
    if amount % 1000 == 0:
        out.append(f"{amount // 1000}k")
    return out


amounts = st.one_of(
    st.integers(1, 999).map(lambda n: n * 1000), st.integers(1, 99).map(lambda n: n * 100_000)
)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(amount=amounts, data=st.data())
def test_a_fact_stated_in_any_form_is_found_and_a_wrong_one_is_not(amount, data) -> None:
    said = data.draw(st.sampled_from(forms(amount)), label="said")
    read = data.draw(st.sampled_from([amount, *forms(amount)]), label="read back")
    turn = f"My monthly rent is {said} now."
    assert is_grounded("rent", read, turn)
    wrong = data.draw(st.sampled_from([amount // 10, amount * 10, amount + 1]), label="misread")
    assert not is_grounded("rent", wrong, turn)
    assert not is_grounded("rent", format_inr(Decimal(wrong)), turn)


class Extractor:
    """An extractor replying with fixed facts, whatever the turn."""

    def __init__(self, facts: dict[str, object]) -> None:
        self.reply = json.dumps({"set": facts, "delete": []}, ensure_ascii=False)

    def __call__(self, request: Request) -> Completion:
        return Completion(self.reply)


def test_entity_stores_grounded_values_and_records_the_others() -> None:
    extractor = Extractor({"name": "Chiru", "monthly_salary": 12000})
    # grounded: the misread 12000 is not stored; the rules read the salary as it was written
    for grounded, stored in ((True, {"name": "Chiru", "monthly_salary": "₹1,20,000"}),
                             (False, {"name": "Chiru", "monthly_salary": 12000})):  # fmt: skip
        lane = create("entity", "You are FinCoach.", counter=COUNTER,
                      upkeep=Upkeep(None, extractor), params={"grounded": grounded})  # fmt: skip
        lane.prepare("Hi! I'm Chiru. My monthly take-home salary is ₹1,20,000.")
        (call,) = lane.commit("Hi! I'm Chiru. My monthly take-home salary is ₹1,20,000.", "Hi")
        assert lane.facts == stored
        assert call.ungrounded == (("monthly_salary=12000",) if grounded else ())


def test_ungrounded_values_are_listed_per_lane() -> None:
    from types import SimpleNamespace

    lane = create("hybrid", "You are FinCoach.", counter=COUNTER,
                  upkeep=Upkeep.using(Extractor({"monthly_salary": 12000, "name": "Chiru"})))  # fmt: skip
    lane.prepare(TURN_1.splitlines()[0])
    calls = lane.commit(TURN_1.splitlines()[0], "Hello Chiru!")
    extraction = next(c for c in calls if c.kind == "extraction")
    record = MaintenanceRecord.of(extraction)
    assert record.ungrounded == ("monthly_salary=12000",)
    assert MaintenanceRecord.from_dict(json.loads(json.dumps(record.as_dict()))) == record
    turn = SimpleNamespace(turn=1, maintenance=(record,))  # what the lines read of a LaneTurn
    lines = ungrounded_lines({"hybrid": [turn]}, {"hybrid": "Hybrid"}, turn=1)  # type: ignore[dict-item]
    assert lines == [
        "Hybrid: 1 extracted value not stored, not in their turn (turn 1: monthly_salary=12000)"
    ]


def test_rules_fill_in_when_the_reply_held_nothing_grounded() -> None:
    said = "Hi! I'm Chiru. My monthly take-home salary is ₹1,20,000."
    lane = create("entity", "You are FinCoach.", counter=COUNTER,
                  upkeep=Upkeep(None, Extractor({"monthly_salary": 12000})))  # fmt: skip
    lane.prepare(said)
    (call,) = lane.commit(said, "Hello Chiru!")
    assert call.ungrounded == ("monthly_salary=12000",)
    assert lane.facts == {"name": "Chiru", "monthly_salary": "₹1,20,000"}
    assert set(call.filled_by_rules) == {f"{k}={json.dumps(v, ensure_ascii=False)}"
                                         for k, v in lane.facts.items()}  # fmt: skip
    record = MaintenanceRecord.of(call)
    assert MaintenanceRecord.from_dict(json.loads(json.dumps(record.as_dict()))) == record
    # a reply that holds the salary under its own key, in its own form: nothing is added
    lane = create("entity", "You are FinCoach.", counter=COUNTER,
                  upkeep=Upkeep(None, Extractor({"income": 120000, "user": "Chiru"})))  # fmt: skip
    lane.prepare(said)
    (call,) = lane.commit(said, "Hello Chiru!")
    assert lane.facts == {"income": 120000, "user": "Chiru"}
    assert call.ungrounded == () and call.filled_by_rules == ()


def test_rules_fill_in_what_a_grounded_reply_missed() -> None:
    """A small model that kept the name but not the salary stated beside it: the salary is
    read by the rules, recorded as filled in; what the model stored stays as it wrote it."""
    said = "Hi! I'm Chiru. My monthly take-home salary is ₹1,20,000."
    lane = create("entity", "You are FinCoach.", counter=COUNTER,
                  upkeep=Upkeep(None, Extractor({"user_name": "Chiru"})))  # fmt: skip
    lane.prepare(said)
    (call,) = lane.commit(said, "Hello Chiru!")
    assert call.ungrounded == ()
    assert lane.facts == {"user_name": "Chiru", "monthly_salary": "₹1,20,000"}
    assert call.filled_by_rules == ('monthly_salary="₹1,20,000"',)


def test_a_fact_copied_back_unchanged_is_not_called_ungrounded() -> None:
    """SmolLM2 copies the whole store back each turn: a value the store already holds under
    its key changes nothing and is not listed as ungrounded in a turn that does not say it."""
    first = "Hi! I'm Chiru. My monthly take-home salary is ₹1,20,000."
    lane = create("entity", "You are FinCoach.", counter=COUNTER,
                  upkeep=Upkeep(None, Extractor({"name": "Chiru"})))  # fmt: skip
    lane.prepare(first)
    lane.commit(first, "Hello Chiru!")
    then = "My monthly expenses come to about ₹60,000."
    lane.upkeep = Upkeep(None, Extractor({"name": "Chiru", "monthly_expenses": 60000}))
    lane.prepare(then)
    (call,) = lane.commit(then, "Noted.")
    assert call.ungrounded == ()
    assert lane.facts["monthly_expenses"] == 60000 and lane.facts["name"] == "Chiru"
