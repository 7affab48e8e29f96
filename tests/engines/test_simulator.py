"""The token-growth simulator: seed 000's table to the token (docs/seed-figures.md), and the
projected strategies."""

from __future__ import annotations

import csv
import io
import json

import pytest

from engines import simulator
from engines.simulator import (
    Price,
    SimConfig,
    SimulationError,
    matches_seed,
    simulate,
    user_turns_from,
)
from memory.lane_spec import parse_spec
from scenarios import fincoach


def choices(*names):
    return tuple(parse_spec(n) for n in names)


def test_defaults_reproduce_the_seed_table_exactly(counter):
    sim = simulate(SimConfig(), counter=counter)
    rows = sim.rows["full"]
    assert sim.system_tokens == 132
    assert [r.message_tokens for r in rows] == [17, 9, 16, 9, 10, 12, 15, 11, 11, 14]
    assert [r.history_tokens for r in rows] == [17, 106, 202, 291, 381, 473, 568, 659, 750, 844]
    assert [r.prompt_tokens for r in rows] == [149, 238, 334, 423, 513, 605, 700, 791, 882, 976]
    assert [r.sent_so_far for r in rows] == [
        149, 387, 721, 1144, 1657, 2262, 2962, 3753, 4635, 5611,
    ]  # fmt: skip
    totals = sim.totals("full")
    assert totals.prompt_tokens == 5611 and f"{totals.growth:.2f}" == "6.55"
    assert matches_seed(sim)


def test_the_printout_is_the_seeds(counter):
    text = simulator.format_seed_table(simulate(SimConfig(), counter=counter), "full")
    assert text.startswith("System prompt: 132 tokens on every call")
    assert "  10 |         14 |          844 |           976 |       5,611" in text
    assert text.endswith("Growth factor, turn 10 over turn 1: 6.55x")


def test_reply_length_changes_the_table(counter):
    sim = simulate(SimConfig(reply_tokens=40), counter=counter)
    prompts = [r.prompt_tokens for r in sim.rows["full"]]
    assert prompts[0] == 149 and prompts[1] == 149 + 40 + 9
    assert not matches_seed(sim)


def test_full_grows_linearly_per_call_and_quadratically_in_total(counter):
    sim = simulate(SimConfig(turns=200), counter=counter)
    rows = sim.rows["full"]
    steps = [b.prompt_tokens - a.prompt_tokens for a, b in zip(rows, rows[1:], strict=False)]
    assert min(steps) > 80  # every turn adds its reply and its message
    # quadratic: doubling the turns roughly quadruples the total
    assert 3.5 < rows[199].sent_so_far / rows[99].sent_so_far < 4.5


def test_a_window_plateaus(counter):
    sim = simulate(SimConfig(turns=60, strategies=choices("window:k=3")), counter=counter)
    prompts = [r.prompt_tokens for r in sim.rows["window (k=3)"]]
    assert max(prompts[10:]) - min(prompts[10:]) < 30  # flat once the window is full
    assert max(prompts) < 132 + 4 * (80 + 20)


def test_summary_buffer_stays_under_its_budget_and_pays_for_summaries(counter):
    cfg = SimConfig(turns=100, strategies=choices("summary_buffer:budget=600"), summary_tokens=150)
    sim = simulate(cfg, counter=counter)
    label = "summary_buffer (budget=600)"
    rows = sim.rows[label]
    assert max(r.prompt_tokens for r in rows) <= 600
    totals = sim.totals(label)
    assert totals.upkeep_calls > 0 and totals.upkeep_output_tokens == 150 * totals.upkeep_calls
    assert rows[-1].summarised_turns > 80
    longer = simulate(
        SimConfig(turns=100, strategies=choices("summary_buffer:budget=600"), summary_tokens=250),
        counter=counter,
    )
    # a longer assumed summary leaves less room for verbatim turns
    assert longer.rows[label][-1].kept_turns < rows[-1].kept_turns


def test_turns_cycle_up_to_1000(counter):
    cfg = SimConfig(turns=1000, strategies=choices("window:k=2"))
    sim = simulate(cfg, counter=counter)
    rows = sim.rows["window (k=2)"]
    assert len(rows) == 1000
    assert rows[10].message_tokens == rows[0].message_tokens  # turn 11 is turn 1 again


def test_costs_per_strategy(counter):
    sim = simulate(SimConfig(strategies=choices("full", "window:k=3")), counter=counter)
    price = Price("test", 2.0, 10.0)
    table = {row["strategy"]: row for row in sim.cost_table([price])}
    full = sim.totals("full")
    assert full.input_tokens == 5611 and full.output_tokens == 800
    assert table["full"]["test $"] == pytest.approx((5611 * 2 + 800 * 10) / 1e6, abs=1e-4)
    assert table["window (k=3)"]["test $"] < table["full"]["test $"]


def test_default_prices_exist_and_are_editable_values():
    prices = simulator.default_prices()
    assert prices and all(p.input_per_m >= 0 and p.output_per_m >= 0 for p in prices)
    assert (
        simulator.FALLBACK_PRICES[0].cost(1_000_000, 0) == simulator.FALLBACK_PRICES[0].input_per_m
    )


def test_overhead_adds_the_template_estimate(counter):
    plain = simulate(SimConfig(), counter=counter).rows["full"]
    framed = simulate(SimConfig(overhead=True), counter=counter).rows["full"]
    # system + one user message, 3 tokens each, plus 3 to prime the reply
    assert framed[0].prompt_tokens - plain[0].prompt_tokens == 9
    assert framed[1].prompt_tokens - plain[1].prompt_tokens == 15


def test_csv_and_json_exports(counter):
    sim = simulate(SimConfig(strategies=choices("full", "window")), counter=counter)
    rows = list(csv.DictReader(io.StringIO(sim.to_csv())))
    assert len(rows) == 20 and rows[9]["prompt_tokens"] == "976"
    data = json.loads(sim.to_json())
    assert data["system_tokens"] == 132 and set(data["rows"]) == {"full", "window (k=3)"}


def test_user_turn_sources():
    assert user_turns_from("fincoach") == fincoach.SIMULATED_TURNS
    assert len(user_turns_from("filler")) >= 200
    with pytest.raises(SimulationError):
        user_turns_from("nope")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"turns": 0}, "1 to 1000"),
        ({"turns": 1001}, "1 to 1000"),
        ({"reply_tokens": -1}, "reply length"),
        ({"user_turns": ()}, "at least one user turn"),
        ({"strategies": ()}, "at least one strategy"),
        ({"strategies": choices("full", "full")}, "once"),
        ({"summary_tokens": 0}, "summary length"),
    ],
)
def test_bad_inputs(changes, message):
    with pytest.raises(SimulationError, match=message):
        SimConfig(**changes).validate()


def test_config_round_trips_through_plain_data_and_names_bad_fields():
    config = SimConfig(turns=40, strategies=(parse_spec("window:k=2"),), overhead=True)
    again = SimConfig.from_dict(json.loads(json.dumps(config.to_dict())))
    assert again == config
    assert SimConfig.from_dict({}) == SimConfig()
    for data, message in (
        ({"turns": "ten"}, "turns must be a whole number, got 'ten'"),
        ({"reply_tokens": True}, "reply_tokens must be a whole number"),
        ({"user_turns": "hi"}, "user_turns is a list of texts"),
        ({"strategies": ["full"]}, "strategies is a list of"),
        ({"overhead": "yes"}, "overhead must be bool"),
        ([], "a simulator config is a JSON object"),
    ):
        with pytest.raises(SimulationError, match=message):
            SimConfig.from_dict(data)
