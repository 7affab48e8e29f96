"""Benchmark how the cost of importing a conversation grows with its length.

A transcript of N turns (generated FinCoach-style messages and 80-token replies) is replayed
into a 4-lane session (full, window, summary_buffer, hybrid: growing, fixed, upkeep, facts
and retrieval) with the transcript's replies and a fake transport for upkeep, saved turn by
turn to a fresh SQLite database, as the Sessions page's import does. Each size runs in its
own process, so its peak RSS is its own. Printed per size: turns done, seconds, seconds per
turn over the last quarter, database bytes, peak RSS; then the ratio per doubling of the
length between sizes (target: at most 2.2 for bytes and RSS, that is, linear growth) and
whether the largest import finished within the time limit.

    .venv/bin/python bench/bench_import_growth.py [--sizes 100,400,1600,5000]
                                                  [--time-limit 600]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

LANES = ("full", "window", "summary_buffer", "hybrid")
TOPICS = ["salary", "rent", "SIP", "mutual fund", "FD", "insurance", "tax", "loan", "gold"]


def transcript_text(turns: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    lines = []
    for i in range(1, turns + 1):
        amount = rng.randrange(1_000, 200_000, 500)
        lines.append(f"User: Turn {i}: about my {rng.choice(TOPICS)}, ₹{amount:,} a month. Advice?")
        words = " ".join(
            rng.choice(TOPICS + ["plan", "save", "invest", "monthly"]) for _ in range(55)
        )
        lines.append(f"Assistant: Here is a thought on that: {words}.")
    return "\n".join(lines) + "\n"


def child(turns: int, db: Path, time_limit: float) -> dict[str, float]:
    """One import in this process; its figures as JSON on stdout."""
    from engines.transcripts import parse, replay
    from memory.lane_spec import LaneSpec
    from memory.registry import REGISTRY
    from providers.fake import FakeTransport
    from providers.settings import ProviderSettings
    from storage.store import Store

    transcript = parse(transcript_text(turns))
    store = Store(f"sqlite:///{db}")
    stamps: list[float] = []
    start = time.perf_counter()
    deadline = start + time_limit
    session = replay(
        transcript,
        [LaneSpec(n, REGISTRY[n].defaults()) for n in LANES],
        provider=ProviderSettings("openai", "bench-model", api_key="bench-key-0000"),
        transport=FakeTransport(),
        system_prompt="You are FinCoach.",
        on_start=store.track,
        on_turn=lambda done, total: stamps.append(time.perf_counter()),
        cancelled=lambda: time.perf_counter() > deadline,
        lean=True,  # as the Sessions page imports (ui/replay_job.py)
    )
    seconds = time.perf_counter() - start
    store.close()
    quarter = max(1, len(stamps) // 4)
    tail = (stamps[-1] - stamps[-quarter - 1]) / quarter if len(stamps) > quarter else seconds
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "turns": session.turn,
        "seconds": seconds,
        "tail_s_per_turn": tail,
        "db_bytes": sum(p.stat().st_size for p in db.parent.glob(db.name + "*")),
        "rss_bytes": peak_kb * 1024,
    }


def per_doubling(small: float, large: float, n_small: int, n_large: int) -> float:
    return (large / small) ** (1 / math.log2(n_large / n_small))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", default="100,400,1600,5000")
    ap.add_argument("--time-limit", type=float, default=600.0, help="seconds per size (600)")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--db", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child, Path(args.db), args.time_limit)))
        return 0
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            db = Path(tmp) / f"growth-{n}.sqlite3"
            done = subprocess.run(
                [sys.executable, __file__, "--child", str(n), "--db", str(db),
                 "--time-limit", str(args.time_limit)],  # fmt: skip
                capture_output=True, text=True,
            )  # fmt: skip
            if done.returncode != 0:
                print(done.stderr[-2000:], file=sys.stderr)
                return 1
            rows.append((n, json.loads(done.stdout.strip().splitlines()[-1])))
            r = rows[-1][1]
            print(f"{n:>6} turns: {r['turns']:>5} done in {r['seconds']:7.1f} s "
                  f"({r['tail_s_per_turn'] * 1000:6.1f} ms/turn, last quarter), "
                  f"database {r['db_bytes'] / 1e6:8.1f} MB, peak RSS {r['rss_bytes'] / 1e6:7.1f} MB",
                  flush=True)  # fmt: skip
    print("\nratio per doubling of the length (target <= 2.2: linear growth)")
    for (n1, a), (n2, b) in zip(rows, rows[1:], strict=False):
        if a["turns"] != n1 or b["turns"] != n2:
            print(f"  {n1} -> {n2}: not comparable (a run stopped at its time limit)")
            continue
        print(f"  {n1:>5} -> {n2:<5} bytes {per_doubling(a['db_bytes'], b['db_bytes'], n1, n2):.2f}"
              f"  RSS {per_doubling(a['rss_bytes'], b['rss_bytes'], n1, n2):.2f}"
              f"  seconds {per_doubling(a['seconds'], b['seconds'], n1, n2):.2f}")  # fmt: skip
    n, last = rows[-1]
    within = last["turns"] == n and last["seconds"] <= 600 and last["rss_bytes"] <= 2e9
    print(f"\n{n}-turn import within 10 minutes and 2 GB: {'yes' if within else 'NO'} "
          f"({last['turns']} of {n} turns in {last['seconds']:.0f} s, "
          f"{last['rss_bytes'] / 1e9:.2f} GB)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
