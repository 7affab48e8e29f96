"""The auto-tuner: its winner meets the target, nothing cheaper that met it was skipped, the
bisection agrees with trying every value, and the search is bounded and reproducible."""

from __future__ import annotations

import json
import threading
from dataclasses import replace

import pytest

from engines.survival import SurvivalConfig, run_survival
from engines.tune import STOP_CANCELLED, STOP_DONE, STOP_TRIALS, Target, ladder, tune
from memory.lane_spec import LaneSpec
from memory.maintenance import Upkeep
from memory.registry import REGISTRY, Param

CONFIG = SurvivalConfig(probe_turns=(12,))


@pytest.fixture(scope="module")
def result():
    return tune(CONFIG, Target(1.0), strategies=("window", "token_window", "summary_buffer"))


def test_the_winner_meets_the_target_and_nothing_that_met_it_was_cheaper(result):
    winner = result.winner
    assert winner is not None and winner.meets and winner.share == 1.0
    met = [t for t in result.trials if t.meets]
    assert all(t.tokens_per_turn >= winner.tokens_per_turn for t in met)
    assert result.stop_reason == STOP_DONE


def test_the_winners_verdict_holds_when_run_again_by_the_survival_lab(result):
    rows = run_survival(
        SurvivalConfig(probe_turns=(12,), strategies=(result.winner.choice,)), workers=1
    ).rows
    assert rows and all(r.in_payload for r in rows)


def test_bisection_finds_the_same_smallest_window_as_trying_every_k():
    found = tune(CONFIG, Target(1.0), strategies=("window",))
    best = found.winner
    assert best is not None
    every = []
    for k in range(0, 13):
        rows = run_survival(
            SurvivalConfig(probe_turns=(12,), strategies=(LaneSpec("window", {"k": k}),))
        ).rows
        every.append((k, all(r.in_payload for r in rows)))
    smallest = min(k for k, ok in every if ok)
    assert best.choice.params.get("k", 3) == smallest
    assert len(found.trials) < len(every)  # a search, not a grid dump


def test_the_frontier_trades_tokens_for_facts(result):
    frontier = result.frontier
    assert len(frontier) >= 2
    for a, b in zip(frontier, frontier[1:], strict=False):
        assert a.tokens_per_turn <= b.tokens_per_turn and a.share < b.share
    for t in result.trials:  # every trial is on the frontier or beaten by a point of it
        if t.error is None:
            assert any(
                f.tokens_per_turn <= t.tokens_per_turn and f.share >= t.share for f in frontier
            )


def test_the_same_seed_gives_the_same_trials_and_limits_stop_the_search():
    a = tune(CONFIG, strategies=("summary_buffer",), seed=3)
    b = tune(CONFIG, strategies=("summary_buffer",), seed=3)
    assert [t.as_dict() for t in a.trials] == [t.as_dict() for t in b.trials]
    short = tune(CONFIG, strategies=("summary_buffer",), max_trials=3)
    assert len(short.trials) == 3 and short.stop_reason == STOP_TRIALS
    cancel = threading.Event()
    cancel.set()
    none = tune(CONFIG, strategies=("window",), cancel=cancel)
    assert none.trials == [] and none.stop_reason == STOP_CANCELLED
    assert "0 settings tried" in none.summary()


def test_a_partial_target_and_probe_turn_selection():
    config = SurvivalConfig(probe_turns=(4, 12))
    strict = tune(config, Target(1.0), strategies=("window",)).winner
    loose = tune(config, Target(1.0, at=(4,)), strategies=("window",)).winner
    assert strict is not None and loose is not None
    assert loose.tokens_per_turn < strict.tokens_per_turn
    with pytest.raises(ValueError, match="target share"):
        Target(0.0)


def test_exports_name_every_trial_and_mark_the_frontier(result):
    data = json.loads(result.to_json())
    assert data["tried"] == len(result.trials) == len(data["trials"])
    assert data["winner"]["label"] == result.winner.label
    lines = result.to_csv().splitlines()
    assert len(lines) == len(result.trials) + 1 and "on_frontier" in lines[0]
    assert sum(line.split(",")[-3] == "True" for line in lines[1:]) >= 1


def test_the_ladder_covers_the_range_in_growing_steps():
    rungs = ladder(Param("k", 3, "", minimum=0, maximum=100), cap=50)
    assert rungs[0] == 0 and rungs[-1] == 50 and rungs == sorted(set(rungs))
    assert rungs[:9] == list(range(9))
    gaps = [b - a for a, b in zip(rungs, rungs[1:], strict=False)]
    assert gaps[-2] > gaps[0]


def test_the_frontier_figure_draws_every_trial_the_frontier_and_the_winner(result):
    from present.tune import frontier_figure

    fig = frontier_figure(result)
    names = [t.name for t in fig.data]
    assert "frontier" in names and "cheapest meeting the target" in names
    dots = sum(len(t.x) for t in fig.data if t.mode == "markers" and t.name in REGISTRY)
    assert dots == sum(1 for t in result.trials if t.error is None)
    star = next(t for t in fig.data if t.name == "cheapest meeting the target")
    assert star.x[0] == result.winner.tokens_per_turn


def test_confirming_the_winner_states_its_cost_first_then_asks_the_model(result):
    from engines.tune import confirm, confirmation_plan
    from memory.standins import StaticReply
    from memory.types import Completion

    plan = confirmation_plan(CONFIG, result.winner)
    asked = []

    def send(request, on_delta=None):
        asked.append(request)
        return StaticReply("Your name is Chiru and you earn 1,20,000 a month.")

    def summarize(request):
        return Completion("Summary: the user is Chiru and earns 1,20,000 a month.")

    run = confirm(CONFIG, result.winner, send=send, upkeep=Upkeep(summarize))
    probes = [r for r in asked if r.messages[-1].content in {f.probe for f in CONFIG.facts}]
    assert plan.probe_calls == len(probes) == len(run.rows) > 0
    assert run.mode == "model" and any(r.recalled for r in run.rows)


def test_a_summary_budget_above_the_smallest_that_keeps_all_can_cost_less_and_is_found():
    """Folding less often saves upkeep: summary_buffer's cost falls, then rises, with budget."""
    config = SurvivalConfig(probe_turns=(50,))
    found = tune(config, Target(1.0), strategies=("summary_buffer",), refine=0)
    met = [t for t in found.trials if t.meets]
    smallest = min(met, key=lambda t: t.choice.params.get("budget", 600))
    assert found.winner.tokens_per_turn < smallest.tokens_per_turn  # the walk up paid off
    low = smallest.choice.params["budget"]
    grid = []
    for budget in range(low, 2 * low, max(1, low // 25)):
        choice = LaneSpec("summary_buffer", {"budget": budget})
        rows = run_survival(replace(config, strategies=(choice,))).rows
        last = [r for r in rows if r.probe_turn == 50]
        if all(r.in_payload for r in rows):
            grid.append(max(r.prompt_tokens_spent + r.maintenance_tokens for r in last) / 50)
    assert found.winner.tokens_per_turn <= min(grid) * 1.02  # within 2 % of a fine grid's best
