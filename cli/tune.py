"""`memory-lab tune`: the cheapest memory setting that still keeps your facts (payload only).

    memory-lab tune                                          # FinCoach's facts, N = 2..50
    memory-lab tune --facts facts.json --probe-turns 50 --target 1.0 --csv frontier.csv
    memory-lab tune --strategy window --strategy summary_buffer --target 0.75 --json

The search is engines/tune.py's: a bisection on each strategy's size parameter, then a
seeded search of its other parameters; no model is called (summaries and extraction by the
survival lab's rule-based stand-ins). The frontier goes to stdout; progress to stderr.
"""

from __future__ import annotations

import argparse
import sys
import threading
from typing import Any

from cli.conventions import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    UsageError,
    check_writable,
    print_json,
    write_output,
)
from cli.progress import ProgressBar

EXAMPLES = """
examples:
  memory-lab tune                                   # FinCoach's four facts at N = 2, 5, 10, 20, 50
  memory-lab tune --probe-turns 50 --target 0.75    # three facts of four at turn 50 is enough
  memory-lab tune --facts facts.json --system-file prompt.txt --csv trials.csv --json
"""


def _target(text: str) -> float:
    try:
        value = float(text.rstrip("%")) / (100 if text.endswith("%") else 1)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a share like 0.9 or 90%, got {text!r}") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"the target share must be in (0, 1], got {text!r}")
    return value


def register(sub: Any, add_grid_arguments: Any) -> None:
    """Add `tune` to the CLI's subparsers (`add_grid_arguments` adds facts, turns, filler)."""
    t = sub.add_parser(
        "tune",
        help="find the cheapest strategy setting that keeps your facts (no model)",
        description=__doc__.split("\n\n")[0],
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_grid_arguments(t, strategy_help="a strategy to search, repeatable (default: six)")
    t.add_argument("--target", type=_target, default=1.0,
                   help="share of facts x probe turns that must be in the payload (1.0)")  # fmt: skip
    t.add_argument("--at", metavar="N,N", help="judge the target at these probe turns only")
    t.add_argument("--seed", type=int, default=0, help="seed of the refinement search (0)")
    t.add_argument("--time-limit", type=float, default=60.0, help="seconds at most (60)")
    t.add_argument("--max-trials", type=int, default=400, help="settings tried at most (400)")
    t.add_argument("--csv", metavar="FILE", help="write every setting tried here")
    t.add_argument("--json", nargs="?", const="-", metavar="FILE",
                   help="write the result to FILE; with no FILE, print it on stdout as JSON")  # fmt: skip
    t.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    t.set_defaults(func=cmd_tune, parser=t, payload_only=True, replies="fixed",
                   fixed_replies=True)  # fmt: skip


def cmd_tune(args: argparse.Namespace) -> int:
    from cli.main import _Interrupts, _survival_config
    from engines.survival import parse_turns
    from engines.tune import DEFAULT_STRATEGIES, Target, tune

    config = _survival_config(args)
    names = [c.name for c in config.strategies] if args.strategy else list(DEFAULT_STRATEGIES)
    try:
        at = parse_turns(args.at) if args.at else ()
    except ValueError as exc:
        raise UsageError(f"--at: {exc}") from None
    if set(at) - set(config.probe_turns):
        raise UsageError(
            f"--at {args.at}: judge only at turns that are probed ({args.probe_turns})"
        )
    check_writable(args.csv, "--csv")
    check_writable(None if args.json == "-" else args.json, "--json")
    target = Target(args.target, at)
    sys.stderr.write(
        f"Tuning {', '.join(names)} for: {target.describe()} "
        f"(payload only, seed {args.seed}, at most {args.time_limit:g} s)\n"
    )
    cancel = threading.Event()
    with _Interrupts(cancel), ProgressBar("settings", "setting", quiet=args.quiet) as bar:
        result = tune(
            config,
            target,
            strategies=names,
            seed=args.seed,
            time_limit_s=args.time_limit,
            max_trials=args.max_trials,
            cancel=cancel,
            on_progress=lambda p: bar.update(p.tried, max(p.planned, p.tried), p.strategy),
        )
    if args.json == "-":
        print_json(result.as_dict())
    else:
        print(frontier_table(result))
    for note in result.notes:
        sys.stderr.write(f"note: {note}\n")
    write_output(args.csv, result.to_csv())
    write_output(None if args.json == "-" else args.json, result.to_json())
    return EXIT_INTERRUPTED if result.stop_reason == "cancelled" else EXIT_OK


def frontier_table(result: Any) -> str:
    """The summary sentence, then the frontier, cheapest first, the winner marked."""
    lines = [result.summary(), "", f"{'frontier':<46} {'tokens/turn':>11} {'kept':>6}"]
    for t in result.frontier:
        mark = "  <- cheapest meeting the target" if t is result.winner else ""
        lines.append(f"{t.label:<46} {t.tokens_per_turn:>11,.0f} {t.share:>6.0%}{mark}")
    return "\n".join(lines)
