"""The model-free token-growth simulator: seed 000's growth table, made interactive.

Every user turn is counted with tiktoken and every reply is assumed to be `reply_tokens`
long; strategies are replayed with `memory.replay` (no model). Summary strategies fold with
a stand-in summariser whose summaries are `summary_tokens` long, entity strategies keep a
facts block of about `facts_tokens`. With FinCoach's defaults the full buffer gives the
seed's table to the token: prompts 149 ... 976, 5,611 sent in all, 6.55x.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from memory.lane_spec import LaneSpec
from memory.maintenance import Upkeep
from memory.replay import GrowthRow, growth_factor, growth_table, replay
from memory.standins import SizedExtractor, SizedSummariser
from memory.tokens import TokenCounter
from providers import catalog
from providers.catalog import Price
from scenarios import fincoach
from scenarios.filler import BANK

MAX_TURNS = 1000
TURN_SOURCES = ("fincoach", "filler")


class SimulationError(ValueError):
    """Simulator inputs that cannot run; the message says what to change."""


# One price table, the providers catalog's (FALLBACK_PRICES is its older name, kept for callers).
default_prices = catalog.prices
FALLBACK_PRICES: tuple[Price, ...] = tuple(catalog.prices())


@dataclass(frozen=True)
class SimConfig:
    """The simulator's inputs (defaults: seed 000's FinCoach simulation)."""

    system_prompt: str = fincoach.SYSTEM_PROMPT
    user_turns: tuple[str, ...] = fincoach.SIMULATED_TURNS
    reply_tokens: int = fincoach.REPLY_TOKENS
    turns: int | None = None  # None: one pass over user_turns; more cycles them
    strategies: tuple[LaneSpec, ...] = (LaneSpec("full"),)
    summary_tokens: int = 150
    facts_tokens: int = 30
    overhead: bool = False  # add the per-message chat-template estimate to each prompt
    encoding: str = "o200k_base"

    @property
    def n_turns(self) -> int:
        return self.turns if self.turns is not None else len(self.user_turns)

    def validate(self) -> SimConfig:
        if not self.user_turns or not all(t.strip() for t in self.user_turns):
            raise SimulationError("give at least one user turn, none of them empty")
        if not 1 <= self.n_turns <= MAX_TURNS:
            raise SimulationError(f"turns run from 1 to {MAX_TURNS}; got {self.n_turns}")
        if not 0 <= self.reply_tokens <= 100_000:
            raise SimulationError(f"reply length is 0 to 100000 tokens; got {self.reply_tokens}")
        if not 1 <= self.summary_tokens <= 100_000:
            raise SimulationError(
                f"summary length is 1 to 100000 tokens; got {self.summary_tokens}"
            )
        if not 0 <= self.facts_tokens <= 100_000:
            raise SimulationError(f"facts block is 0 to 100000 tokens; got {self.facts_tokens}")
        if not self.strategies:
            raise SimulationError("choose at least one strategy to project")
        labels = [s.label for s in self.strategies]
        if len(set(labels)) != len(labels):
            raise SimulationError(f"each strategy setting can be projected once; got {labels}")
        return self

    def transcript(self) -> list[str]:
        """The user turns, cycled to `n_turns`."""
        return [self.user_turns[i % len(self.user_turns)] for i in range(self.n_turns)]

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["user_turns"] = list(self.user_turns)
        data["strategies"] = [s.as_dict() for s in self.strategies]
        return data

    as_dict = to_dict

    @classmethod
    def from_dict(cls, data: Any) -> SimConfig:
        """The config `to_dict` wrote (a saved run, the page's settings, the CLI's arguments);
        fields left out take their defaults. SimulationError names a malformed field."""
        if not isinstance(data, Mapping):
            raise SimulationError("a simulator config is a JSON object")
        base = cls()
        values: dict[str, Any] = {}
        for name, kind in _SIM_FIELDS.items():
            if name not in data or (name == "turns" and data[name] is None):
                continue
            value = data[name]
            if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
                raise SimulationError(f"{name} must be a whole number, got {value!r}")
            if kind is not int and not isinstance(value, kind):
                raise SimulationError(f"{name} must be {kind.__name__}, got {type(value).__name__}")
            values[name] = value
        if "user_turns" in data:
            turns = data["user_turns"]
            if not isinstance(turns, list | tuple) or not all(isinstance(t, str) for t in turns):
                raise SimulationError("user_turns is a list of texts")
            values["user_turns"] = tuple(turns)
        if "strategies" in data:
            raw = data["strategies"]
            if not isinstance(raw, list | tuple) or not all(
                isinstance(x, LaneSpec)
                or (isinstance(x, Mapping) and isinstance(x.get("name"), str))
                for x in raw
            ):
                raise SimulationError('strategies is a list of {"name": ..., "params": {...}}')
            values["strategies"] = tuple(
                x if isinstance(x, LaneSpec) else LaneSpec(x["name"], x.get("params")) for x in raw
            )
        return replace(base, **values)


_SIM_FIELDS: dict[str, type] = {
    "system_prompt": str,
    "reply_tokens": int,
    "turns": int,
    "summary_tokens": int,
    "facts_tokens": int,
    "overhead": bool,
    "encoding": str,
}


def user_turns_from(source: str) -> tuple[str, ...]:
    """Named sources of user turns: 'fincoach' (the seed's ten) or 'filler' (the bank)."""
    if source == "fincoach":
        return fincoach.SIMULATED_TURNS
    if source == "filler":
        return tuple(t.user for t in BANK)
    raise SimulationError(f"unknown source of user turns {source!r}; choose {TURN_SOURCES}")


@dataclass(frozen=True)
class SimRow:
    """One turn of one strategy: the seed's columns plus the upkeep calls that turn made."""

    strategy: str
    turn: int
    message_tokens: int
    history_tokens: int
    prompt_tokens: int
    sent_so_far: int
    reply_tokens: int
    upkeep_calls: int
    upkeep_input_tokens: int
    upkeep_output_tokens: int
    kept_turns: int
    summarised_turns: int


@dataclass(frozen=True)
class Totals:
    """A strategy's whole conversation: what went in, what came out, what it cost."""

    strategy: str
    prompt_tokens: int
    reply_tokens: int
    upkeep_calls: int
    upkeep_input_tokens: int
    upkeep_output_tokens: int
    first_prompt: int
    last_prompt: int
    peak_prompt: int
    growth: float

    @property
    def input_tokens(self) -> int:
        return self.prompt_tokens + self.upkeep_input_tokens

    @property
    def output_tokens(self) -> int:
        return self.reply_tokens + self.upkeep_output_tokens

    def cost(self, price: Price) -> float:
        return price.cost(self.input_tokens, self.output_tokens)


@dataclass
class Simulation:
    """The projected rows of every strategy, keyed by the strategy's label."""

    config: SimConfig
    system_tokens: int
    rows: dict[str, list[SimRow]] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)  # label -> registry name

    @property
    def labels(self) -> list[str]:
        return list(self.rows)

    def totals(self, label: str) -> Totals:
        rows = self.rows[label]
        prompts = [r.prompt_tokens for r in rows]
        return Totals(
            strategy=label,
            prompt_tokens=sum(prompts),
            reply_tokens=sum(r.reply_tokens for r in rows),
            upkeep_calls=sum(r.upkeep_calls for r in rows),
            upkeep_input_tokens=sum(r.upkeep_input_tokens for r in rows),
            upkeep_output_tokens=sum(r.upkeep_output_tokens for r in rows),
            first_prompt=prompts[0],
            last_prompt=prompts[-1],
            peak_prompt=max(prompts),
            growth=prompts[-1] / prompts[0] if prompts[0] else 0.0,
        )

    def cost_table(self, prices: Sequence[Price]) -> list[dict[str, Any]]:
        """One row per strategy: tokens in and out, and the cost under each price."""
        out = []
        for label in self.labels:
            t = self.totals(label)
            row: dict[str, Any] = {
                "strategy": label,
                "prompt tokens": t.prompt_tokens,
                "upkeep calls": t.upkeep_calls,
                "upkeep input": t.upkeep_input_tokens,
                "input tokens": t.input_tokens,
                "output tokens": t.output_tokens,
                "last prompt": t.last_prompt,
                "growth": round(t.growth, 2),
            }
            for p in prices:
                row[f"{p.model} $"] = round(t.cost(p), 4)
            out.append(row)
        return out

    def to_csv(self) -> str:
        """Every row of every strategy."""
        out = io.StringIO()
        names = [f.name for f in SimRow.__dataclass_fields__.values()]
        writer = csv.DictWriter(out, fieldnames=names, lineterminator="\n")
        writer.writeheader()
        for rows in self.rows.values():
            for r in rows:
                writer.writerow(asdict(r))
        return out.getvalue()

    def to_json(self) -> str:
        return json.dumps(
            {
                "config": self.config.as_dict(),
                "system_tokens": self.system_tokens,
                "rows": {k: [asdict(r) for r in v] for k, v in self.rows.items()},
            },
            ensure_ascii=False,
            indent=2,
        )


