"""Benchmark the main page with a local fake provider (fixed latency, real streaming in chunks).

Prints:
  * the wall time of one turn across 6 lanes divided by the time of the slowest lane alone
    (target <= 1.15): lanes run as parallel fragments, so a turn costs about one lane;
  * the script rerun time at turn 100 divided by that at turn 5 (target <= 2).

It runs the real app.py through Streamlit's AppTest, in this process, with the providers
replaced by providers.fake.FakeTransport.

    .venv/bin/python bench/bench_ui.py [--latency 1.0] [--turns 100]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

from lanes import session as session_module  # noqa: E402
from memory.lane_spec import LaneSpec  # noqa: E402
from memory.registry import DEFAULT_LANES, REGISTRY  # noqa: E402
from providers.fake import FakeTransport  # noqa: E402
from ui.app_state import AppConfig  # noqa: E402

APP = str(ROOT / "app.py")


def app_with(transport: FakeTransport, lanes: tuple[str, ...]) -> AppTest:
    session_module.ProvidersTransport = lambda: transport  # type: ignore[assignment,misc]
    at = AppTest.from_file(APP, default_timeout=600)
    config = AppConfig.default().replace(
        lanes=tuple(LaneSpec(n, REGISTRY[n].defaults()) for n in lanes)
    )
    at.session_state["config"] = config
    at.run()
    return at


def timed_turn(at: AppTest, text: str) -> float:
    t0 = time.perf_counter()
    at.chat_input[0].set_value(text).run()
    elapsed = time.perf_counter() - t0
    if at.exception:
        raise RuntimeError(at.exception)
    return elapsed


def timed_rerun(at: AppTest, repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description="main page benchmark")
    parser.add_argument("--latency", type=float, default=1.0, help="seconds per fake reply")
    parser.add_argument("--turns", type=int, default=100)
    args = parser.parse_args()

    # 1. one turn, six lanes in parallel vs the slowest lane alone (each lane has the same
    #    fixed latency, so the slowest is any of them; the one with upkeep calls is chosen)
    six = app_with(FakeTransport(latency=args.latency, chunks=8), DEFAULT_LANES)
    timed_turn(six, "warm-up")
    together = statistics.median(timed_turn(six, f"six lanes {i}") for i in range(3))
    one = app_with(FakeTransport(latency=args.latency, chunks=8), ("hybrid",))
    timed_turn(one, "warm-up")
    alone = statistics.median(timed_turn(one, f"one lane {i}") for i in range(3))
    print(f"fake provider latency: {args.latency:.2f} s per reply, streamed in 8 chunks")
    print(
        f"one turn, 6 lanes: {together:.2f} s; slowest lane alone: {alone:.2f} s; "
        f"ratio {together / alone:.2f} (target <= 1.15)"
    )

    # 2. script rerun time as the conversation grows (instant fake replies)
    grow = app_with(FakeTransport(latency=0.0, chunks=2), DEFAULT_LANES)
    reruns: dict[int, float] = {}
    for turn in range(1, args.turns + 1):
        timed_turn(grow, f"Turn {turn}: my expense number {turn} is ₹{turn * 1000:,} a month.")
        if turn in (5, args.turns):
            reruns[turn] = timed_rerun(grow)
    r5, rn = reruns[5], reruns[args.turns]
    print(
        f"script rerun, 6 lanes: turn 5 {r5 * 1000:.0f} ms; turn {args.turns} {rn * 1000:.0f} ms; "
        f"ratio {rn / r5:.2f} (target <= 2)"
    )


if __name__ == "__main__":
    main()
