"""The fact-survival engine on conversations whose answers are known, with fake models."""

from __future__ import annotations

import csv
import io
import json
import threading
from dataclasses import replace

import pytest

from engines.survival import (
    CSV_COLUMNS,
    DEFAULT_FACTS,
    ERROR,
    IN_PAYLOAD,
    KEPT,
    LEAK,
    LOST,
    MISSED,
    NOT_IN_PAYLOAD,
    Fact,
    SurvivalConfig,
    SurvivalConfigError,
    SurvivalResult,
    estimate,
    load_facts,
    parse_turns,
    run_survival,
    script,
)
from engines.survival.verdicts import LEAK_FLAG
from memory.lane_spec import LaneSpec, parse_spec
from memory.maintenance import Upkeep
from memory.standins import StaticReply
from memory.types import Completion, Usage
from scenarios.filler import FillerTurn

NAME = DEFAULT_FACTS[0]


def echo_send(request, on_delta=None):
    """A model that can only repeat what the user said earlier in its payload."""
    said = [m.content for m in request.messages[:-1] if m.role == "user"]
    text = " ".join(said) or "I don't know."
    return StaticReply(text, usage=Usage(request.tokens.with_overhead, 5), model="echo")


def guessing_send(request, on_delta=None):
    """A model that always answers 'Chiru' and the salary, whatever it was shown."""
    return StaticReply("Your name is Chiru and you earn 1.2 lakh.", model="guess")


def shy_send(request, on_delta=None):
    return StaticReply("I'm not sure, could you remind me?", model="shy")


def config(*strategies: str, turns=(2, 4, 5, 10), facts=(NAME,), **kw) -> SurvivalConfig:
    return SurvivalConfig(
        facts=tuple(facts),
        probe_turns=tuple(turns),
        strategies=tuple(parse_spec(s) for s in strategies),
        **kw,
    )


def cells(result: SurvivalResult, verdict: str = "in_payload") -> dict:
    return {k: v[0] / v[1] for k, v in result.matrix(verdict).items() if v[1]}


def test_window_of_3_loses_turn_1_by_n5_full_buffer_keeps_it(counter):
    result = run_survival(config("window:k=3", "full"), send=echo_send, counter=counter)
    payload, recalled = cells(result, "in_payload"), cells(result, "recalled")
    w = "window (k=3)"
    assert payload[(w, 2)] == 1 and recalled[(w, 2)] == 1
    assert payload[(w, 4)] == 1  # turns 1-3 kept
    assert payload[(w, 5)] == 0 and recalled[(w, 5)] == 0
    assert payload[(w, 10)] == 0
    assert all(payload[("full", n)] == 1 for n in (2, 4, 5, 10))
    assert all(recalled[("full", n)] == 1 for n in (2, 4, 5, 10))
    by = {(r.strategy, r.probe_turn): r for r in result.rows}
    assert by[(w, 2)].verdict == KEPT and by[(w, 2)].found_in == ("turn 1",)
    assert by[(w, 5)].verdict == LOST and by[(w, 5)].kept_turns == (2, 3, 4)
    assert by[("full", 10)].kept_turns == tuple(range(1, 10))


def test_all_four_default_facts_survive_in_the_full_buffer(counter):
    result = run_survival(
        config("full", turns=(2, 20), facts=DEFAULT_FACTS), send=echo_send, counter=counter
    )
    assert len(result.rows) == 8
    assert all(r.in_payload and r.recalled for r in result.rows)
    matched = {r.fact: r.matched for r in result.rows}
    assert matched == {
        "name": "Chiru",
        "salary": "₹1,20,000",
        "expenses": "₹60,000",
        "fd": "₹50,000",
    }


def test_recalled_but_not_in_payload_is_flagged(counter):
    facts = DEFAULT_FACTS[:2]
    result = run_survival(
        config("window:k=1", turns=(2, 3), facts=facts), send=guessing_send, counter=counter
    )
    by = {(r.fact, r.probe_turn): r for r in result.rows}
    assert by[("name", 2)].verdict == KEPT and by[("name", 2)].flag == ""
    late = by[("name", 3)]
    assert late.in_payload is False and late.recalled is True
    assert late.verdict == LEAK and late.flag == LEAK_FLAG
    assert by[("salary", 3)].flag == LEAK_FLAG  # "1.2 lakh" matched ₹1,20,000
    assert result.matrix("leak")[("window (k=1)", 3)] == (2, 2)


def test_in_payload_but_not_recalled_is_the_models_failure(counter):
    result = run_survival(config("full", turns=(2,)), send=shy_send, counter=counter)
    (row,) = result.rows
    assert row.in_payload is True and row.recalled is False and row.verdict == MISSED