def simulate(config: SimConfig, *, counter: TokenCounter | None = None) -> Simulation:
    """Replay the cycled user turns through each strategy with fixed-length replies."""
    config.validate()
    counter = counter or TokenCounter(config.encoding)
    summarise = SizedSummariser(counter, config.summary_tokens)
    extract = SizedExtractor(counter, config.facts_tokens)
    strategies = {
        c.label: c.create(config.system_prompt, counter=counter, upkeep=Upkeep(summarise, extract))
        for c in config.strategies
    }
    steps = replay(
        config.transcript(), strategies, counter=counter, reply_tokens=config.reply_tokens
    )
    sim = Simulation(config, counter.count(config.system_prompt))
    for choice in config.strategies:
        label = choice.label
        sim.names[label] = choice.name
        table: list[GrowthRow] = growth_table(steps, label, counter)
        rows: list[SimRow] = []
        total = 0
        for step, g in zip(steps, table, strict=True):
            request = step.requests[label]
            extra = request.tokens.with_overhead - request.tokens.content if config.overhead else 0
            prompt = g.prompt_tokens + extra
            total += prompt
            calls = step.maintenance[label]
            acc = request.account
            rows.append(
                SimRow(
                    strategy=label,
                    turn=g.turn,
                    message_tokens=g.message_tokens,
                    history_tokens=g.history_tokens + extra,
                    prompt_tokens=prompt,
                    sent_so_far=total,
                    reply_tokens=counter.count(step.reply),
                    upkeep_calls=len(calls),
                    upkeep_input_tokens=sum(c.tokens.content for c in calls),
                    upkeep_output_tokens=sum(counter.count(c.reply or "") for c in calls),
                    kept_turns=len(acc.kept_turns) if acc else 0,
                    summarised_turns=len(acc.summarised_turns) if acc else 0,
                )
            )
        sim.rows[label] = rows
    return sim


