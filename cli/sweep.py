"""`python -m cli sweep ...`: survival and recall grids through the providers' batch APIs.

    python -m cli sweep plan  --provider openai --model gpt-4o-mini     # estimate only
    python -m cli sweep start --provider openai --model gpt-4o-mini     # estimate, confirm, submit
    python -m cli sweep start --recall --models gpt-4o-mini,anthropic:claude-haiku-4-5
    python -m cli sweep status [ID]                                     # from the store alone
    python -m cli sweep collect ID [ID ...] [--wait]                    # poll, collect, show
    python -m cli sweep failed ID / resubmit ID [--id CUSTOM_ID ...]    # partial failures

Every step is saved in the store ($MEMORY_LAB_DB_URL or data/, or --db): a sweep started
here can be collected by another process, or on the Sweeps page, hours later.
May touch: the sweep store (`--db`), the batch APIs of the providers named, the files its
flags name, stdout and stderr.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import sqlalchemy.exc

from cli.compositions import add_composition_argument
from cli.compositions import prepare as prepare_compositions
from cli.inputs import read_text_arg
from cli.outputs import check_outputs, write_output
from cli.parsing import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    Subcommands,
    UsageError,
    base_url,
    comma_list,
    variable_name,
)
from cli.survival import survival_table
from engines.recall import RecallResult, default_settings
from engines.survival import (
    DEFAULT_STRATEGIES,
    SurvivalConfig,
    SurvivalConfigError,
    parse_facts_json,
    parse_turns,
)
from engines.sweep import (
    SweepError,
    SweepEstimate,
    SweepPlan,
    check_models,
    estimate_sweep,
    prepare_sweep,
    total_lines,
    with_exact_counts,
)
from engines.sweep_recall import (
    RecallGrid,
    dry_run,
    estimate_recall_sweep,
    prepare_recall_sweeps,
)
from engines.sweep_run import (
    SweepProgress,
    compare,
    failed_requests,
    open_arms,
    progress,
    resubmit_failed,
    resume,
    start,
    wait,
)
from memory.errors import MemoryLabError
from memory.lane_spec import parse_spec
from present.recall import table_rows
from providers import ProviderError, ProviderSettings, preset
from providers.catalog import PRESETS, batch_presets
from providers.redaction import safe_url
from providers.settings import check_base_url
from scenarios.longmem import LongMemFormatError, parse_conversation
from scenarios.longmem_world import generate
from storage.store import StoreError, SweepNotFound, SweepStore

COMMANDS = ("plan", "start", "status", "collect", "failed", "resubmit")


def _grid(args: argparse.Namespace) -> SurvivalConfig:
    """The survival grid: --probe-turns x --strategy, with --facts (FinCoach's by default)."""
    try:
        config = SurvivalConfig(
            probe_turns=parse_turns(args.probe_turns),
            strategies=tuple(parse_spec(s) for s in args.strategy)
            if args.strategy
            else DEFAULT_STRATEGIES,
        )
        if args.facts:
            text = read_text_arg(args.facts, "--facts")
            config = replace(config, facts=parse_facts_json(text))
        return config.validate()
    except (SurvivalConfigError, MemoryLabError) as exc:
        raise UsageError(str(exc)) from None


def _recall_grid(args: argparse.Namespace) -> RecallGrid:
    """The long-recall grid: a conversation (generated, or --conversation) x settings."""
    try:
        if args.conversation:
            conv = parse_conversation(read_text_arg(args.conversation, "--conversation"))
        else:
            conv = generate(args.seed, sessions=args.sessions)
        chosen = [parse_spec(s) for s in args.strategy or ()]
        settings = list(chosen) or default_settings()
        return RecallGrid(conv, tuple(settings)).validate()
    except (LongMemFormatError, MemoryLabError, SweepError, ValueError) as exc:
        raise UsageError(str(exc)) from None


def _arms(args: argparse.Namespace) -> list[ProviderSettings]:
    """Settings for every model named (--model, repeatable, and --models a,b); a model
    written PRESET:MODEL uses that provider instead of --provider."""
    names = [
        m.strip() for item in (args.model or []) + (args.models or []) for m in item.split(",")
    ]
    out = []
    for name in [n for n in names if n] or [None]:
        provider = args.provider
        if name and name.split(":", 1)[0] in PRESETS:
            provider, name = name.split(":", 1)
        out.append(_settings(args, provider, name))
    return out


def _settings(args: argparse.Namespace, provider: str, model: str | None) -> ProviderSettings:
    try:
        chosen = preset(provider)
        overrides: dict[str, Any] = {"max_tokens": args.max_tokens}
        if args.base_url:
            overrides["base_url"] = args.base_url
        if args.key_env:
            overrides["key_env"] = args.key_env
        return chosen.settings(model, **overrides)
    except (KeyError, ValueError) as exc:
        raise UsageError(str(exc).strip("'\"")) from None


def _store(args: argparse.Namespace) -> SweepStore:
    """The sweep store `--db` (or the app's database) names; one that cannot be opened is a
    usage error naming the flag."""
    flag = f"--db {safe_url(args.db)}" if args.db else "the database ($MEMORY_LAB_DB_URL or data/)"
    try:
        return SweepStore(args.db)
    except (StoreError, sqlalchemy.exc.SQLAlchemyError, ValueError, OSError) as exc:
        reason = getattr(exc, "orig", None) or getattr(exc.__cause__, "orig", None) or exc
        raise UsageError(f"cannot open {flag}: {str(reason).splitlines()[0]}") from None


def cmd_plan(args: argparse.Namespace, *, submit: bool = False) -> int:
    """One sweep of every --model (rows labelled by model), survival or --recall."""
    prepare_compositions(args)
    recall = _recall_grid(args) if args.recall else None
    grid = None if recall else _grid(args)
    arms = _arms(args)

    def prepare() -> list[SweepPlan]:
        if recall is not None:
            return prepare_recall_sweeps(recall, arms, upkeep=args.upkeep)
        assert grid is not None
        return [prepare_sweep(grid, s, upkeep=args.upkeep) for s in arms]

    ests: list[SweepEstimate]
    try:
        check_models(arms)
        if recall is not None:
            dry = dry_run(recall)
            ests = [estimate_recall_sweep(recall, s, upkeep=args.upkeep, dry=dry) for s in arms]
        else:
            assert grid is not None
            ests = [estimate_sweep(grid, s, upkeep=args.upkeep) for s in arms]
    except SweepError as exc:
        raise UsageError(str(exc)) from None
    plans = None
    if args.exact_counts and args.upkeep == "stand-in":  # planning is free: count exactly now
        plans = [with_exact_counts(p) for p in prepare()]
        ests = [p.estimate for p in plans]
        if not all(e.count_source.startswith("exact") for e in ests):
            print("(no exact counts: this endpoint has no counting API, or no key is set)")
    elif args.exact_counts and not submit:
        raise UsageError(
            "with interactive upkeep, exact counts come after the upkeep runs: use start"
        )
    print("\n".join(total_lines(ests)))
    if not submit:
        return EXIT_OK
    if not args.yes:
        sys.stdout.write("Submit this sweep? [y/N] ")
        sys.stdout.flush()
        if sys.stdin.readline().strip().lower() not in ("y", "yes"):
            print("Nothing submitted.")
            return EXIT_OK
    for settings in arms:
        settings.resolve_key()  # a missing key stops here, before anything is saved or sent
    if plans is None:
        plans = prepare()
        if args.exact_counts:
            plans = [with_exact_counts(p) for p in plans]
            print("\n".join(total_lines([p.estimate for p in plans])))
    sweep_id = start(_store(args), plans, name=args.name)
    print(f"sweep {sweep_id}: {sum(len(p.requests) for p in plans):,} requests submitted")
    print(f"collect with: python -m cli sweep collect {sweep_id} --wait")
    return EXIT_OK


def cmd_status(args: argparse.Namespace) -> int:
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
            f"{s.id}  {s.created_at:%Y-%m-%d %H:%M}  {s.kind}  {s.provider}/{s.model}  "
            f"[{s.status}]  "
            f"{s.succeeded}/{s.requests} back, {s.failed} failed  {s.name}"
        )
    return EXIT_OK


