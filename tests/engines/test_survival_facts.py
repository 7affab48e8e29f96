"""The survival lab states any fact: by the assistant, updated later, probed anywhere after it,
from a facts file with a clear error for every malformed field."""

from __future__ import annotations

import json

import pytest

from engines.survival import (
    BOTH,
    CURRENT,
    DEFAULT_FACTS,
    EXAMPLE_FACTS,
    MISSING,
    STALE,
    STALE_IN_PAYLOAD,
    STALE_RECALL,
    Estimate,
    Fact,
    SurvivalConfig,
    SurvivalConfigError,
    SurvivalResult,
    Update,
    facts_json,
    parse_facts_json,
    plan_sentence,
    run_survival,
    script,
)
from memory.lane_spec import LaneSpec
from memory.maintenance import Upkeep
from memory.standins import StaticReply

FUND, RENT = EXAMPLE_FACTS


def cfg(*names: str, facts=EXAMPLE_FACTS, turns=(3, 8, 12), **kw) -> SurvivalConfig:
    return SurvivalConfig(
        facts=tuple(facts),
        probe_turns=tuple(turns),
        strategies=tuple(LaneSpec(n) for n in names),
        **kw,
    )


def rows_by(result: SurvivalResult) -> dict[tuple[str, str, int], object]:
    return {(r.strategy, r.fact, r.probe_turn): r for r in result.rows}


def test_an_assistant_fact_is_stated_in_the_reply_at_its_turn():
    turns = script(cfg("full"))
    t2 = turns[1]
    assert t2.turn == 2 and t2.scripted
    assert t2.user == FUND.ask and t2.fixed_reply == FUND.plant
    assert turns[8].user == RENT.updates[0].text and turns[8].kind == "update"


def test_an_assistant_fact_survives_in_full_and_is_lost_by_a_short_window():
    result = run_survival(cfg("full"))
    rows = rows_by(result)
    assert rows[("full", "emergency_fund", 3)].in_payload
    assert rows[("full", "emergency_fund", 3)].found_in == ("reply 2",)
    assert rows[("full", "emergency_fund", 3)].speaker == "assistant"
    window = cfg("window", turns=(3, 8))
    window = SurvivalConfig(
        facts=window.facts,
        probe_turns=window.probe_turns,
        strategies=(LaneSpec("window", {"k": 1}),),
    )
    rows = rows_by(run_survival(window))
    assert rows[("window (k=1)", "emergency_fund", 3)].in_payload
    assert not rows[("window (k=1)", "emergency_fund", 8)].in_payload


def test_updated_fact_payload_states_current_both_stale_missing():
    # rent 25,000 at turn 1, 28,000 at turn 9; probes at 8 (before), 10 and 12 (after)
    config = SurvivalConfig(
        facts=(RENT,),
        probe_turns=(8, 10, 12),
        strategies=(
            LaneSpec("full"),
            LaneSpec("window", {"k": 1}),
            LaneSpec("window", {"k": 2}),
        ),
    )
    rows = rows_by(run_survival(config))
    assert rows[("full", "rent", 8)].payload_state == CURRENT  # no update yet: 25,000 is right
    assert rows[("full", "rent", 8)].answers == ("₹25,000",)
    assert rows[("full", "rent", 10)].payload_state == BOTH
    assert rows[("full", "rent", 10)].answers == ("₹28,000",)
    assert rows[("full", "rent", 10)].stale_answers == ("₹25,000",)
    assert rows[("window (k=1)", "rent", 10)].payload_state == CURRENT  # only turn 9 is kept
    assert rows[("window (k=1)", "rent", 12)].payload_state == MISSING
    assert rows[("window (k=1)", "rent", 8)].payload_state == MISSING


def test_a_summary_that_kept_only_the_old_value_is_stale_in_payload():
    def summarise(request):
        from memory.types import Completion

        return Completion("The user said their rent is ₹25,000 a month.")  # never updates

    config = SurvivalConfig(facts=(RENT,), probe_turns=(11,), strategies=(LaneSpec("summary"),))
    (row,) = run_survival(config, upkeep=Upkeep(summarise)).rows
    assert row.payload_state == STALE and row.in_payload is False
    assert row.verdict == STALE_IN_PAYLOAD


