"""Compare LLM memory strategies from the terminal: the `memory-lab` command.

    memory-lab simulate                                   # seed 000's growth table
    memory-lab survival --payload-only --json > grid.json
    memory-lab app                                        # the browser app

Results go to stdout, progress (a bar, only on a terminal) and notes to stderr. Each
subcommand's arguments are read by its own functions below (`_survival_config`,
`_simulate_config`); `cli/conventions.py` holds the exit codes and the file checks.

Reason for length (over ~400 lines): two subcommands' text output and argument tables.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, NoReturn

from cli import sweep, tune
from cli.app import add_app_parser
from cli.compositions import add_composition_argument
from cli.compositions import prepare as prepare_compositions
from cli.conventions import (
    EXIT_CODES_HELP,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    STDOUT,
    HelpFormatter,
    UsageError,
    check_outputs,
    print_json,
    read_text_arg,
    report,
    system_prompt_arg,
)
from cli.progress import ProgressBar
from engines.simulator import (
    FALLBACK_PRICES,
    TURN_SOURCES,
    Price,
    SimConfig,
    Simulation,
    SimulationError,
    default_prices,
    format_seed_table,
    matches_seed,
    simulate,
    user_turns_from,
)
from engines.survival import (
    DEFAULT_STRATEGIES,
    Progress,
    SurvivalConfig,
    SurvivalConfigError,
    SurvivalResult,
    estimate,
    parse_facts_json,
    parse_turns,
    plan_sentence,
    run_survival,
)
from memory.choices import StrategyChoice, parse_choice
from memory.errors import MemoryLabError
from memory.registry import REGISTRY
from scenarios import filler as filler_mod
from scenarios.filler import TranscriptError

__all__ = ["EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE", "UsageError", "main"]

# --- helpers -----------------------------------------------------------------------------


def _strategies(
    values: Sequence[str] | None, default: Sequence[StrategyChoice]
) -> tuple[StrategyChoice, ...]:
    if not values:
        return tuple(default)
    out: list[StrategyChoice] = []
    for value in values:
        for part in _split_strategies(value):
            try:
                out.append(parse_choice(part))
            except MemoryLabError as exc:
                raise UsageError(str(exc)) from None
    return tuple(out)


def _split_strategies(value: str) -> list[str]:
    """'full;window:k=3' or 'full' -> parts ('full,window' also works when no params)."""
    if ";" in value:
        return [v for v in value.split(";") if v.strip()]
    if ":" not in value and "," in value:
        return [v for v in value.split(",") if v.strip()]
    return [value]


def _load_transcript(path: str, flag: str) -> list[filler_mod.FillerTurn]:
    """A transcript file named by `flag`: read as UTF-8 first, so a bad file is exit 2."""
    text = read_text_arg(path, flag)
    try:
        return filler_mod.parse_transcript(text, name=Path(path).name)
    except TranscriptError as exc:
        raise UsageError(f"{flag}: {exc}") from None


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = [[str(h) for h in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = []
    for j, row in enumerate(cells):
        lines.append(
            "  ".join(
                c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(row)
            )
        )
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


# --- survival ----------------------------------------------------------------------------


def _survival_config(args: argparse.Namespace) -> SurvivalConfig:
    try:
        facts = SurvivalConfig().facts
        if args.facts:
            try:
                facts = parse_facts_json(read_text_arg(args.facts, "--facts"))
            except SurvivalConfigError as exc:
                raise UsageError(f"--facts {args.facts}: {exc}") from None
        if args.plant_turn is not None:
            if args.plant_turn < 1:
                raise UsageError("--plant-turn counts from 1")
            facts = tuple(replace(f, plant_turn=args.plant_turn) for f in facts)
        system_prompt = system_prompt_arg(args, SurvivalConfig().system_prompt)
        filler = None
        if args.filler and args.filler != "builtin":
            filler = tuple(_load_transcript(args.filler, "--filler"))
        replies = "fixed" if args.fixed_replies else args.replies
        config = SurvivalConfig(
            facts=facts,
            probe_turns=parse_turns(args.probe_turns),
            strategies=_strategies(args.strategy, DEFAULT_STRATEGIES),
            filler=filler,
            filler_seed=args.filler_seed,
            replies=replies,
            system_prompt=system_prompt,
        )
        config.validate()
    except (SurvivalConfigError, MemoryLabError) as exc:
        raise UsageError(str(exc)) from None
    if args.payload_only and replies == "generated":
        raise UsageError(
            "--payload-only has no model to generate replies: drop --replies generated"
        )
    return config


def _bind_model(args: argparse.Namespace) -> tuple[Any, Any, str]:
    """(send, upkeep model function, description) for the chosen provider."""
    from lanes.binding import bind

    try:
        return bind(
            args.provider,
            model=args.model,
            base_url=args.base_url,
            max_tokens=args.max_tokens,
            temperature=args.temperature,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def survival_table(result: SurvivalResult) -> str:
    """Both verdict grids (strategies x N), the legend and the prompt tokens spent, as text."""
    from present.survival import text_table

    return text_table(result)


def _survival_progress(bar: ProgressBar) -> Callable[[Progress], None]:
    """Engine progress -> the bar: probes done, and model calls as the note."""

    def show(p: Progress) -> None:
        note = f"calls {p.done}/{p.total}" if p.total else ""
        bar.update(p.rows, p.rows_total, note)

    return show


class _Interrupts:
    """Ctrl-C once: finish the calls in flight and keep the rows so far. Twice: stop now."""

    def __init__(self, cancel: threading.Event) -> None:
        self.cancel = cancel
        self.previous: Any = None
        self.active = threading.current_thread() is threading.main_thread()

    def __enter__(self) -> _Interrupts:
        if self.active:
            self.previous = signal.getsignal(signal.SIGINT)
            signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum: int, frame: Any) -> None:
        if self.cancel.is_set():
            raise KeyboardInterrupt
        self.cancel.set()
        sys.stderr.write("\ninterrupted: finishing the calls in flight, keeping the rows so far\n")

    def __exit__(self, *exc: object) -> None:
        if self.active:
            signal.signal(signal.SIGINT, self.previous)


def cmd_survival(args: argparse.Namespace) -> int:
    config = _survival_config(args)
    check_outputs(args)
    with_model = not args.payload_only
    est = estimate(config, with_model=with_model, assumed_reply_tokens=args.max_tokens)
    err = sys.stderr
    plan = "Plan: " + plan_sentence(config, est, with_model=with_model)
    err.write(plan + "\n")
    if args.estimate_only:
        print_json(est.as_dict())
        return EXIT_OK
    send = model_fn = None
    description = "payload only (no model)"
    if with_model:
        try:
            send, model_fn, description = _bind_model(args)
        except UsageError:
            raise
        except Exception as exc:  # the model could not start: say so, exit 1
            err.write(f"error: could not start the model ({type(exc).__name__}: {exc})\n")
            return EXIT_FAILED
    err.write(f"Model: {description}\n")
    cancel = threading.Event()
    with _Interrupts(cancel), ProgressBar("probes", "probe", quiet=args.quiet) as bar:
        result = run_survival(
            config,
            send=send,
            summarize=model_fn,
            extract=model_fn,
            on_progress=_survival_progress(bar) if bar.shown else None,
            cancel=cancel,
            workers=args.workers or (1 if args.provider == "embedded" else None),
            expected_calls=est.calls,
        )
    result.model = result.model or description

    def show() -> None:
        print(survival_table(result))
        for note in result.notes:
            print(f"note: {note}")
        if args.rows:
            print()
            for r in result.rows:
                print(
                    f"[{r.strategy} N={r.probe_turn} {r.fact}] payload={r.in_payload} "
                    f"recalled={r.recalled} {r.flag} | {r.probe} -> {r.reply[:160]!r}"
                )

    report(args, result, result.as_dict, show)
    if result.cancelled:
        err.write(f"cancelled: {len(result.rows)} of {est.rows} probes done\n")
        return EXIT_INTERRUPTED
    return EXIT_OK


# --- simulate ----------------------------------------------------------------------------


def pick_prices(prices: Sequence[Price], n: int = 4) -> list[Price]:
    """A few paid models to compare by default: the first priced model of each source."""
    chosen: dict[str, Price] = {}
    for p in prices:
        if p.input_per_m > 0 and p.note not in chosen:
            chosen[p.note] = p
    return list(chosen.values())[:n] or list(prices)[:n]


def _prices(values: Sequence[str] | None) -> list[Price]:
    """--price 'name=IN/OUT' (dollars per million tokens), or a catalog name."""
    table = {p.model: p for p in default_prices()} | {p.model: p for p in FALLBACK_PRICES}
    if not values:
        return pick_prices(default_prices())
    out = []
    for value in values:
        name, eq, rates = value.partition("=")
        if not eq:
            if name in table:
                out.append(table[name])
                continue
            raise UsageError(
                f"unknown price {name!r}: write NAME=IN/OUT (dollars per million tokens) "
                f"or one of: {', '.join(table)}"
            )
        try:
            p_in, _, p_out = rates.partition("/")
            price = Price(name.strip(), float(p_in), float(p_out), "from --price")
        except ValueError:
            raise UsageError(f"--price {value!r}: write NAME=IN/OUT, e.g. gpt-4o=2.5/10") from None
        if price.input_per_m < 0 or price.output_per_m < 0:
            raise UsageError(f"--price {value!r}: prices cannot be negative")
        out.append(price)
    return out


def _simulate_config(args: argparse.Namespace) -> SimConfig:
    """The simulator's config from `memory-lab simulate`'s arguments (UsageError if unusable)."""
    try:
        if args.user_turns in TURN_SOURCES:
            turns = user_turns_from(args.user_turns)
        else:
            try:
                loaded = _load_transcript(args.user_turns, "--user-turns")
            except UsageError as exc:
                raise UsageError(f"{exc} (or use one of {', '.join(TURN_SOURCES)})") from None
            turns = tuple(t.user for t in loaded)
        return SimConfig.from_dict(
            {
                "user_turns": list(turns),
                "reply_tokens": args.reply_tokens,
                "turns": args.turns,
                "strategies": _strategies(args.strategy, (StrategyChoice("full"),)),
                "summary_tokens": args.summary_tokens,
                "facts_tokens": args.facts_tokens,
                "overhead": args.overhead,
            }
        ).validate()
    except (SimulationError, MemoryLabError) as exc:
        raise UsageError(str(exc)) from None


def simulation_data(sim: Simulation, prices: Sequence[Price]) -> dict[str, Any]:
    """`memory-lab simulate --json`: config, every row, totals, costs, and the seed check."""
    data: dict[str, Any] = json.loads(sim.to_json())
    data["totals"] = {label: asdict(sim.totals(label)) for label in sim.labels}
    data["costs"] = sim.cost_table(prices)
    data["matches_seed"] = matches_seed(sim)
    return data


def cmd_simulate(args: argparse.Namespace) -> int:
    config = _simulate_config(args)
    prices = _prices(args.price)
    check_outputs(args)
    try:
        sim = _simulate_with_progress(config, quiet=args.quiet)
    except (SimulationError, MemoryLabError) as exc:
        raise UsageError(str(exc)) from None
    report(
        args,
        sim,
        lambda: simulation_data(sim, prices),
        lambda: _print_simulation(sim, config, prices, full_table=args.full_table),
    )
    return EXIT_OK


def _simulate_with_progress(config: SimConfig, *, quiet: bool) -> Simulation:
    """`simulate(config)`, one strategy at a time so a bar can show how far it is (strategies
    never share state in the simulator, so the merged result is the same)."""
    with ProgressBar("strategies", "strategy", quiet=quiet) as bar:
        if not bar.shown or len(config.strategies) == 1:
            return simulate(config)
        merged: Simulation | None = None
        for done, choice in enumerate(config.strategies):
            bar.update(done, len(config.strategies), choice.label)
            part = simulate(replace(config, strategies=(choice,)))
            if merged is None:
                merged = Simulation(config, part.system_tokens)
            merged.rows.update(part.rows)
            merged.names.update(part.names)
        bar.update(len(config.strategies), len(config.strategies))
        assert merged is not None
        return merged


def _print_simulation(
    sim: Simulation, config: SimConfig, prices: Sequence[Price], *, full_table: bool
) -> None:
    for label in sim.labels:
        print(f"== {label} ==")
        if full_table or config.n_turns <= 30:
            print(format_seed_table(sim, label))
        else:
            t = sim.totals(label)
            print(
                f"System prompt: {sim.system_tokens} tokens; turn 1 prompt {t.first_prompt}, "
                f"turn {config.n_turns} prompt {t.last_prompt}, {t.prompt_tokens:,} sent in all; "
                f"growth {t.growth:.2f}x (--full-table prints every turn)"
            )
        print()
    table = sim.cost_table(prices)
    header = list(table[0])
    print("Whole conversation, per strategy (input = prompts + upkeep calls; $ per model):")
    print(_table(header, [[row[h] for h in header] for row in table]))
    if matches_seed(sim):
        print("\nThe full buffer matches seed 000's table exactly (5,611 tokens, 6.55x).")


# --- parser ------------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _at_least(low: int) -> Callable[[str], int]:
    """An argparse type: a whole number of at least `low`."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"expected {low} or more, got {value}")
        return value

    return parse