def _open_arms(
    store: SweepStore, sweep_id: str, args: argparse.Namespace
) -> list[ProviderSettings]:
    """A saved sweep's settings under the endpoint policy: a custom endpoint is reached only
    when typed again (--base-url); a usage error names the flag otherwise."""
    try:
        check_base_url(args.base_url)  # an ftp:// or a URL off the allowlist, before any lookup
        _, arms = open_arms(store, sweep_id, typed_urls=[args.base_url], key_env=args.key_env)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return arms


def cmd_collect(args: argparse.Namespace) -> int:
    """Poll and collect each sweep named; several: their results side by side, per model."""
    check_outputs(args)  # before any polling: a bad --csv/--json costs nothing
    store = _store(args)
    done: list[tuple[str, SweepProgress]] = []
    failed = 0
    for sweep_id in args.sweep_id:
        arms = _open_arms(store, sweep_id, args)
        if args.wait:
            now = wait(store, sweep_id, arms, interval=args.interval, timeout=args.timeout,
                       on_progress=lambda p: print(p.line(), file=sys.stderr))  # fmt: skip
        else:
            now = resume(store, sweep_id, arms)
            print(now.line())
        if not now.collected:
            print(f"{sweep_id}: not finished yet: run collect again later (or with --wait)")
            continue
        done.append((" vs ".join(a.model for a in arms), now))
        if now.failed:
            failed += now.failed
            print(f"{now.failed} request(s) failed: see `sweep failed {sweep_id}`")
    if len(done) < len(args.sweep_id):
        return EXIT_OK
    _show(args, done)
    return EXIT_FAILED if failed else EXIT_OK