def test_recalling_the_old_value_after_an_update_is_its_own_failure():
    def old_rent(request, on_delta=None):
        return StaticReply("Your rent is ₹25,000 a month.", model="stale")

    def both(request, on_delta=None):
        return StaticReply("It went from ₹25,000 to ₹28,000.", model="both")

    config = SurvivalConfig(facts=(RENT,), probe_turns=(11,), strategies=(LaneSpec("full"),))
    (row,) = run_survival(config, send=old_rent).rows
    assert row.recall_state == STALE and row.recalled is False and row.verdict == STALE_RECALL
    (row,) = run_survival(config, send=both).rows
    assert row.recall_state == BOTH and row.recalled is True


def test_probes_come_anywhere_after_the_fact_they_test():
    late = Fact("city", "I live in Pune.", "Where do I live?", ("Pune",), plant_turn=6)
    config = SurvivalConfig(
        facts=(DEFAULT_FACTS[0], late), probe_turns=(3, 7), strategies=(LaneSpec("full"),)
    )
    result = run_survival(config)
    assert sorted((r.fact, r.probe_turn) for r in result.rows) == [
        ("city", 7),
        ("name", 3),
        ("name", 7),
    ]
    assert config.rows_total == 3
    with pytest.raises(SurvivalConfigError, match="no probe turn comes after it"):
        SurvivalConfig(facts=(late,), probe_turns=(7,)).validate() and SurvivalConfig(
            facts=(DEFAULT_FACTS[0], late), probe_turns=(3, 5)
        ).validate()


def test_facts_file_round_trip_and_config_round_trip():
    text = facts_json(EXAMPLE_FACTS)
    assert parse_facts_json(text) == EXAMPLE_FACTS
    config = cfg("full", system_prompt="You are a terse assistant.")
    again = SurvivalConfig.from_dict(json.loads(json.dumps(config.to_dict())))
    assert again == config
    # a saved run from before (old field names) still loads
    old = {"key": "n", "plant": "I'm Asha.", "probe": "Name?", "answers": "Asha", "plant_turn": 2}
    assert parse_facts_json(json.dumps([old]))[0] == Fact(
        "n", "I'm Asha.", "Name?", ("Asha",), "", 2
    )


GOOD = {"key": "rent", "text": "My rent is ₹25,000.", "probe": "Rent?", "answer": "₹25,000"}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"turn": "one"}, "fact 'rent': turn is a whole number of turns .* got 'one'"),
        ({"plant_turn": "one"}, "plant_turn is a whole number"),
        ({"turn": 0}, "'turn' counts from 1, got 0"),
        ({"turn": True}, "turn is a whole number"),
        ({"turn": 2.5}, "got 2.5"),
        ({"key": 7}, "fact 1: 'key' must be text, got 7"),
        ({"text": None}, "'text' is missing"),
        ({"text": "   "}, "'text' is empty"),
        ({"probe": ["a"]}, "'probe' must be text, got a list"),
        ({"answer": []}, "needs at least one non-empty answer"),
        ({"answer": [1, 2]}, "'answer' is a text or a list of texts"),
        ({"answer": {"a": 1}}, "got an object"),
        ({"speaker": "bot"}, "'speaker' is \"user\" or \"assistant\", got 'bot'"),
        ({"updates": {}}, "updates must be a list"),
        ({"updates": [5]}, "update 1 must be a JSON object"),
        ({"updates": [{"text": "x", "answer": "y"}]}, "update 1: 'turn' is missing"),
        ({"updates": [{"turn": 1, "text": "x", "answer": "y"}]}, "must come after turn 1"),
        ({"updates": [{"turn": 3, "text": "x"}]}, "update 1: 'answer' .* is missing"),
        ({"label": 3}, "'label' must be text"),
    ],
)
def test_every_malformed_field_gets_its_own_error(change, message):
    fact = {**GOOD, **change}
    for key in [k for k, v in change.items() if v is None]:
        fact.pop(key)
    with pytest.raises(SurvivalConfigError, match=message):
        parse_facts_json(json.dumps([fact]))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[" * 100_000 + "]" * 100_000, "nests too deeply"),
        ("{not json", "not valid JSON"),
        ("[]", "non-empty JSON list"),
        ('"facts"', "non-empty JSON list"),
        ("[3]", "fact 1 must be a JSON object, got 3"),
        (json.dumps({"facts": [GOOD, {**GOOD, "answer": 5}]}), "fact 'rent': 'answer'"),
    ],
)
def test_bad_facts_files_get_a_clear_error_not_a_crash(text, message):
    with pytest.raises(SurvivalConfigError, match=message):
        parse_facts_json(text)


