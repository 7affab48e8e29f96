"""Benchmark the memory core: a generated 1,000-turn conversation through all eight strategies,
one composition (bench/composition.json: summary + retrieved + recent turns in a budget) and
hybrid written as a composition (composed_hybrid: the interpreter's cost next to hybrid's).

Prints the total time, the per-turn accounting time at turn 1,000 over turn 10 (target
<= 1.5), each strategy's prepare+commit time at turn 10 and turn 1,000 (retrieval's ratio:
target <= 3), peak memory, the retrieval index's bytes per turn, and a whole ~600-turn
long conversation replayed through retrieval with its questions (target < 2 s). Each turn's time is the fastest of `--repeat` passes, since
on a shared machine other processes only ever add time.
Fake summariser and extractor (instant), so only the core's own work is measured.

    .venv/bin/python bench/bench_memory.py [--turns 1000]
"""

from __future__ import annotations

import argparse
import random
import resource
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engines.recall import run_setting  # noqa: E402
from memory.bm25 import terms  # noqa: E402
from memory.compose import read_composition  # noqa: E402
from memory.lane_spec import LaneSpec  # noqa: E402
from memory.maintenance import Upkeep  # noqa: E402
from memory.ranking import DEFAULT_RANKING  # noqa: E402
from memory.registry import (  # noqa: E402
    REGISTRY,
    builtin_composition,
    create,
    register_composition,
)
from memory.strategies.recall import TurnRecall  # noqa: E402
from memory.tokens import TokenCounter  # noqa: E402
from memory.types import Completion, Request, Turn  # noqa: E402
from scenarios import fincoach  # noqa: E402
from scenarios.longmem_hard import generate as generate_hard  # noqa: E402
from scenarios.longmem_world import generate  # noqa: E402

COMPOSITION = read_composition((Path(__file__).parent / "composition.json").read_bytes())
TOPICS = ["salary", "rent", "SIP", "mutual fund", "FD", "insurance", "tax", "loan", "gold"]


def fake_model(request: Request) -> Completion:
    if "JSON" in request.system:
        return Completion('{"set": {"topic": "money"}, "delete": []}')
    return Completion("The user discussed their finances: salary, rent and savings goals.")


def user_message(rng: random.Random, i: int) -> str:
    topic = rng.choice(TOPICS)
    amount = rng.randrange(1_000, 200_000, 500)
    return f"Turn {i}: I want to talk about my {topic}. It is about ₹{amount:,} a month. Advice?"


def median_around(series: dict[int, float], turn: int) -> float:
    """Median over the five turns ending at `turn` (one slow outlier does not decide)."""
    return statistics.median(series[j] for j in range(max(1, turn - 4), turn + 1))


def run_once(
    turns: int, counter: TokenCounter, reply: str
) -> tuple[dict[int, float], dict[str, dict[int, float]], dict[str, Any], float]:
    """One pass over `turns` turns through every strategy: per-turn times and the strategies."""
    rng = random.Random(7)
    strategies = {
        name: create(name, fincoach.SYSTEM_PROMPT, counter=counter, upkeep=Upkeep.using(fake_model))
        for name in REGISTRY
    }
    accounting: dict[int, float] = {}
    step: dict[str, dict[int, float]] = {name: {} for name in strategies}
    started = time.perf_counter()
    for i in range(1, turns + 1):
        text = user_message(rng, i)
        spent = 0.0
        for name, strategy in strategies.items():
            t0 = time.perf_counter()
            request = strategy.prepare(text)
            strategy.commit(text, reply)
            step[name][i] = time.perf_counter() - t0
            # accounting: the request's token count as the strategy computes it — each text
            # counted once and cached, history ranges summed in O(1) from prefix sums
            a0 = time.perf_counter()
            assert request.account is not None
            counter.total(
                counter.count(request.system)
                + strategy.history.tokens(request.account.kept_turns)
                + counter.count(text),
                len(request.messages),
            )
            spent += time.perf_counter() - a0
        accounting[i] = spent
    return accounting, step, strategies, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description="memory core benchmark")
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="passes; each turn's fastest pass is kept (other processes only add time)",
    )
    args = parser.parse_args()
    register_composition(COMPOSITION)
    register_composition(builtin_composition("hybrid"))
    counter = TokenCounter()
    reply = counter.text_of_tokens(80)
    passes = [run_once(args.turns, counter, reply) for _ in range(max(1, args.repeat))]
    accounting = {i: min(p[0][i] for p in passes) for i in passes[0][0]}
    step = {
        name: {i: min(p[1][name][i] for p in passes) for i in series}
        for name, series in passes[0][1].items()
    }
    strategies = passes[0][2]
    total = min(p[3] for p in passes)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    last = args.turns
    print(f"turns: {last} x {len(strategies)} strategies, 80-token replies")
    print(f"total time (fastest of {len(passes)} passes): {total:.2f} s")
    a10, alast = median_around(accounting, 10), median_around(accounting, last)
    print(
        f"accounting per turn ({len(strategies)} strategies): turn 10 {a10 * 1e6:.1f} us, "
        f"turn {last} {alast * 1e6:.1f} us, ratio {alast / a10:.2f} (target <= 1.5)"
    )
    print("prepare+commit per strategy:")
    for name, strategy in strategies.items():
        r = strategy.prepare("What is my salary?")
        s10, slast = median_around(step[name], 10), median_around(step[name], last)
        print(
            f"  {name:15s} turn 10 {s10 * 1e6:6.0f} us | turn {last} {slast * 1e6:6.0f} us "
            f"| ratio {slast / s10:5.2f} | next prompt {r.tokens.content:>7,} tokens, "
            f"{len(r.messages):>5} messages"
        )
    print(f"peak RSS of the process: {peak_mb:.0f} MB")
    retrieval_query_ratio(counter, reply, last)
    index_memory(counter, reply, last)
    replay_with_questions(counter)


