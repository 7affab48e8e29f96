"""Benchmark the auto-tuner: 6 strategies x their parameter ranges on a 200-turn conversation,
plus one composition (bench/composition.json) and its ranges.

FinCoach's four facts stated at turn 1, the built-in filler bank after them, probes at
N = 50, 100 and 200; target: every fact in the payload at every probe. Payload only (no
model; summaries and extraction by the rule-based stand-ins). Prints the time, the number
of settings tried, why the search stopped, the frontier and the winner (target < 10 s on
2 cores), then the same search with the FinCoach facts probed at N = 50 alone.

    .venv/bin/python bench/bench_tune.py [--seed 0] [--time-limit 60]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engines.survival import SurvivalConfig  # noqa: E402
from engines.tune import DEFAULT_STRATEGIES, Target, TuneResult, tune  # noqa: E402
from memory.compose import read_composition  # noqa: E402
from memory.registry import register_composition  # noqa: E402

COMPOSITION = read_composition((Path(__file__).parent / "composition.json").read_bytes())


def show(title: str, result: TuneResult, wall: float) -> None:
    print(f"\n== {title}")
    print(result.summary())
    per = Counter(t.choice.name for t in result.trials)
    print("settings tried per strategy: " + ", ".join(f"{k} {v}" for k, v in per.items()))
    print(f"wall time {wall:.2f} s ({wall / max(1, len(result.trials)) * 1000:.0f} ms a setting)")
    print(f"{'frontier':<44} {'tokens/turn':>12} {'kept':>6}")
    for t in result.frontier:
        mark = "  <- cheapest meeting the target" if t is result.winner else ""
        print(f"{t.label:<44} {t.tokens_per_turn:>12,.0f} {t.share:>6.0%}{mark}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--time-limit", type=float, default=60.0)
    args = ap.parse_args()
    register_composition(COMPOSITION)
    print(f"cores: {os.cpu_count()}; load average: {os.getloadavg()[0]:.2f}")
    runs = (
        ("200-turn conversation, probes at N = 50, 100, 200", (50, 100, 200)),
        ("FinCoach facts at N = 50", (50,)),
    )
    for title, turns in runs:
        started = time.perf_counter()
        result = tune(
            SurvivalConfig(probe_turns=turns),
            Target(1.0),
            strategies=(*DEFAULT_STRATEGIES, COMPOSITION.name),
            seed=args.seed,
            time_limit_s=args.time_limit,
        )
        show(title, result, time.perf_counter() - started)


if __name__ == "__main__":
    main()
