"""The lab's engines from the command line (for CI and notebooks).

    python -m cli survival --probe-turns 2,5,10 --strategy full --strategy window:k=3
    python -m cli survival --payload-only --csv out.csv --json out.json
    python -m cli simulate --turns 200 --strategy full --strategy summary_buffer:budget=800

Exit codes: 0 done, 1 the run failed (e.g. the model could not start), 2 bad arguments
(with a message saying what to change), 130 interrupted (the rows so far are still written).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

from cli import sweep
from engines.simulator import (
    FALLBACK_PRICES,
    TURN_SOURCES,
    Price,
    SimConfig,
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

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class UsageError(Exception):
    """Arguments that cannot run; reported with exit code 2."""


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


def _check_outputs(args: argparse.Namespace) -> None:
    """Refuse an output path that cannot be written before a long run, not after it."""
    for flag in ("csv", "json"):
        path = getattr(args, flag, None)
        if not path:
            continue
        target = Path(path)
        folder = next((p for p in (target.parent, *target.parent.parents) if p.exists()), None)
        if (
            target.is_dir()
            or folder is None
            or not folder.is_dir()
            or not os.access(folder, os.W_OK)
        ):
            raise UsageError(f"--{flag} {path}: cannot write there (not a writable folder)")
        if target.exists() and not os.access(target, os.W_OK):
            raise UsageError(f"--{flag} {path}: the file is not writable")


def _write(path: str | None, text: str) -> None:
    if not path:
        return
    target = Path(path)
    if target.parent and not target.parent.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")


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


def _read(option: str, path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read {option} {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{option} {path} is not UTF-8 text") from None


def _survival_config(args: argparse.Namespace) -> SurvivalConfig:
    try:
        facts = SurvivalConfig().facts
        if args.facts:
            try:
                facts = parse_facts_json(_read("--facts", args.facts))
            except SurvivalConfigError as exc:
                raise UsageError(f"--facts {args.facts}: {exc}") from None
        if args.plant_turn is not None:
            if args.plant_turn < 1:
                raise UsageError("--plant-turn counts from 1")
            facts = tuple(replace(f, plant_turn=args.plant_turn) for f in facts)
        system_prompt = SurvivalConfig().system_prompt
        if args.system is not None and args.system_file:
            raise UsageError("give --system or --system-file, not both")
        if args.system is not None:
            system_prompt = args.system
        elif args.system_file:
            system_prompt = _read("--system-file", args.system_file)
        filler = None
        if args.filler and args.filler != "builtin":
            try:
                filler = tuple(filler_mod.load_transcript(args.filler))
            except TranscriptError as exc:
                raise UsageError(f"--filler: {exc}") from None
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


def _progress_printer(stream: Any) -> Callable[[Progress], None]:
    tty = hasattr(stream, "isatty") and stream.isatty()
    last = {"shown": -1}

    def show(p: Progress) -> None:
        step = max(1, p.total // 20) if p.total else max(1, p.rows_total // 20)
        mark = p.done if p.total else p.rows
        if not tty and mark // step == last["shown"]:
            return
        last["shown"] = mark // step
        if p.total:
            text = (
                f"calls {p.done}/{p.total} done, {p.to_go} to go · probes {p.rows}/{p.rows_total}"
            )
        else:
            text = f"probes {p.rows}/{p.rows_total}"
        stream.write(("\r" + text + " " * 8) if tty else text + "\n")
        stream.flush()

    return show


def cmd_survival(args: argparse.Namespace) -> int:
    _check_outputs(args)
    config = _survival_config(args)
    with_model = not args.payload_only
    est = estimate(config, with_model=with_model, assumed_reply_tokens=args.max_tokens)
    err = sys.stderr
    plan = "Plan: " + plan_sentence(config, est, with_model=with_model)
    err.write(plan + "\n")
    if args.estimate_only:
        print(json.dumps(est.as_dict(), indent=2))
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
    previous = signal.getsignal(signal.SIGINT)

    def interrupt(signum: int, frame: Any) -> None:
        cancel.set()
        err.write("\ninterrupted: finishing the calls in flight, keeping the rows so far\n")

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, interrupt)
    try:
        result = run_survival(
            config,
            send=send,
            summarize=model_fn,
            extract=model_fn,
            on_progress=None if args.quiet else _progress_printer(err),
            cancel=cancel,
            workers=args.workers or (1 if args.provider == "embedded" else None),
            expected_calls=est.calls,
        )
    finally:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, previous)
    if not args.quiet:
        err.write("\n")
    result.model = result.model or description
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
    _write(args.csv, result.to_csv())
    _write(args.json, result.to_json())
    for path in (args.csv, args.json):
        if path:
            err.write(f"wrote {path}\n")
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


def cmd_simulate(args: argparse.Namespace) -> int:
    _check_outputs(args)
    try:
        if args.user_turns in TURN_SOURCES:
            turns = user_turns_from(args.user_turns)
        else:
            try:
                loaded = filler_mod.load_transcript(args.user_turns)
            except TranscriptError as exc:
                raise UsageError(
                    f"--user-turns: {exc} (or use one of {', '.join(TURN_SOURCES)})"
                ) from None
            turns = tuple(t.user for t in loaded)
        config = SimConfig.from_dict(
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
        prices = _prices(args.price)
        sim = simulate(config)
    except (SimulationError, MemoryLabError) as exc:
        raise UsageError(str(exc)) from None
    for label in sim.labels:
        print(f"== {label} ==")
        if args.full_table or config.n_turns <= 30:
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
    _write(args.csv, sim.to_csv())
    _write(args.json, sim.to_json())
    for path in (args.csv, args.json):
        if path:
            sys.stderr.write(f"wrote {path}\n")
    return EXIT_OK


# --- parser ------------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected 1 or more, got {value}")
    return value


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or more, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    names = ", ".join(REGISTRY)
    parser = _Parser(prog="python -m cli", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    s = sub.add_parser(
        "survival",
        help="plant facts at turn 1, probe at turn N, per strategy",
        description="Fact survival: is a fact planted early still in the payload, and "
        "recalled, at turn N? Default model: the embedded SmolLM2 (small: in-payload is "
        "the fair test, recall is noisy).",
    )
    s.add_argument(
        "--probe-turns", default="2,5,10,20,50", help="turns N to probe at (2,5,10,20,50)"
    )
    s.add_argument(
        "--strategy",
        action="append",
        metavar="NAME[:k=v,...]",
        help=f"a strategy to test, repeatable (default: the six main-page lanes). Names: {names}",
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
    s.add_argument("--csv", help="write every probe row here")
    s.add_argument("--json", help="write config, rows and totals here")
    s.add_argument("--rows", action="store_true", help="also print every probe and reply")
    s.add_argument("--estimate-only", action="store_true", help="print the estimate and stop")
    s.add_argument("--quiet", action="store_true", help="no progress on stderr")
    s.set_defaults(func=cmd_survival, parser=s)

    g = sub.add_parser(
        "simulate",
        help="model-free token growth per strategy (seed 000's table by default)",
        description="Token growth without a model: user turns counted with tiktoken, replies "
        "of a fixed length. Defaults reproduce seed 000's table.",
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
    g.add_argument("--summary-tokens", type=_positive, default=150, help="assumed summary length")
    g.add_argument("--facts-tokens", type=_non_negative, default=30, help="assumed facts block")
    g.add_argument("--overhead", action="store_true", help="add per-message template tokens")
    g.add_argument("--price", action="append", metavar="NAME=IN/OUT",
                   help="$ per million tokens, repeatable (default: catalog prices)")  # fmt: skip
    g.add_argument("--full-table", action="store_true", help="print every turn even past 30")
    g.add_argument("--csv", help="write every row here")
    g.add_argument("--json", help="write config and rows here")
    g.set_defaults(func=cmd_simulate, parser=g)
    sweep.register(sub)  # `python -m cli sweep ...` lives in cli/sweep.py
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except UsageError as exc:
        getattr(args, "parser", parser).print_usage(sys.stderr)
        sys.stderr.write(f"error: {exc}\n")
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