def index_memory(counter: TokenCounter, reply: str, last: int) -> None:
    """Bytes the retrieval index holds per turn after `last` turns (tracemalloc: postings,
    each turn's distinct terms, tokens and session; the stem cache is shared, not counted)."""
    rng = random.Random(5)
    texts = [user_message(rng, i) for i in range(1, last + 1)]
    for text in texts:  # warm the stem cache, which every index shares
        terms(f"{text}\n{reply}")
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    recall = TurnRecall()
    for i, text in enumerate(texts, start=1):
        recall.learn(Turn(i, text, reply), 100)
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(s.size_diff for s in after.compare_to(before, "filename"))
    print(f"retrieval index memory: {grown / last:,.0f} bytes per turn after {last} turns")


def replay_with_questions(counter: TokenCounter) -> None:
    """A whole generated long conversation (about 600 turns) replayed through retrieval with
    its defaults, every question asked when due (target: under 2 s each), beside the same
    replay with the plain "bm25" ranking (fastest of 3 each, side by side)."""
    for name, conv in (("first world", generate(0)), ("hard world", generate_hard(0))):
        seconds = {}
        for ranking in ("bm25", DEFAULT_RANKING):
            runs = []
            for _ in range(3):
                started = time.perf_counter()
                run_setting(conv, LaneSpec("retrieval", {"ranking": ranking}), counter=counter)
                runs.append(time.perf_counter() - started)
            seconds[ranking] = min(runs)
        print(
            f"replay with questions, {name}: {len(conv.turns)} turns, {len(conv.questions)} "
            f"questions: {DEFAULT_RANKING} {seconds[DEFAULT_RANKING]:.2f} s (target < 2 s), "
            f"bm25 {seconds['bm25']:.2f} s, ratio {seconds[DEFAULT_RANKING] / seconds['bm25']:.2f}"
        )


def retrieval_query_ratio(counter: TokenCounter, reply: str, last: int, queries: int = 100) -> None:
    """Retrieval's per-query cost (prepare only) at turn 10 and at turn `last`: each of the
    same `queries` messages is timed 5 times and its fastest run kept (other processes on a
    shared machine only ever add time), then the medians are compared."""
    rng = random.Random(11)
    strategy = create("retrieval", fincoach.SYSTEM_PROMPT, counter=counter)
    probes = [user_message(random.Random(100 + j), last + j) for j in range(queries)]
    at: dict[int, float] = {}
    for i in range(1, last + 1):
        text = user_message(rng, i)
        strategy.prepare(text)
        strategy.commit(text, reply)
        if i in (10, last):
            times = []
            for probe in probes:
                runs = []
                for _ in range(5):
                    t0 = time.perf_counter()
                    strategy.prepare(probe)
                    runs.append(time.perf_counter() - t0)
                times.append(min(runs))
            at[i] = statistics.median(times)
    print(
        f"retrieval per query (prepare, median of {queries}): turn 10 {at[10] * 1e6:.0f} us, "
        f"turn {last} {at[last] * 1e6:.0f} us, ratio {at[last] / at[10]:.2f} (for information: "
        "the target is on prepare+commit above)"
    )


if __name__ == "__main__":
    main()
