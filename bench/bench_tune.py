"""Benchmark the auto-tuner: on a 200-turn conversation and on the long-memory benchmark.

Every search also tries one composition (bench/composition.json) with its ranges.

1. 6 strategies x their parameter ranges on a 200-turn conversation: FinCoach's four facts
   stated at turn 1, the built-in filler bank after them, probes at N = 50, 100 and 200;
   target: every fact in the payload at every probe (target < 10 s on 2 cores).
2. The same search with the FinCoach facts probed at N = 50 alone.
3. The same 6 strategies on the long-memory benchmark (one generated seed, about 620 turns,
   33 questions); target: 90 % of the evidence turns in the payload at the questions.

Payload only (no model; summaries and extraction by the rule-based stand-ins). Prints, for
each: the time, settings tried (per strategy), why the search stopped, the frontier and the
winner; then ratios measured in this one run: the winner's cost against the full buffer's,
and the long-memory search's time against the 200-turn one's (timings are noisy on a busy
machine; the ratios and token counts are the figures to compare).

    .venv/bin/python bench/bench_tune.py [--seed 0] [--longmem-seed 0] [--time-limit 120]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cli.tune import frontier_table  # noqa: E402
from engines.survival import SurvivalConfig  # noqa: E402
from engines.tune import (  # noqa: E402
    COST_PER_TURN,
    DEFAULT_STRATEGIES,
    Evaluator,
    FactsEvaluator,
    QuestionsEvaluator,
    Target,
    TuneResult,
    tune,
)
from memory.compose import read_composition  # noqa: E402
from memory.lane_spec import LaneSpec  # noqa: E402
from memory.registry import register_composition  # noqa: E402

COMPOSITION = read_composition((Path(__file__).parent / "composition.json").read_bytes())


def show(title: str, result: TuneResult, wall: float, full_cost: float) -> None:
    unit = "tokens/turn" if result.cost == COST_PER_TURN else "tokens/request"
    print(f"\n== {title}")
    print(f"conversation: {result.conversation}")
    print(result.summary())
    per = Counter(t.choice.name for t in result.trials)
    print("settings tried per strategy: " + ", ".join(f"{k} {v}" for k, v in per.items()))
    print(f"wall time {wall:.2f} s ({wall / max(1, len(result.trials)) * 1000:.0f} ms a setting)")
    print(frontier_table(result).split("\n", 2)[2])  # the table, after the summary
    if result.winner is not None:
        ratio = result.winner.tokens_per_turn / full_cost
        print(
            f"the winner costs {ratio:.2f}x the full buffer ({result.winner.tokens_per_turn:,.0f}"
            f" vs {full_cost:,.0f} {unit})"
        )


def run(title: str, evaluator: Evaluator, target: Target, args: argparse.Namespace) -> float:
    full_cost = evaluator.measure(LaneSpec("full")).cost
    started = time.perf_counter()
    strategies = (*DEFAULT_STRATEGIES, COMPOSITION.name)
    result = tune(
        evaluator, target, strategies=strategies, seed=args.seed, time_limit_s=args.time_limit
    )
    wall = time.perf_counter() - started
    show(title, result, wall, full_cost)
    return wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0, help="seed of the refinement search")
    ap.add_argument("--longmem-seed", type=int, default=0, help="the generated conversation")
    ap.add_argument("--time-limit", type=float, default=120.0)
    args = ap.parse_args()
    register_composition(COMPOSITION)
    print(f"cores: {os.cpu_count()}; load average: {os.getloadavg()[0]:.2f}")
    walls = {}
    for key, title, turns in (
        ("200", "200-turn conversation, probes at N = 50, 100, 200", (50, 100, 200)),
        ("50", "FinCoach facts at N = 50", (50,)),
    ):
        evaluator = FactsEvaluator.from_config(SurvivalConfig(probe_turns=turns))
        walls[key] = run(title, evaluator, Target(1.0), args)
    longmem = QuestionsEvaluator.from_seed(args.longmem_seed)
    title = f"long-memory benchmark, seed {args.longmem_seed}: 90% of the evidence turns"
    walls["longmem"] = run(title, longmem, Target(0.9), args)
    print(
        f"\nratio: the long-memory search ({longmem.last_turn} turns) took "
        f"{walls['longmem'] / walls['200']:.2f}x the 200-turn search's time in this run"
    )


if __name__ == "__main__":
    main()
