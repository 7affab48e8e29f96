"""The strategy contract suite at length: examples passed per strategy.

Runs tests/memory/test_contracts.py under `--hypothesis-profile long` (300 random
transcripts per registered strategy, not derandomized) and prints, per strategy, the
passing, failing and invalid (rejected as set-up) examples hypothesis reports.

    .venv/bin/python bench/bench_contracts.py [--profile long]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_TEST = re.compile(r"test_strategy_contract\[(\w+)\]:")
_COUNTS = re.compile(r"- (\d+) passing examples, (\d+) failing examples, (\d+) invalid examples")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="long")
    args = parser.parse_args()
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "tests/memory/test_contracts.py",
        "-q",
        "-p",
        "no:cacheprovider",
        f"--hypothesis-profile={args.profile}",
        "--hypothesis-show-statistics",
    ]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    name = None
    rows: dict[str, tuple[int, int, int]] = {}
    for line in out.stdout.splitlines():
        m = _TEST.search(line)
        if m:
            name = m.group(1)
            continue
        c = _COUNTS.search(line)
        if c and name is not None:
            passed, failed, invalid = (int(x) for x in c.groups())
            old = rows.get(name, (0, 0, 0))
            rows[name] = (old[0] + passed, old[1] + failed, old[2] + invalid)
    print(f"{'strategy':<16}{'passed':>8}{'failed':>8}{'invalid':>9}")
    for name, (passed, failed, invalid) in sorted(rows.items()):
        print(f"{name:<16}{passed:>8}{failed:>8}{invalid:>9}")
    print(f"pytest exit code {out.returncode} (0: every example of every strategy passed)")
    return out.returncode


if __name__ == "__main__":
    raise SystemExit(main())