def _show(args: argparse.Namespace, done: list[tuple[str, SweepProgress]]) -> None:
    """Print (and write) collected results: survival sweeps side by side per model, recall
    sweeps' rows one after another."""
    recalls = [p.recall for _, p in done if p.recall is not None]
    if recalls:
        rows = tuple(r for result in recalls for r in result.rows)
        both = RecallResult(rows, recalls[0].full_tokens, tuple(n for r in recalls for n in r.notes),
                            " vs ".join(r.model for r in recalls))  # fmt: skip
        print(recall_table(both))
        write_output(args.csv, recall_csv(both), "--csv")
        write_output(args.json, json.dumps(both.as_dict(), indent=1), "--json")
        return
    surv = [(model, p.result) for model, p in done if p.result is not None]
    result = surv[0][1] if len(surv) == 1 else compare(surv)
    print(survival_table(result))
    write_output(args.csv, result.to_csv(), "--csv")
    write_output(args.json, result.to_json(), "--json")


RECALL_COLUMNS = ("strategy (setting)", "evidence kept %", "answer in payload %", "answered %",
                  "mean prompt tokens", "% of full")  # fmt: skip


def recall_table(result: RecallResult) -> str:
    """A collected recall sweep as a plain-text table (one line per setting and model)."""
    records = table_rows(result.rows, [])
    width = max(len(r["strategy (setting)"]) for r in records)
    head = ["strategy (setting)".ljust(width)] + [c for c in RECALL_COLUMNS[1:]]
    lines = ["  ".join(head)]
    for r in records:
        cells = [str(r["strategy (setting)"]).ljust(width)]
        cells += [("-" if r.get(c) is None else f"{r[c]}").rjust(len(c)) for c in RECALL_COLUMNS[1:]]  # fmt: skip
        lines.append("  ".join(cells))
    return "\n".join(lines)


def recall_csv(result: RecallResult) -> str:
    """A collected recall sweep's table as CSV."""
    records = table_rows(result.rows, [])
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(records[0]))
    writer.writeheader()
    writer.writerows(records)
    return out.getvalue()


def cmd_failed(args: argparse.Namespace) -> int:
    store = _store(args)
    store.sweep(args.sweep_id)  # SweepNotFound for an id the store does not have
    failed = failed_requests(store, args.sweep_id)
    for r in failed:
        print(f"{r.custom_id}  {r.state}  (attempt {r.attempts})  {r.error or ''}")
    if not failed:
        print("no failed requests")
    return EXIT_OK


def cmd_resubmit(args: argparse.Namespace) -> int:
    store = _store(args)
    arms = _open_arms(store, args.sweep_id, args)
    try:
        batches = resubmit_failed(store, args.sweep_id, arms, custom_ids=args.id)
    except SweepError as exc:
        raise UsageError(str(exc)) from None
    sent = sum(b.total for b in batches) if batches else 0
    print(f"resubmitted in {len(batches)} batch(es)" + (f" ({sent} requests)" if sent else ""))
    return EXIT_OK