def test_payload_only_needs_no_model_and_gives_no_recall(counter):
    result = run_survival(config("window:k=3", "full"), counter=counter)
    assert result.mode == "payload-only" and result.provider_calls == 0
    assert {r.recalled for r in result.rows} == {None}
    assert {r.verdict for r in result.rows} == {IN_PAYLOAD, NOT_IN_PAYLOAD}
    assert cells(result, "recalled") == {}
    assert any("payload only" in n for n in result.notes)


def test_probes_do_not_change_the_conversation(counter):
    # probing at every turn must leave turn 12's payload exactly as probing only there
    strategies = ("full", "window:k=3", "summary_buffer:budget=400", "entity", "retrieval")
    every = run_survival(config(*strategies, turns=range(2, 13)), counter=counter)
    once = run_survival(config(*strategies, turns=(12,)), counter=counter)

    def at12(result):
        return {
            r.strategy: (r.in_payload, r.kept_turns, r.summarised_turns, r.probe_prompt_tokens)
            for r in result.rows
            if r.probe_turn == 12
        }

    assert at12(every) == at12(once)


def test_summary_and_facts_are_where_the_fact_is_found(counter):
    result = run_survival(
        config("summary_buffer:budget=300", "entity:k=1", "hybrid:budget=400", turns=(2, 12)),
        counter=counter,
    )
    by = {(r.strategy_name, r.probe_turn): r for r in result.rows}
    assert "summary" in by[("summary_buffer", 12)].found_in
    assert 1 in by[("summary_buffer", 12)].summarised_turns
    assert by[("entity", 12)].found_in == ("facts",)
    assert "facts" in by[("hybrid", 12)].found_in
    assert result.maintenance == "stand-in"


def test_same_inputs_give_the_same_rows(counter):
    cfg = config(
        "full", "window:k=2", "summary_buffer:budget=400", turns=(2, 6, 9), facts=DEFAULT_FACTS
    )
    a = run_survival(cfg, send=echo_send, counter=counter, workers=3)
    b = run_survival(cfg, send=echo_send, counter=counter, workers=1)
    strip = [replace(r, latency_s=None) for r in a.rows]
    assert strip == [replace(r, latency_s=None) for r in b.rows]


def test_generated_replies_go_through_send_and_fixed_replies_do_not(counter):
    calls = []

    def send(request, on_delta=None):
        calls.append(request.messages[-1].content)
        return StaticReply("A generated reply about budgets.")

    cfg = config("full", "window:k=3", turns=(2, 6), replies="generated")
    result = run_survival(cfg, send=send, counter=counter)
    assert result.provider_calls == len(calls) == 2 * 5 + 2 * 2  # 5 turns + 2 probes, per lane
    calls.clear()
    result = run_survival(replace(cfg, replies="fixed"), send=send, counter=counter)
    assert len(calls) == result.provider_calls == 4  # only the probes


def test_a_reply_that_fails_twice_is_replaced_by_a_fixed_reply(counter):
    def flaky(request, on_delta=None):
        if request.messages[-1].content.startswith("Hi! I'm Chiru"):
            return StaticReply("", complete=False, error=RuntimeError("server error"))
        return echo_send(request)

    result = run_survival(
        config("full", turns=(3,), replies="generated"), send=flaky, counter=counter
    )
    (row,) = result.rows
    assert row.in_payload and row.recalled  # the conversation went on with turn 1 in it
    assert any("failed twice" in n for n in result.notes)


def test_a_probe_reply_error_is_recorded_not_raised(counter):
    def broken(request, on_delta=None):
        raise ConnectionError("refused")

    result = run_survival(config("full", turns=(2,)), send=broken, counter=counter)
    (row,) = result.rows
    assert row.verdict == ERROR and "refused" in row.error and row.in_payload is True


def test_a_lane_that_overflows_reports_error_rows(counter):
    long_filler = (FillerTurn("word " * 400),)
    cfg = config("token_window:budget=300", "full", turns=(2, 4), filler=long_filler)
    result = run_survival(cfg, counter=counter)
    tw = [r for r in result.rows if r.strategy_name == "token_window"]
    assert [r.verdict for r in tw] == [IN_PAYLOAD, ERROR]
    assert "stopped at turn 2" in tw[1].error
    assert all(r.verdict == IN_PAYLOAD for r in result.rows if r.strategy_name == "full")


def test_cancel_keeps_the_rows_so_far(counter):
    cancel = threading.Event()
    seen = []

    def on_row(row):
        seen.append(row)
        if len(seen) == 3:
            cancel.set()

    cfg = config("full", "window:k=3", turns=(2, 5, 10, 20), facts=DEFAULT_FACTS)
    result = run_survival(
        cfg, send=echo_send, counter=counter, on_row=on_row, cancel=cancel, workers=1
    )
    assert result.cancelled
    assert 3 <= len(result.rows) < 32
    assert result.rows[:3] == seen[:3]


