"""`python -m cli sweep ...`: survival grids through the providers' batch APIs, resumable.

    python -m cli sweep plan  --provider openai --model gpt-4o-mini     # estimate only
    python -m cli sweep start --provider openai --model gpt-4o-mini     # estimate, confirm, submit
    python -m cli sweep status [ID]                                     # from the store alone
    python -m cli sweep collect ID [ID ...] [--wait]                    # poll, collect, show
    python -m cli sweep failed ID / resubmit ID [--id CUSTOM_ID ...]    # partial failures

Every step is saved in the store ($MEMORY_LAB_DB_URL or data/, or --db): a sweep started
here can be collected by another process, or on the Sweeps page, hours later.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class _Usage(Exception):
    """A command that cannot run as asked (exit 2)."""


def _grid(args: argparse.Namespace) -> Any:
    from cli.conventions import UsageError, read_text_arg
    from engines.survival import (
        DEFAULT_STRATEGIES,
        SurvivalConfig,
        SurvivalConfigError,
        parse_facts_json,
        parse_turns,
    )
    from memory.choices import parse_choice
    from memory.errors import MemoryLabError

    try:
        config = SurvivalConfig(
            probe_turns=parse_turns(args.probe_turns),
            strategies=tuple(parse_choice(s) for s in args.strategy)
            if args.strategy
            else DEFAULT_STRATEGIES,
        )
        if args.facts:
            try:
                text = read_text_arg(args.facts, "--facts")
            except UsageError as exc:
                raise _Usage(str(exc)) from None
            config = replace(config, facts=parse_facts_json(text))
        return config.validate()
    except (SurvivalConfigError, MemoryLabError) as exc:
        raise _Usage(str(exc)) from None


def _settings(args: argparse.Namespace, model: str | None) -> Any:
    from providers import preset

    try:
        chosen = preset(args.provider)
        overrides: dict[str, Any] = {"max_tokens": args.max_tokens}
        if args.base_url:
            overrides["base_url"] = args.base_url
        if args.key_env:
            overrides["key_env"] = args.key_env
        return chosen.settings(model, **overrides)
    except (KeyError, ValueError) as exc:
        raise _Usage(str(exc).strip("'\"")) from None


def _store(args: argparse.Namespace) -> Any:
    from storage.sweeps import SweepStore

    return SweepStore(args.db)


def cmd_plan(args: argparse.Namespace, *, submit: bool = False) -> int:
    """One sweep per --model (several: the same grid on each, to compare with `collect`)."""
    config = _grid(args)
    for model in args.model or [None]:
        code = _plan_one(args, config, _settings(args, model), submit=submit)
        if code != EXIT_OK:
            return code
    return EXIT_OK


def _plan_one(args: argparse.Namespace, config: Any, settings: Any, *, submit: bool) -> int:
    from engines.sweep import SweepError, estimate_sweep, prepare_sweep, with_exact_counts
    from engines.sweep_run import start

    try:
        est = estimate_sweep(config, settings, upkeep=args.upkeep)
    except SweepError as exc:
        raise _Usage(str(exc)) from None
    plan = None
    if args.exact_counts and args.upkeep == "stand-in":  # planning is free: count exactly now
        plan = with_exact_counts(prepare_sweep(config, settings, upkeep=args.upkeep))
        est = plan.estimate
        if not est.count_source.startswith("exact"):
            print("(no exact counts: this endpoint has no counting API, or no key is set)")
    elif args.exact_counts and not submit:
        raise _Usage("with interactive upkeep, exact counts come after the upkeep runs: use start")
    print("\n".join(est.lines()))
    if not submit:
        return EXIT_OK
    if not args.yes:
        sys.stdout.write("Submit this sweep? [y/N] ")
        sys.stdout.flush()
        if sys.stdin.readline().strip().lower() not in ("y", "yes"):
            print("Nothing submitted.")
            return EXIT_OK
    settings.resolve_key()  # a missing key stops here, before anything is saved or sent
    if plan is None:
        plan = prepare_sweep(config, settings, upkeep=args.upkeep)
        if args.exact_counts:
            plan = with_exact_counts(plan)
            print("\n".join(plan.estimate.lines()))
    store = _store(args)
    sweep_id = start(store, plan, name=args.name)
    print(f"sweep {sweep_id}: {len(plan.requests):,} requests submitted")
    print(f"collect with: python -m cli sweep collect {sweep_id} --wait")
    return EXIT_OK


def cmd_status(args: argparse.Namespace) -> int:
    from engines.sweep_run import progress

    store = _store(args)
    if args.sweep_id:
        record = store.sweep(args.sweep_id)
        print(f"{record.id}  {record.name}  [{record.status}]")
        print(progress(store, args.sweep_id).line())
        for batch in store.batches(args.sweep_id):
            done = "collected" if batch.collected else batch.raw_status
            print(f"  batch {batch.batch_id}: {batch.requests:,} requests, {done}")
        return EXIT_OK
    sweeps = store.list_sweeps()
    if not sweeps:
        print(f"no sweeps in {store.display_url}")
    for s in sweeps:
        print(
            f"{s.id}  {s.created_at:%Y-%m-%d %H:%M}  {s.provider}/{s.model}  [{s.status}]  "
            f"{s.succeeded}/{s.requests} back, {s.failed} failed  {s.name}"
        )
    return EXIT_OK


def cmd_collect(args: argparse.Namespace) -> int:
    """Poll and collect each sweep named; several: their results side by side, per model."""
    from cli.main import survival_table
    from engines.sweep_run import compare, open_sweep, resume, wait

    store = _store(args)
    done, failed = [], 0
    for sweep_id in args.sweep_id:
        _, settings = open_sweep(store, sweep_id)
        if args.wait:
            now = wait(store, sweep_id, settings, interval=args.interval, timeout=args.timeout,
                       on_progress=lambda p: print(p.line(), file=sys.stderr))  # fmt: skip
        else:
            now = resume(store, sweep_id, settings)
            print(now.line())
        if now.result is None:
            print(f"{sweep_id}: not finished yet: run collect again later (or with --wait)")
            continue
        done.append((settings.model, now.result))
        if now.failed:
            failed += now.failed
            print(f"{now.failed} request(s) failed: see `sweep failed {sweep_id}`")
    if len(done) < len(args.sweep_id):
        return EXIT_OK
    result = done[0][1] if len(done) == 1 else compare(done)
    print(survival_table(result))
    if args.csv:
        Path(args.csv).write_text(result.to_csv(), encoding="utf-8")
    if args.json:
        Path(args.json).write_text(result.to_json(), encoding="utf-8")
    return EXIT_FAILED if failed else EXIT_OK


def cmd_failed(args: argparse.Namespace) -> int:
    from engines.sweep_run import failed_requests

    failed = failed_requests(_store(args), args.sweep_id)
    for r in failed:
        print(f"{r.custom_id}  {r.state}  (attempt {r.attempts})  {r.error or ''}")
    if not failed:
        print("no failed requests")
    return EXIT_OK


def cmd_resubmit(args: argparse.Namespace) -> int:
    from engines.sweep import SweepError
    from engines.sweep_run import open_sweep, resubmit_failed

    store = _store(args)
    _, settings = open_sweep(store, args.sweep_id)
    try:
        batches = resubmit_failed(store, args.sweep_id, settings, custom_ids=args.id)
    except SweepError as exc:
        raise _Usage(str(exc)) from None
    sent = sum(b.total for b in batches) if batches else 0
    print(f"resubmitted in {len(batches)} batch(es)" + (f" ({sent} requests)" if sent else ""))
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    """Dispatch a sweep subcommand; provider and store failures exit 1 with the reason."""
    from providers import ProviderError
    from storage.sweeps import SweepNotFound

    handlers = {
        "plan": lambda a: cmd_plan(a),
        "start": lambda a: cmd_plan(a, submit=True),
        "status": cmd_status,
        "collect": cmd_collect,
        "failed": cmd_failed,
        "resubmit": cmd_resubmit,
    }
    try:
        return handlers[args.sweep_command](args)
    except (_Usage, SweepNotFound) as exc:
        args.parser.print_usage(sys.stderr)
        sys.stderr.write(f"error: {str(exc).strip(chr(34) + chr(39))}\n")
        return EXIT_USAGE
    except ProviderError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return EXIT_FAILED


def register(sub: Any) -> None:
    """Add `sweep` and its subcommands to the CLI's subparsers."""
    from cli.compositions import add_composition_argument

    parser = sub.add_parser(
        "sweep",
        help="survival grids through the providers' batch APIs (half price, resumable)",
        description=__doc__.split("\n\n")[0],
    )
    parser.add_argument("--db", help="database URL (default: $MEMORY_LAB_DB_URL or data/)")
    steps = parser.add_subparsers(dest="sweep_command", required=True)

    for name, text in (("plan", "print the estimate; submit nothing"),
                       ("start", "print the estimate, confirm, then submit")):  # fmt: skip
        p = steps.add_parser(name, help=text)
        p.add_argument("--provider", default="openai", help="openai (default) or anthropic")
        p.add_argument("--model", action="append",
                       help="model name (default: the provider's first); repeat it for one "
                       "sweep per model, compared side by side by `collect ID ID`")  # fmt: skip
        p.add_argument("--base-url", help="another endpoint speaking the same API")
        p.add_argument("--key-env", help="environment variable holding the key")
        p.add_argument("--max-tokens", type=int, default=96, help="reply length cap (96)")
        p.add_argument("--probe-turns", default="2,5,10,20,50", help="turns N (2,5,10,20,50)")
        p.add_argument("--strategy", action="append", metavar="NAME[:k=v,...]",
                       help="a strategy, repeatable (default: the main-page lanes)")  # fmt: skip
        p.add_argument("--facts", metavar="FILE.json", help="facts to plant (default: FinCoach's)")
        add_composition_argument(p)
        p.add_argument("--upkeep", choices=("stand-in", "interactive"), default="stand-in",
                       help="summaries/extraction by rule-based stand-ins (free) or by the model, "
                       "interactively before the batch (list prices)")  # fmt: skip
        p.add_argument("--exact-counts", action="store_true",
                       help="count every request with the provider's own counting endpoint "
                       "(needs a key; free, one call per request)")  # fmt: skip
        if name == "start":
            p.add_argument("--yes", action="store_true", help="submit without asking")
            p.add_argument("--name", help="a name for the sweep list")
        p.set_defaults(parser=p)

    p = steps.add_parser("status", help="sweeps in the store, or one sweep's progress")
    p.add_argument("sweep_id", nargs="?")
    p.set_defaults(parser=p)
    p = steps.add_parser("collect", help="poll, collect what ended, show the result")
    p.add_argument("sweep_id", nargs="+", help="one sweep, or several to compare per model")
    p.add_argument("--wait", action="store_true", help="poll until every request is back")
    p.add_argument("--interval", type=float, default=60.0, help="seconds between polls (60)")
    p.add_argument("--timeout", type=float, help="stop waiting after this many seconds")
    p.add_argument("--csv", help="write every probe row here")
    p.add_argument("--json", help="write config, rows and totals here")
    p.set_defaults(parser=p)
    p = steps.add_parser("failed", help="list requests that failed, expired or never ran")
    p.add_argument("sweep_id")
    p.set_defaults(parser=p)
    p = steps.add_parser("resubmit", help="submit the failed requests again, and only them")
    p.add_argument("sweep_id")
    p.add_argument("--id", action="append", help="only this custom_id (repeatable)")
    p.set_defaults(parser=p)
    parser.set_defaults(func=run)