def cmd_start(args: argparse.Namespace) -> int:
    return cmd_plan(args, submit=True)


HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "plan": cmd_plan,
    "start": cmd_start,
    "status": cmd_status,
    "collect": cmd_collect,
    "failed": cmd_failed,
    "resubmit": cmd_resubmit,
}


def run(args: argparse.Namespace) -> int:
    """Dispatch a sweep subcommand; an unknown sweep id is bad usage (2), provider failures
    exit 1 with the reason."""
    try:
        return HANDLERS[args.sweep_command](args)
    except SweepNotFound as exc:
        args.parser.print_usage(sys.stderr)
        sys.stderr.write(f"error: {str(exc).strip(chr(34) + chr(39))}\n")
        return EXIT_USAGE
    except ProviderError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return EXIT_FAILED


def _typed_endpoint(p: argparse.ArgumentParser) -> None:
    p.add_argument("--base-url", type=base_url, help="the endpoint the sweep was sent to, typed again (a "
                   "saved sweep never chooses where requests go)")  # fmt: skip
    p.add_argument("--key-env", type=variable_name, help="environment variable holding the key")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """`memory-lab sweep`'s arguments and its subcommands."""
    parser.description = __doc__.split("\n\n")[0]
    parser.add_argument("--db", help="database URL (default: $MEMORY_LAB_DB_URL or data/)")
    steps: Subcommands = parser.add_subparsers(
        dest="sweep_command", required=True, parser_class=type(parser)
    )

    for name, text in (("plan", "print the estimate; submit nothing"),
                       ("start", "print the estimate, confirm, then submit")):  # fmt: skip
        p = steps.add_parser(name, help=text)
        p.add_argument("--provider", default="openai",
                       help=f"one of {', '.join(batch_presets())} (default: openai)")  # fmt: skip
        p.add_argument("--model", action="append",
                       help="model name (default: the provider's first); repeat it (or use "
                       "--models) for one sweep whose rows are labelled by model; "
                       "PRESET:MODEL names another provider")  # fmt: skip
        p.add_argument(
            "--models",
            action="append",
            metavar="A,B",
            type=comma_list,
            help="models, comma-separated",
        )
        p.add_argument("--recall", action="store_true",
                       help="the long-recall benchmark instead of fact survival: each question "
                       "of a long conversation at its point, per strategy setting")  # fmt: skip
        p.add_argument("--conversation", metavar="FILE.json",
                       help="with --recall: a conversation + questions file (default: generated)")  # fmt: skip
        p.add_argument("--seed", type=int, default=0, help="with --recall: the generated world (0)")
        p.add_argument("--sessions", type=int, default=24, help="with --recall: sessions (24)")
        p.add_argument("--base-url", type=base_url, help="another endpoint speaking the same API")
        p.add_argument("--key-env", type=variable_name, help="environment variable holding the key")
        p.add_argument("--max-tokens", type=int, default=96, help="reply length cap (96)")
        p.add_argument(
            "--probe-turns", default="2,5,10,20,50", help="survival: turns N (2,5,10,20,50)"
        )
        p.add_argument("--strategy", action="append", metavar="NAME[:k=v,...]",
                       help="a strategy, repeatable (default: the main-page lanes; with "
                       "--recall, the benchmark's settings)")  # fmt: skip
        p.add_argument("--facts", metavar="FILE.json", help="survival: facts to plant (FinCoach's)")
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
    p.add_argument("--csv", metavar="FILE", help="write every probe row here")
    p.add_argument("--json", metavar="FILE", help="write config, rows and totals here")
    _typed_endpoint(p)
    p.set_defaults(parser=p)
    p = steps.add_parser("failed", help="list requests that failed, expired or never ran")
    p.add_argument("sweep_id")
    p.set_defaults(parser=p)
    p = steps.add_parser("resubmit", help="submit the failed requests again, and only them")
    p.add_argument("sweep_id")
    p.add_argument("--id", action="append", help="only this custom_id (repeatable)")
    _typed_endpoint(p)
    p.set_defaults(parser=p)
