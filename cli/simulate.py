"""`memory-lab simulate`: token growth per strategy without a model (seed 000's table by
default), with costs at catalog or `--price` rates.

May touch: the files its flags name, stdout and stderr; no network, no database.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from dataclasses import asdict, replace
from typing import Any

from cli.compositions import add_composition_argument
from cli.compositions import prepare as prepare_compositions
from cli.inputs import load_transcript
from cli.outputs import STDOUT, check_outputs, report, text_table
from cli.parsing import (
    EXIT_CODES_HELP,
    EXIT_OK,
    HelpFormatter,
    UsageError,
    non_negative,
    positive,
    strategies,
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
from memory.errors import MemoryLabError
from memory.lane_spec import LaneSpec
from memory.registry import REGISTRY

EXAMPLES = """examples:
  memory-lab simulate
  memory-lab simulate --turns 1000 --strategy full --strategy summary_buffer:budget=800
  memory-lab simulate --user-turns chat.txt --price gpt-4o=2.5/10 --json

"""


def pick_prices(prices: Sequence[Price], n: int = 4) -> list[Price]:
    """A few paid models to compare by default: the first priced model of each source."""
    chosen: dict[str, Price] = {}
    for p in prices:
        if p.input_per_m > 0 and p.note not in chosen:
            chosen[p.note] = p
    return list(chosen.values())[:n] or list(prices)[:n]


def prices_arg(values: Sequence[str] | None) -> list[Price]:
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
        if not (math.isfinite(price.input_per_m) and math.isfinite(price.output_per_m)):
            raise UsageError(f"--price {value!r}: prices are finite numbers, e.g. gpt-4o=2.5/10")
        if price.input_per_m < 0 or price.output_per_m < 0:
            raise UsageError(f"--price {value!r}: prices cannot be negative")
        out.append(price)
    return out


def simulate_config(args: argparse.Namespace) -> SimConfig:
    """The simulator's config from `memory-lab simulate`'s arguments (UsageError if unusable)."""
    try:
        if args.user_turns in TURN_SOURCES:
            turns = user_turns_from(args.user_turns)
        else:
            try:
                loaded = load_transcript(args.user_turns, "--user-turns")
            except UsageError as exc:
                raise UsageError(f"{exc} (or use one of {', '.join(TURN_SOURCES)})") from None
            turns = tuple(t.user for t in loaded)
        return SimConfig.from_dict(
            {
                "user_turns": list(turns),
                "reply_tokens": args.reply_tokens,
                "turns": args.turns,
                "strategies": strategies(args.strategy, (LaneSpec("full"),)),
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


def run(args: argparse.Namespace) -> int:
    prepare_compositions(args)
    config = simulate_config(args)
    prices = prices_arg(args.price)
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
    print(text_table(header, [[row[h] for h in header] for row in table]))
    if matches_seed(sim):
        print("\nThe full buffer matches seed 000's table exactly (5,611 tokens, 6.55x).")


def add_arguments(g: argparse.ArgumentParser) -> None:
    """`memory-lab simulate`'s arguments."""
    g.description = (
        "Token growth without a model: user turns counted with tiktoken, replies "
        "of a fixed length. Defaults reproduce seed 000's table."
    )
    g.epilog = EXAMPLES + EXIT_CODES_HELP
    g.formatter_class = HelpFormatter
    g.add_argument("--turns", type=positive, help="number of turns, up to 1000 (default 10)")
    g.add_argument(
        "--reply-tokens", type=non_negative, default=80, help="assumed reply length (80)"
    )
    g.add_argument(
        "--user-turns",
        default="fincoach",
        help="fincoach (the seed's ten), filler (the bank) or a transcript file; cycled",
    )
    g.add_argument("--strategy", action="append", metavar="NAME[:k=v,...]",
                   help="a strategy to project, repeatable (default: full). "
                   f"Names: {', '.join(REGISTRY)}")  # fmt: skip
    add_composition_argument(g)
    g.add_argument("--summary-tokens", type=positive, default=150, help="assumed summary length")
    g.add_argument("--facts-tokens", type=non_negative, default=30, help="assumed facts block")
    g.add_argument("--overhead", action="store_true", help="add per-message template tokens")
    g.add_argument("--price", action="append", metavar="NAME=IN/OUT",
                   help="$ per million tokens, repeatable (default: catalog prices)")  # fmt: skip
    g.add_argument("--full-table", action="store_true", help="print every turn even past 30")
    g.add_argument("--csv", metavar="FILE", help="write every row here")
    g.add_argument("--json", nargs="?", const=STDOUT, metavar="FILE",
                   help="write config and rows to FILE; with no FILE, print rows, totals and "
                   "costs on stdout as JSON instead of the tables")  # fmt: skip
    g.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
