"""Benchmark the fact-survival engine: 4 facts x 6 strategies x N in {2, 5, 10, 20, 50}.

Filler replies are fixed; probes, summaries and fact extraction go to a fake provider that
answers after `--latency` seconds. Prints the wall time, the time spent inside the provider,
and the share spent outside it (the engine's own work: building requests, forking lanes,
matching facts, bookkeeping; target < 10%), sequentially and with one thread per strategy
(there the floor is the busiest lane's time inside the provider).
Also prints the engine's own cost per probe with an instant provider.

    .venv/bin/python bench/bench_survival.py [--latency 0.02] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engines.survival import SurvivalConfig, estimate, run_survival  # noqa: E402
from memory.maintenance import Upkeep  # noqa: E402
from memory.standins import StaticReply  # noqa: E402
from memory.tokens import TokenCounter  # noqa: E402
from memory.types import Completion, Request, Usage  # noqa: E402


class FakeProvider:
    """Answers after a fixed latency and keeps the time spent inside it (thread-safe)."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.inside = 0.0
        self.calls = 0
        self.per_thread: dict[int, float] = {}
        self._lock = threading.Lock()

    def _wait(self, started: float) -> None:
        if self.latency:
            time.sleep(self.latency)
        spent = time.perf_counter() - started
        with self._lock:
            self.inside += spent
            self.calls += 1
            me = threading.get_ident()
            self.per_thread[me] = self.per_thread.get(me, 0.0) + spent

    def send(self, request: Request, on_delta=None) -> StaticReply:
        started = time.perf_counter()
        self._wait(started)
        return StaticReply("Your name is Chiru.", usage=Usage(request.tokens.with_overhead, 6))

    def model(self, request: Request) -> Completion:
        started = time.perf_counter()
        self._wait(started)
        if "JSON" in request.system:
            return Completion(
                '{"set": {"name": "Chiru", "monthly_salary": "₹1,20,000"}, "delete": []}'
            )
        return Completion("The user, Chiru, earns ₹1,20,000 a month and asked about budgeting.")


def one_run(config: SurvivalConfig, counter: TokenCounter, latency: float, workers: int):
    fake = FakeProvider(latency)
    started = time.perf_counter()
    result = run_survival(
        config,
        send=fake.send,
        upkeep=Upkeep.using(fake.model),
        counter=counter,
        workers=workers,
    )
    wall = time.perf_counter() - started
    return wall, fake, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.02, help="fake provider seconds/call")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    config = SurvivalConfig(replies="fixed")  # 4 facts, 6 strategies, N = 2, 5, 10, 20, 50
    counter = TokenCounter(config.encoding)
    est = estimate(config, with_model=True, counter=counter)
    one_run(config, counter, 0.0, 1)  # warm the token cache and imports
    print(
        f"grid: {len(config.facts)} facts x {len(config.strategies)} strategies x "
        f"N in {list(config.probe_turns)} = {est.rows} probes; fixed filler replies"
    )
    print(f"estimate: {est.calls} calls ({est.probe_calls} probes, {est.maintenance_calls} upkeep)")

    for workers in (1, len(config.strategies)):
        walls, outside = [], []
        calls = 0
        for _ in range(args.repeat):
            wall, fake, result = one_run(config, counter, args.latency, workers)
            assert len(result.rows) == est.rows and not result.cancelled
            calls = fake.calls
            walls.append(wall)
            # the provider-bound floor: the busiest lane's time inside the provider
            # (sequentially, that is all the time inside it)
            inside_wall = max(fake.per_thread.values())
            outside.append(max(0.0, wall - inside_wall) / wall)
        wall = statistics.median(walls)
        share = statistics.median(outside)
        label = "sequential" if workers == 1 else f"{workers} threads "
        print(
            f"{label}: wall {wall:.2f} s for {calls} calls at {args.latency * 1000:.0f} ms each; "
            f"outside the provider {share:.1%} (target < 10%)"
        )

    walls = [one_run(config, counter, 0.0, 1)[0] for _ in range(args.repeat)]
    engine = statistics.median(walls)
    print(
        f"engine alone (instant provider, sequential): {engine:.3f} s, "
        f"{engine / est.rows * 1000:.2f} ms per probe including the conversation it needs"
    )


if __name__ == "__main__":
    main()