def test_progress_counts_calls_up_to_the_estimate(counter):
    cfg = config(
        "full", "entity", "summary_buffer:budget=400", turns=(2, 8), facts=DEFAULT_FACTS[:2]
    )

    def model(request):
        if "JSON" in request.system:
            return Completion('{"set": {}, "delete": []}')
        return Completion("The user introduced themselves.")

    est = estimate(cfg, with_model=True, counter=counter)
    assert est.probe_calls == 3 * 2 * 2 and est.reply_calls == 0
    assert est.maintenance_calls >= 7  # one extraction per entity turn at least
    seen = []
    result = run_survival(
        cfg, send=echo_send, upkeep=Upkeep.using(model), counter=counter,
        on_progress=seen.append, expected_calls=est.calls,
    )  # fmt: skip
    assert seen and seen[-1].done == result.calls
    assert [p.done for p in seen] == sorted(p.done for p in seen)
    assert seen[-1].rows == seen[-1].rows_total == 12
    assert result.provider_calls == est.probe_calls
    assert abs(result.maintenance_calls - est.maintenance_calls) <= 3
    assert result.maintenance == "model"


def test_estimate_without_a_model_counts_no_calls(counter):
    est = estimate(SurvivalConfig(), with_model=False, counter=counter)
    assert est.calls == 0 and est.rows == 4 * 6 * 5 and est.exact


def test_results_round_trip_through_json_and_csv(counter):
    result = run_survival(
        config("full", "window:k=3", turns=(2, 5)), send=echo_send, counter=counter
    )
    data = json.loads(result.to_json())
    assert data["mode"] == "model" and data["config"]["probe_turns"] == [2, 5]
    again = SurvivalResult.from_dict(data)
    assert again.rows == result.rows
    rows = list(csv.DictReader(io.StringIO(result.to_csv())))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert len(rows) == len(result.rows)
    assert {r["verdict"] for r in rows} == {KEPT, LOST}


def test_script_plants_at_the_chosen_turn_and_fills_the_rest():
    facts = (replace(DEFAULT_FACTS[0], plant_turn=3), replace(DEFAULT_FACTS[1], plant_turn=3))
    turns = script(SurvivalConfig(facts=facts, probe_turns=(6,)))
    assert [t.kind for t in turns] == ["filler", "filler", "plant", "filler", "filler"]
    assert turns[2].user == "Hi! I'm Chiru. My monthly take-home salary is ₹1,20,000."
    imported = (FillerTurn("mine", "recorded reply"),)
    turns = script(SurvivalConfig(probe_turns=(4,), filler=imported))
    assert [(t.user, t.fixed_reply) for t in turns[1:]] == [("mine", "recorded reply")] * 2


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"facts": ()}, "at least one fact"),
        ({"probe_turns": ()}, "at least one probe"),
        ({"probe_turns": (5, 2)}, "increasing"),
        ({"probe_turns": (1, 2)}, "no fact is stated before probe turn N=1"),
        ({"probe_turns": (2, 1001)}, "up to 1000"),
        ({"strategies": ()}, "at least one strategy"),
        ({"strategies": (LaneSpec("full"), LaneSpec("full"))}, "once"),
        ({"replies": "sometimes"}, "'fixed' or 'generated'"),
        ({"filler": ()}, "empty"),
        ({"facts": (Fact("x", "I say x.", "What?", ()),)}, "accepted answer"),
    ],
)
def test_bad_configs_say_what_to_change(changes, message):
    with pytest.raises(SurvivalConfigError, match=message):
        replace(SurvivalConfig(), **changes).validate()


def test_generated_replies_need_a_model():
    with pytest.raises(SurvivalConfigError, match="need a model"):
        run_survival(SurvivalConfig(replies="generated"))


def test_parse_turns_and_load_facts():
    assert parse_turns("2, 5 10,5") == (2, 5, 10)
    for bad, message in (("", "at least one"), ("2,x", "whole numbers"), ("1,3", "start at 2")):
        with pytest.raises(SurvivalConfigError, match=message):
            parse_turns(bad)
    facts = load_facts(
        {
            "facts": [
                {"key": "city", "plant": "I live in Pune.", "probe": "Where?", "answers": "Pune"}
            ]
        }
    )
    assert facts[0].answers == ("Pune",) and facts[0].plant_turn == 1
    with pytest.raises(SurvivalConfigError, match="fact 'a': 'probe' is missing"):
        load_facts([{"key": "a", "plant": "b", "answers": ["c"]}])
