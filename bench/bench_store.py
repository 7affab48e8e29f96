"""Benchmark the session store: save a 500-turn, 6-lane session turn by turn, then reload it.

Prints the time to save a turn (the user turn plus its six lane turns, each written in its
own transaction as the app does; lanes run one after another unless --parallel, so the figure
is the store's own work, not time spent waiting for another lane's write), also as a share of a turn with the embedded model (measured
here unless --turn-seconds is given; target: under 5%), the time to load the session, and
the database size. Replies come from a fake transport (80-token replies), so only the
store's own work is timed.

    .venv/bin/python bench/bench_store.py [--turns 500] [--url sqlite:///...|postgresql://...]
                                          [--turn-seconds S]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engines.sessions import RunOptions, continue_stored  # noqa: E402
from lanes.session import Session  # noqa: E402
from memory.lane_spec import LaneSpec  # noqa: E402
from memory.registry import DEFAULT_LANES, REGISTRY  # noqa: E402
from memory.tokens import TokenCounter  # noqa: E402
from providers.fake import FakeTransport  # noqa: E402
from scenarios import fincoach  # noqa: E402
from storage.store import Store  # noqa: E402

TOPICS = ["salary", "rent", "SIP", "mutual fund", "FD", "insurance", "tax", "loan", "gold"]


def user_message(rng: random.Random, i: int) -> str:
    topic = rng.choice(TOPICS)
    amount = rng.randrange(1_000, 200_000, 500)
    return f"Turn {i}: I want to talk about my {topic}. It is about ₹{amount:,} a month. Advice?"


def embedded_turn_seconds(turns: int = 2) -> float:
    """Median wall time of a 6-lane FinCoach turn on the embedded model (the app's path)."""
    import providers

    settings = providers.preset("embedded").settings(max_tokens=200)
    session = Session(
        system_prompt=fincoach.SYSTEM_PROMPT,
        lanes=[LaneSpec(n, REGISTRY[n].defaults()) for n in DEFAULT_LANES],
        provider=settings,
    )
    session.run_turn("Hello")  # loads the model; not timed
    times = []
    for text in fincoach.DEMO_TURNS[:turns]:
        t0 = time.perf_counter()
        session.run_turn(text)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


class Timed:
    """Wraps the tracker's listeners and adds up the time spent in them, per turn."""

    def __init__(self, session: Session) -> None:
        self.per_turn: dict[int, float] = {}
        self.lock = threading.Lock()
        session.turn_listeners[:] = [self.wrap_turn(f) for f in session.turn_listeners]
        session.listeners[:] = [self.wrap_lane(f) for f in session.listeners]

    def add(self, turn: int, seconds: float) -> None:
        with self.lock:
            self.per_turn[turn] = self.per_turn.get(turn, 0.0) + seconds

    def wrap_turn(self, listener):
        def timed(session, turn, text):
            t0 = time.perf_counter()
            listener(session, turn, text)
            self.add(turn, time.perf_counter() - t0)

        return timed

    def wrap_lane(self, listener):
        def timed(session, record):
            t0 = time.perf_counter()
            listener(session, record)
            self.add(record.turn, time.perf_counter() - t0)

        return timed


def main() -> None:
    parser = argparse.ArgumentParser(description="session store benchmark")
    parser.add_argument("--turns", type=int, default=500)
    parser.add_argument("--url", default=None, help="database URL (default: a temporary SQLite)")
    parser.add_argument(
        "--parallel",
        action="store_true",
        help="run the lanes in parallel threads: with instant fake replies their writes queue "
        "behind each other, so the figure includes that waiting (an upper bound)",
    )
    parser.add_argument(
        "--turn-seconds",
        type=float,
        default=None,
        help="a typical turn's wall time to compare with (default: measure the embedded model)",
    )
    args = parser.parse_args()
    workdir = tempfile.mkdtemp(prefix="bench-store-")
    url = args.url or f"sqlite:///{workdir}/bench.sqlite3"

    rng = random.Random(7)
    reply = TokenCounter().text_of_tokens(80)
    transport = FakeTransport(reply_fn=lambda request: reply)
    session = Session(
        system_prompt=fincoach.SYSTEM_PROMPT,
        lanes=[LaneSpec(n, REGISTRY[n].defaults()) for n in DEFAULT_LANES],
        provider=type("Settings", (), {"model": "gpt-4o"})(),
        transport=transport,
    )
    store = Store(url)
    tracker = store.track(session)
    timer = Timed(session)
    started = time.perf_counter()
    for i in range(1, args.turns + 1):
        session.run_turn(user_message(rng, i), parallel=args.parallel)
    run_s = time.perf_counter() - started
    assert tracker.error is None, tracker.error

    saves = [timer.per_turn[t] for t in sorted(timer.per_turn)]
    early = statistics.median(saves[:10])
    late = statistics.median(saves[-10:])
    p95 = sorted(saves)[int(0.95 * (len(saves) - 1))]

    reopened = Store(url)  # as a restarted app would
    t0 = time.perf_counter()
    infos = reopened.list()
    list_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    saved = reopened.load(session.id)
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    reopened.load(session.id, bodies=False)
    light_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    continue_stored(
        reopened, session.id, RunOptions(provider=session.provider, transport=transport)
    )
    continue_s = time.perf_counter() - t0
    assert saved.records == session.records(), "the reloaded session differs"
    assert infos[0].lane_turns == args.turns * len(session.lanes)

    if store.kind == "sqlite":
        path = Path(store.url.database)
        size = sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))
        store.close()
        reopened.close()
        checkpointed = Store(url)
        with checkpointed.engine.connect() as conn:
            conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        checkpointed.close()
        main_size = path.stat().st_size
        size_line = f"{size / 1e6:.1f} MB (file + WAL); {main_size / 1e6:.1f} MB after a checkpoint"
    else:
        size_line = "(see the server: pg_total_relation_size of the ml_* tables)"

    print(f"store: {store.display_url}")
    lanes_how = "in parallel threads" if args.parallel else "one after another"
    print(
        f"session: {args.turns} turns x {len(session.lanes)} lanes ({lanes_how}), 80-token replies"
    )
    print(f"conversation ran in {run_s:.1f} s (fake replies) including saving")
    print(
        f"save a turn (user turn + {len(session.lanes)} lane turns): median {statistics.median(saves) * 1e3:.1f} ms; "
        f"turns 1-10 {early * 1e3:.1f} ms, last 10 {late * 1e3:.1f} ms, p95 {p95 * 1e3:.1f} ms, "
        f"max {max(saves) * 1e3:.1f} ms"
    )
    if args.turn_seconds is None:
        print("measuring a 6-lane FinCoach turn on the embedded model (max 200 reply tokens)...")
        turn_s, how = embedded_turn_seconds(), "measured here, embedded SmolLM2-135M"
    else:
        turn_s, how = args.turn_seconds, "given with --turn-seconds"
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"a typical turn: {turn_s:.2f} s ({how}; load average {load} on {os.cpu_count()} cores)")
    print(
        f"save as a share of a turn: median {statistics.median(saves) / turn_s:.2%}, "
        f"worst (last 10 turns) {late / turn_s:.2%}, max {max(saves) / turn_s:.2%} (target < 5%)"
    )
    print(
        f"load: list {list_s * 1e3:.1f} ms; whole session with bodies {load_s:.2f} s; "
        f"without bodies {light_s:.2f} s; continue (restore memory) {continue_s:.2f} s"
    )
    print(f"database size: {size_line}")


if __name__ == "__main__":
    main()