def test_deeply_nested_value_inside_a_field_is_a_clear_error():
    deep: object = "x"
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(SurvivalConfigError, match="'text' must be text, got a list"):
        SurvivalConfig.from_dict({"facts": [{**GOOD, "text": deep}]})


def test_config_from_dict_names_the_bad_field():
    for data, message in (
        ({"probe_turns": ["2"]}, "probe_turns is a list of whole numbers"),
        ({"strategies": ["full"]}, "strategies is a list of"),
        ({"filler": 3}, "filler is"),
        ({"system_prompt": 5}, "system_prompt must be str"),
    ):
        with pytest.raises(SurvivalConfigError, match=message):
            SurvivalConfig.from_dict(data)
    with pytest.raises(SurvivalConfigError, match="system prompt is empty"):
        SurvivalConfig.from_dict({"system_prompt": "  "}).validate()


def test_the_custom_system_prompt_is_what_every_lane_sends():
    seen: list[str] = []

    def send(request, on_delta=None):
        seen.append(request.system)
        return StaticReply("Chiru")

    config = cfg("full", "window", facts=(DEFAULT_FACTS[0],), turns=(2,), system_prompt="Be terse.")
    run_survival(config, send=send)
    assert seen and all(s == "Be terse." for s in seen)


def test_plan_sentence_is_one_for_page_and_cli():
    config = cfg("full")
    est = Estimate(3, 10, 0, 1000, 0, 200, 6, True)
    assert plan_sentence(config, est, with_model=True).startswith(
        "2 facts × 1 strategies × 3 probe turns = 6 probes. About 13 model calls"
    )
    assert "No model calls" in plan_sentence(config, est, with_model=False)


def test_stand_in_upkeep_is_stated_on_every_row_it_shaped():
    config = cfg("full", "summary", facts=(RENT,), turns=(10,))
    result = run_survival(config)
    upkeep = {r.strategy: r.upkeep for r in result.rows}
    assert upkeep == {"full": "none", "summary": "stand-in"}
    assert result.stand_in_upkeep
    assert "upkeep" in result.to_csv().splitlines()[0]
    again = SurvivalResult.from_dict(json.loads(result.to_json()))
    assert again.rows == result.rows


def test_a_row_saved_before_the_new_fields_still_loads():
    result = run_survival(cfg("full", facts=(DEFAULT_FACTS[0],), turns=(2,)))
    data = json.loads(result.to_json())
    for row in data["rows"]:
        for key in ("speaker", "stale_answers", "payload_state", "recall_state", "upkeep"):
            row.pop(key)
    (row,) = SurvivalResult.from_dict(data).rows
    assert row.upkeep == "" and row.stale_answers == () and row.in_payload


def test_update_dataclass_in_expected_at():
    fact = Fact("x", "x is 1", "x?", ("1",), updates=(Update(3, "x is 2", ("2",)),))
    assert fact.expected_at(2) == (("1",), ())
    assert fact.expected_at(3) == (("1",), ())  # the probe at 3 sees turns 1-2
    assert fact.expected_at(4) == (("2",), ("1",))


def test_the_readme_facts_file_example_loads():
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```json\n(.*?)```", readme, re.S)
    assert block, "README.md shows a facts file"
    facts = parse_facts_json(block.group(1))
    assert [f.key for f in facts] == ["rent", "fund"]
    assert facts[0].updates[0].turn == 9 and facts[1].speaker == "assistant"


def test_moving_a_fact_past_its_update_is_refused():
    from dataclasses import replace

    moved = replace(RENT, plant_turn=10)
    with pytest.raises(SurvivalConfigError, match="updates must come after turn 10"):
        SurvivalConfig(facts=(moved,), probe_turns=(12,)).validate()