_positive = _at_least(1)
_non_negative = _at_least(0)


MAIN_EXAMPLES = """examples:
  memory-lab simulate                                  # seed 000's table: 5,611 tokens, 6.55x
  memory-lab simulate --turns 200 --strategy full --strategy window:k=3 --csv growth.csv
  memory-lab survival --payload-only                   # no model: in-payload verdicts only
  memory-lab survival --payload-only --json > grid.json
  memory-lab survival --probe-turns 2,5,10 --strategy full --strategy window:k=3
  memory-lab tune --composition mine.json              # a composition exported from the app
  memory-lab app                                       # the app on http://127.0.0.1:8501

Each command has its own --help. Results go to stdout; progress and notes to stderr.

"""

SURVIVAL_EXAMPLES = """examples:
  memory-lab survival --payload-only --probe-turns 2,5,10,20,50
  memory-lab survival --payload-only --json --quiet | jq '.rows | length'
  memory-lab survival --provider openai --model gpt-4o-mini --strategy full --strategy hybrid
  memory-lab survival --estimate-only --strategy entity

"""

SIMULATE_EXAMPLES = """examples:
  memory-lab simulate
  memory-lab simulate --turns 1000 --strategy full --strategy summary_buffer:budget=800
  memory-lab simulate --user-turns chat.txt --price gpt-4o=2.5/10 --json

"""