def seed_rows(sim: Simulation, label: str) -> list[GrowthRow]:
    """A strategy's rows in the seed's five columns."""
    return [
        GrowthRow(r.turn, r.message_tokens, r.history_tokens, r.prompt_tokens, r.sent_so_far)
        for r in sim.rows[label]
    ]


def format_seed_table(sim: Simulation, label: str) -> str:
    """The seed's printout for one strategy: header line, table, growth factor."""
    rows = seed_rows(sim, label)
    lines = [f"System prompt: {sim.system_tokens} tokens on every call", ""]
    lines.append(
        f"{'Turn':>4} | {'Msg tokens':>10} | {'Conv history':>12} | "
        f"{'Prompt to API':>13} | {'Sent so far':>11}"
    )
    for r in rows:
        lines.append(
            f"{r.turn:>4} | {r.message_tokens:>10} | {r.history_tokens:>12} | "
            f"{r.prompt_tokens:>13} | {r.sent_so_far:>11,}"
        )
    lines.append("")
    lines.append(f"Growth factor, turn {rows[-1].turn} over turn 1: {growth_factor(rows):.2f}x")
    return "\n".join(lines)


def matches_seed(sim: Simulation, label: str = "full") -> bool:
    """True when a strategy's rows are seed 000's table exactly."""
    if label not in sim.rows:
        return False
    prompts = tuple(r.prompt_tokens for r in sim.rows[label])
    return (
        sim.system_tokens == fincoach.SEED_SYSTEM_TOKENS
        and prompts == fincoach.SEED_PROMPTS
        and sim.rows[label][-1].sent_so_far == fincoach.SEED_TOTAL
    )
