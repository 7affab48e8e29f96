"""The fault matrix and the crash counts (issue 10), as a report.

Each fault is injected into one lane of a six-lane turn, through the official SDKs against
the local fake server (tests/providers/fake_server.py), with a real SQLite store; then a
conversation of --turns turns is SIGKILLed at random moments and reopened, on SQLite (and on
PostgreSQL with --postgres, which needs Debian's postgresql package). Prints the matrix
(fault × outcome) and the counts: lane turns attempted, completed, lost.

    .venv/bin/python bench/bench_faults.py [--turns 50] [--seed 7] [--postgres]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.providers.fake_server import FakeLLMServer  # noqa: E402
from tests.storage.fault_matrix import run_matrix, table  # noqa: E402
from tests.storage.kill_support import KillReport, kill_run, two_writers  # noqa: E402


def kill_line(label: str, report: KillReport, seconds: float) -> str:
    return (
        f"{label:10} SIGKILLs {report.kills:2}  turns {report.turns}  lane turns attempted "
        f"{report.attempted}, completed {report.completed}, lost {report.lost}  ({seconds:.1f} s)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--postgres", action="store_true", help="also kill runs on PostgreSQL")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="memory-lab-faults-"))
    server = FakeLLMServer().start()
    try:
        print("Fault matrix: one fault per row, injected into one lane of six\n")
        print(table(run_matrix(server.url, f"sqlite:///{workdir / 'faults.sqlite3'}")))
    finally:
        server.stop()

    print(f"\nSIGKILL at random moments over {args.turns} turns (4 lanes), then reopen:\n")
    started = time.perf_counter()
    report = kill_run(f"sqlite:///{workdir / 'killed.sqlite3'}", turns=args.turns, seed=args.seed)
    print(kill_line("SQLite", report, time.perf_counter() - started))
    if args.postgres:
        from tests.storage.test_store_postgres import postgres_server

        with postgres_server() as url:
            started = time.perf_counter()
            report = kill_run(url, turns=args.turns, seed=args.seed)
            print(kill_line("PostgreSQL", report, time.perf_counter() - started))

    results = two_writers(f"sqlite:///{workdir / 'shared.sqlite3'}", turns=8)
    errors = [e for _, e in results if e != "None"]
    print(f"\nTwo processes writing one SQLite file, 8 turns each: {len(errors)} save errors")


if __name__ == "__main__":
    main()
