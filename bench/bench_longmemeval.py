"""Benchmark `memory-lab recall` on a file of LongMemEval's released size and shape.

Writes a generated `longmemeval_s`-shaped file (scenarios/longmemeval_shape.py: ~50 sessions,
~115,000 tokens a question, ~0.58 MB a question), then runs the CLI on it with the default
settings in a child process and prints the file's size, the seconds, seconds per question
and the child's peak RSS (target: at most 1.5 GB), with the whole release's time estimated
from the seconds per question when fewer questions are run. Then the resume check: a run
stopped halfway (`--limit`) and run again with the same `--resume` file replays only the
rest, and gives the same table.

    .venv/bin/python bench/bench_longmemeval.py [--questions 500] [--skip-resume]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

RELEASE_QUESTIONS = 500


def child(argv: list[str]) -> None:
    """Run the CLI here; print its exit code, seconds and this process's peak RSS."""
    from cli import main as cli_main

    start = time.perf_counter()
    code = cli_main.main(argv)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"code": code, "seconds": seconds, "rss": peak}), file=sys.stderr)


def measured(argv: list[str]) -> dict[str, float]:
    done = subprocess.run([sys.executable, __file__, "--child", *argv], cwd=ROOT,
                          capture_output=True, text=True)  # fmt: skip
    figures = json.loads(done.stderr.strip().splitlines()[-1])
    if figures["code"] != 0:
        raise SystemExit(f"recall failed:\n{done.stderr[-2000:]}")
    return {**figures, "stdout": done.stdout}


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2:])
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--questions", type=int, default=RELEASE_QUESTIONS)
    ap.add_argument("--skip-resume", action="store_true", help="the whole run only")
    args = ap.parse_args()
    from scenarios.longmemeval_shape import write

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "longmemeval_s.json"
        t0 = time.perf_counter()
        size = write(path, args.questions)
        print(f"generated {args.questions} questions, {size / 1e6:.0f} MB "
              f"in {time.perf_counter() - t0:.0f} s")  # fmt: skip
        whole = measured(["recall", str(path), "--quiet"])
        per_q = whole["seconds"] / args.questions
        print(f"whole run: {whole['seconds']:.0f} s, {per_q:.1f} s a question, "
              f"peak RSS {whole['rss'] / 1e9:.2f} GB (target <= 1.5 GB)")  # fmt: skip
        if args.questions != RELEASE_QUESTIONS:
            print(f"the release's {RELEASE_QUESTIONS} questions at this rate: "
                  f"{per_q * RELEASE_QUESTIONS / 60:.0f} min")  # fmt: skip
        if args.skip_resume:
            return 0
        checkpoint = Path(tmp) / "run.jsonl"
        half = max(1, args.questions // 2)
        first = measured(["recall", str(path), "--quiet", "--limit", str(half),
                          "--resume", str(checkpoint)])  # fmt: skip
        rest = measured(["recall", str(path), "--quiet", "--resume", str(checkpoint)])
        same = rest["stdout"] == whole["stdout"]
        print(f"resume: first {half} questions {first['seconds']:.0f} s, then the rest "
              f"{rest['seconds']:.0f} s ({rest['seconds'] / whole['seconds']:.2f} of the whole "
              f"run); same table: {'yes' if same else 'NO'}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