def build_parser() -> argparse.ArgumentParser:
    names = ", ".join(REGISTRY)
    parser = _Parser(
        prog="memory-lab",
        description=__doc__.split("\n\n")[0],
        epilog=MAIN_EXAMPLES + EXIT_CODES_HELP,
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(
        dest="command", required=True, parser_class=_Parser, metavar="COMMAND"
    )
    _add_simulate_parser(sub, names)
    _add_survival_parser(sub, names)
    add_app_parser(sub)
    sweep.register(sub)  # `memory-lab sweep ...` lives in cli/sweep.py
    tune.register(sub, add_grid_arguments)  # `memory-lab tune ...` lives in cli/tune.py
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("memory-lab")
    except PackageNotFoundError:
        return "(not installed: run from a checkout)"


def add_grid_arguments(s: Any, *, strategy_help: str) -> None:
    """The arguments that say what a survival grid states and probes (survival, tune)."""
    s.add_argument(
        "--probe-turns", default="2,5,10,20,50", help="turns N to probe at (2,5,10,20,50)"
    )
    s.add_argument(
        "--strategy",
        action="append",
        metavar="NAME[:k=v,...]",
        help=strategy_help,
    )
    s.add_argument(
        "--facts",
        metavar="FILE.json",
        help="facts to state (default: FinCoach's four); the format is in "
        "engines/survival/facts.py: key, text, probe, answer, turn, speaker, updates",
    )
    s.add_argument("--plant-turn", type=int, help="plant every fact at this turn (default 1)")
    s.add_argument("--system", metavar="TEXT", help="the system prompt (default: FinCoach's)")
    s.add_argument("--system-file", metavar="FILE", help="read the system prompt from a file")
    s.add_argument(
        "--filler",
        default="builtin",
        help="'builtin' (the bank) or a transcript file (.txt/.json/.csv)",
    )
    s.add_argument("--filler-seed", type=int, default=0, help="shuffle of the built-in bank")
    add_composition_argument(s)


def _add_survival_parser(sub: Any, names: str) -> None:
    s = sub.add_parser(
        "survival",
        help="plant facts at turn 1, probe at turn N, per strategy",
        description="Fact survival: is a fact planted early still in the payload, and "
        "recalled, at turn N? Default model: the embedded SmolLM2 (small: in-payload is "
        "the fair test, recall is noisy).",
        epilog=SURVIVAL_EXAMPLES + EXIT_CODES_HELP,
        formatter_class=HelpFormatter,
    )
    add_grid_arguments(
        s,
        strategy_help="a strategy to test, repeatable (default: the six main-page lanes). "
        f"Names: {names}",
    )
    s.add_argument("--replies", choices=("fixed", "generated"), default="fixed",
                   help="replies to filler turns: fixed short replies (fast, free) or generated")  # fmt: skip
    s.add_argument("--fixed-replies", action="store_true", help="same as --replies fixed")
    s.add_argument(
        "--payload-only",
        action="store_true",
        help="no model at all: payload verdict only, upkeep by rule-based stand-ins",
    )
    s.add_argument("--provider", default="embedded", help="embedded (default), openai, anthropic, "
                   "or an OpenAI-compatible preset")  # fmt: skip
    s.add_argument("--model", help="model name (default: the provider's default)")
    s.add_argument("--base-url", help="endpoint URL for OpenAI-compatible servers")
    s.add_argument("--max-tokens", type=_positive, default=96, help="reply length cap (96)")
    s.add_argument("--temperature", type=float, default=0.0, help="0 (reproducible) by default")
    s.add_argument(
        "--workers",
        type=_positive,
        help="strategies run at once (default: 1 on the embedded model, whose batched replies "
        "can differ run to run; all strategies on other providers)",
    )
    s.add_argument("--csv", metavar="FILE", help="write every probe row here")
    s.add_argument("--json", nargs="?", const=STDOUT, metavar="FILE",
                   help="write config, rows and totals to FILE; with no FILE, print them on "
                   "stdout as JSON instead of the tables")  # fmt: skip
    s.add_argument("--rows", action="store_true", help="also print every probe and reply")
    s.add_argument("--estimate-only", action="store_true", help="print the estimate and stop")
    s.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    s.set_defaults(func=cmd_survival, parser=s)


def _add_simulate_parser(sub: Any, names: str) -> None:
    g = sub.add_parser(
        "simulate",
        help="model-free token growth per strategy (seed 000's table by default)",
        description="Token growth without a model: user turns counted with tiktoken, replies "
        "of a fixed length. Defaults reproduce seed 000's table.",
        epilog=SIMULATE_EXAMPLES + EXIT_CODES_HELP,
        formatter_class=HelpFormatter,
    )
    g.add_argument("--turns", type=_positive, help="number of turns, up to 1000 (default 10)")
    g.add_argument(
        "--reply-tokens", type=_non_negative, default=80, help="assumed reply length (80)"
    )
    g.add_argument(
        "--user-turns",
        default="fincoach",
        help="fincoach (the seed's ten), filler (the bank) or a transcript file; cycled",
    )
    g.add_argument("--strategy", action="append", metavar="NAME[:k=v,...]",
                   help=f"a strategy to project, repeatable (default: full). Names: {names}")  # fmt: skip
    add_composition_argument(g)
    g.add_argument("--summary-tokens", type=_positive, default=150, help="assumed summary length")
    g.add_argument("--facts-tokens", type=_non_negative, default=30, help="assumed facts block")
    g.add_argument("--overhead", action="store_true", help="add per-message template tokens")
    g.add_argument("--price", action="append", metavar="NAME=IN/OUT",
                   help="$ per million tokens, repeatable (default: catalog prices)")  # fmt: skip
    g.add_argument("--full-table", action="store_true", help="print every turn even past 30")
    g.add_argument("--csv", metavar="FILE", help="write every row here")
    g.add_argument("--json", nargs="?", const=STDOUT, metavar="FILE",
                   help="write config and rows to FILE; with no FILE, print rows, totals and "
                   "costs on stdout as JSON instead of the tables")  # fmt: skip
    g.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    g.set_defaults(func=cmd_simulate, parser=g)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit code (see EXIT_CODES_HELP)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        prepare_compositions(args)
        return int(args.func(args))
    except UsageError as exc:
        getattr(args, "parser", parser).print_usage(sys.stderr)
        sys.stderr.write(f"error: {exc}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        sys.stderr.write("\ninterrupted\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `memory-lab ... | head`: the reader left; not an error
        sys.stderr.close()
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001 - a failed run is exit 1 with a one-line reason
        sys.stderr.write(f"error: {type(exc).__name__}: {exc}\n")
        if os.environ.get("MEMORY_LAB_DEBUG"):
            raise
        return EXIT_FAILED


def console() -> None:
    """The `memory-lab` console script."""
    sys.exit(main())


if __name__ == "__main__":
    sys.exit(main())
