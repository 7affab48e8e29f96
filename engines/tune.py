"""Auto-tune: the cheapest memory setting that still keeps the facts you care about.

Given a survival config (facts, filler, probe turns) and a target share of probes whose
current value is in the payload, the tuner searches each strategy's parameters payload-only
(no model: upkeep by the survival lab's rule-based stand-ins) and returns every setting it
tried, the frontier (tokens per turn vs facts kept) and the cheapest setting that meets the
target.

How it searches (a search, not a grid dump):
1. Each strategy's *size* parameter (the first whole-number parameter: k, budget, top_k) gets
   a ladder of values from small to "keeps everything". A bisection on that ladder finds the
   smallest value that meets the target, assuming more room never keeps less; both ends are
   tried first, so a strategy that cannot meet the target costs two trials.
2. Around that value (the rung found and the one below it) a seeded random search tries the
   other parameters (fold thresholds, placements, a second size such as retrieval's top_k).
3. It stops when every planned setting was tried, or at the time or trial limit, or when
   cancelled; the result says which, and how many settings were tried.
Costs are prompt tokens sent per turn up to the last probe turn, upkeep calls included, so a
summary strategy's hidden cost counts. The same seed and inputs give the same trials.
"""

from __future__ import annotations

import csv
import io
import json
import random
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from engines.survival import (
    STAND_IN_NOTE,
    Estimate,
    SurvivalConfig,
    SurvivalResult,
    estimate,
    run_survival,
)
from lanes.lane import Sender
from memory.choices import StrategyChoice
from memory.errors import MemoryLabError
from memory.registry import Param, spec
from memory.tokens import TokenCounter
from memory.types import ModelFn

DEFAULT_STRATEGIES = ("window", "token_window", "summary_buffer", "entity", "hybrid", "retrieval")
STOP_DONE = "every planned setting was tried"
STOP_TIME = "the time limit was reached"
STOP_TRIALS = "the trial limit was reached"
STOP_CANCELLED = "cancelled"


@dataclass(frozen=True)
class Target:
    """What 'keeps the facts' means: at least `share` of the probes (fact x probe turn) have
    the fact's current value in the payload; `at` limits it to some probe turns."""

    share: float = 1.0
    at: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if not 0.0 < self.share <= 1.0:
            raise ValueError(f"the target share must be in (0, 1], got {self.share}")

    def describe(self) -> str:
        where = f" at N={', '.join(map(str, self.at))}" if self.at else ""
        if self.share >= 1.0:
            return f"every fact in the payload{where}"
        return f"at least {self.share:.0%} of the facts in the payload{where}"


@dataclass(frozen=True)
class Trial:
    """One setting tried: its share of facts kept and what it costs per turn."""

    choice: StrategyChoice
    kept: int
    probes: int
    tokens_per_turn: float
    meets: bool
    stage: str  # "ladder", "refine"
    error: str | None = None

    @property
    def share(self) -> float:
        return self.kept / self.probes if self.probes else 0.0

    @property
    def label(self) -> str:
        return _label(self.choice)

    def as_dict(self) -> dict[str, Any]:
        return {
            "strategy": self.choice.name,
            "params": dict(self.choice.params),
            "label": self.label,
            "kept": self.kept,
            "probes": self.probes,
            "share": round(self.share, 4),
            "tokens_per_turn": round(self.tokens_per_turn, 2),
            "meets_target": self.meets,
            "stage": self.stage,
            "error": self.error,
        }


@dataclass
class TuneResult:
    """Every trial in the order tried, the frontier, the winner and why the search stopped."""

    target: Target
    trials: list[Trial]
    stop_reason: str
    elapsed_s: float
    seed: int
    notes: list[str] = field(default_factory=list)

    @property
    def winner(self) -> Trial | None:
        """The cheapest trial that meets the target (ties: more kept, then the label)."""
        met = [t for t in self.trials if t.meets]
        return min(met, key=lambda t: (t.tokens_per_turn, -t.share, t.label)) if met else None

    @property
    def frontier(self) -> list[Trial]:
        """The trials no other trial beats on both cost and facts kept, cheapest first."""
        ok = sorted(
            (t for t in self.trials if t.error is None),
            key=lambda t: (t.tokens_per_turn, -t.share, t.label),
        )
        best: list[Trial] = []
        for t in ok:
            if not best or t.share > best[-1].share:
                best.append(t)
        return best

    def summary(self) -> str:
        winner = self.winner
        found = (
            f"cheapest meeting the target: {winner.label} at {winner.tokens_per_turn:,.0f} "
            f"tokens/turn ({winner.share:.0%} kept)"
            if winner
            else "no setting tried meets the target"
        )
        return (
            f"{len(self.trials)} settings tried in {self.elapsed_s:.1f} s; stopped because "
            f"{self.stop_reason}. Target: {self.target.describe()}. {found}."
        )

    def as_dict(self) -> dict[str, Any]:
        winner = self.winner
        return {
            "target": {"share": self.target.share, "at": list(self.target.at)},
            "seed": self.seed,
            "stop_reason": self.stop_reason,
            "elapsed_s": round(self.elapsed_s, 3),
            "tried": len(self.trials),
            "winner": winner.as_dict() if winner else None,
            "frontier": [t.as_dict() for t in self.frontier],
            "trials": [t.as_dict() for t in self.trials],
            "notes": list(self.notes),
        }

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), ensure_ascii=False, indent=1)

    def to_csv(self) -> str:
        out = io.StringIO()
        columns = ["label", "strategy", "params", "kept", "probes", "share", "tokens_per_turn"]
        columns += ["meets_target", "on_frontier", "stage", "error"]
        writer = csv.DictWriter(out, fieldnames=columns)
        writer.writeheader()
        frontier = {id(t) for t in self.frontier}
        for t in self.trials:
            row = t.as_dict()
            row["params"] = json.dumps(row["params"], sort_keys=True)
            row["on_frontier"] = id(t) in frontier
            writer.writerow({k: row[k] for k in columns})
        return out.getvalue()


@dataclass(frozen=True)
class TuneProgress:
    tried: int
    planned: int
    strategy: str


def _label(choice: StrategyChoice) -> str:
    if not choice.params:
        return choice.name
    shown = ", ".join(f"{k}={v}" for k, v in sorted(choice.params.items()))
    return f"{choice.name} ({shown})"


def _int_params(params: Iterable[Param]) -> list[Param]:
    return [
        p
        for p in params
        if isinstance(p.default, int) and not isinstance(p.default, bool) and not p.choices
    ]


def ladder(param: Param, cap: int, *, low: int | None = None) -> list[int]:
    """Values to try for a size parameter, from `low` (default: its minimum) to `cap`: every
    value while they are few, then roughly geometric steps (about 20 % apart)."""
    if low is None:
        low = int(param.minimum) if param.minimum is not None else 0
    high = min(int(param.maximum) if param.maximum is not None else cap, cap)
    if high <= low:
        return [low]
    values: list[int] = []
    v = low
    while v < high:
        values.append(v)
        v = v + 1 if v < 8 else max(v + 1, round(v * 1.2))
    values.append(high)
    return values


def _secondary_values(p: Param, size_cap: int) -> list[Any]:
    if p.choices:
        return list(p.choices)
    if isinstance(p.default, bool):
        return [False, True]
    if isinstance(p.default, int):
        return ladder(p, min(size_cap, 20))
    if isinstance(p.default, float) and p.minimum is not None and p.maximum is not None:
        lo, hi = float(p.minimum), float(p.maximum)
        return sorted({round(lo + (hi - lo) * f, 2) for f in (0.25, 0.5, 0.75, 1.0)})
    return [p.default]


class _Search:
    def __init__(
        self,
        config: SurvivalConfig,
        target: Target,
        *,
        counter: TokenCounter,
        seed: int,
        time_limit_s: float,
        max_trials: int,
        refine: int,
        cancel: threading.Event | None,
        on_progress: Callable[[TuneProgress], None] | None,
    ) -> None:
        self.config = config
        self.target = target
        self.counter = counter
        self.rng = random.Random(seed)
        self.deadline = time.perf_counter() + time_limit_s
        self.max_trials = max_trials
        self.refine = refine
        self.cancel = cancel or threading.Event()
        self.on_progress = on_progress
        self.trials: list[Trial] = []
        self._seen: dict[tuple[str, str], Trial] = {}
        self.planned = 0
        self.stop: str | None = None

    # -- one trial --------------------------------------------------------------------------
    def evaluate(self, choice: StrategyChoice, stage: str) -> Trial | None:
        key = (choice.name, json.dumps(dict(choice.params), sort_keys=True))
        if key in self._seen:
            return self._seen[key]
        if self.cancel.is_set():
            self.stop = STOP_CANCELLED
        elif len(self.trials) >= self.max_trials:
            self.stop = STOP_TRIALS
        elif time.perf_counter() > self.deadline:
            self.stop = STOP_TIME
        if self.stop:
            return None
        trial = self._run(choice, stage)
        self._seen[key] = trial
        self.trials.append(trial)
        if self.on_progress is not None:
            self.on_progress(TuneProgress(len(self.trials), self.planned, choice.name))
        return trial

    def _run(self, choice: StrategyChoice, stage: str) -> Trial:
        config = replace(self.config, strategies=(choice,))
        try:
            result = run_survival(config, counter=self.counter)
        except MemoryLabError as exc:  # e.g. a budget smaller than the system prompt
            return Trial(choice, 0, 0, 0.0, meets=False, stage=stage, error=str(exc))
        rows = [r for r in result.rows if not self.target.at or r.probe_turn in self.target.at]
        errors = [r.error for r in rows if r.error]
        kept = sum(1 for r in rows if r.in_payload)
        last = max(r.probe_turn for r in result.rows)
        spent = max(
            (
                r.prompt_tokens_spent + r.maintenance_tokens
                for r in result.rows
                if r.probe_turn == last
            ),
            default=0,
        )
        share = kept / len(rows) if rows else 0.0
        return Trial(
            choice,
            kept,
            len(rows),
            spent / last,
            meets=not errors and share >= self.target.share - 1e-12,
            stage=stage,
            error=errors[0] if errors else None,
        )

    # -- one strategy -----------------------------------------------------------------------
    def strategy(self, name: str) -> None:
        s = spec(name)
        sizes = _int_params(s.params)
        if not sizes:
            self.evaluate(StrategyChoice(name), "ladder")
            return
        primary, *others = sizes
        secondaries = [p for p in s.params if p is not primary]
        rungs = ladder(primary, self._cap(primary), low=self._floor(primary))
        self.planned += 2 + max(1, len(rungs).bit_length()) + (self.refine if secondaries else 0)
        found = self._bisect(name, primary.name, rungs)
        if found is None or not secondaries:
            return
        base = [rungs[found]] + ([rungs[found - 1]] if found > 0 else [])
        space = {p.name: _secondary_values(p, self._cap(p)) for p in secondaries}
        for _ in range(self.refine):
            params = {primary.name: self.rng.choice(base)}
            for p in secondaries:
                params[p.name] = self.rng.choice(space[p.name])
            if self.evaluate(StrategyChoice(name, _non_default(name, params)), "refine") is None:
                return

    def _bisect(self, name: str, param: str, rungs: list[int]) -> int | None:
        """Index of the smallest value meeting the target (None if even the top misses).
        Bisects the ladder, then the whole numbers between the last rung that missed and the
        first that met, so the answer is exact while more room never keeps less; a value
        found between rungs is inserted into `rungs`."""

        def meets(value: int) -> bool | None:
            choice = StrategyChoice(name, _non_default(name, {param: value}))
            trial = self.evaluate(choice, "ladder")
            return None if trial is None else trial.meets

        if not meets(rungs[-1]):
            return None
        if meets(rungs[0]):
            return 0
        lo, hi = rungs[0], rungs[-1]  # lo misses, hi meets
        inner = rungs[1:-1]
        while inner:
            mid = inner[len(inner) // 2]
            m = meets(mid)
            if m is None:
                break
            lo, hi = (lo, mid) if m else (mid, hi)
            inner = [r for r in inner if lo < r < hi]
        while hi - lo > 1 and not self.stop:
            mid = (lo + hi) // 2
            m = meets(mid)
            if m is None:
                break
            lo, hi = (lo, mid) if m else (mid, hi)
        if hi not in rungs:
            rungs.append(hi)
            rungs.sort()
        return rungs.index(hi)

    def _floor(self, p: Param) -> int | None:
        """Budgets start just above the system prompt (less cannot hold a message)."""
        if p.name == "budget":
            return self.counter.count(self.config.system_prompt) + 16
        return None

    def _cap(self, p: Param) -> int:
        if p.name == "budget":
            return self.full_tokens
        return self.config.last_turn

    @property
    def full_tokens(self) -> int:
        """The largest prompt the full buffer sends in this conversation: room to keep all."""
        if not hasattr(self, "_full"):
            config = replace(self.config, strategies=(StrategyChoice("full"),))
            rows = run_survival(config, counter=self.counter).rows
            self._full = max((r.probe_prompt_tokens for r in rows), default=1000) + 64
        return self._full


def _non_default(name: str, params: Mapping[str, Any]) -> dict[str, Any]:
    defaults = spec(name).defaults()
    return {k: v for k, v in params.items() if defaults.get(k) != v}


def tune(
    config: SurvivalConfig,
    target: Target = Target(),
    *,
    strategies: Sequence[str] = DEFAULT_STRATEGIES,
    seed: int = 0,
    time_limit_s: float = 30.0,
    max_trials: int = 400,
    refine: int = 6,
    counter: TokenCounter | None = None,
    cancel: threading.Event | None = None,
    on_progress: Callable[[TuneProgress], None] | None = None,
) -> TuneResult:
    """Search `strategies`' parameters payload-only; see the module docstring for how."""
    config.validate()
    for name in strategies:
        spec(name)  # UnknownStrategy names the ones that exist
    started = time.perf_counter()
    search = _Search(
        replace(config, strategies=tuple(StrategyChoice(n) for n in strategies)),
        target,
        counter=counter or TokenCounter(config.encoding),
        seed=seed,
        time_limit_s=time_limit_s,
        max_trials=max_trials,
        refine=refine,
        cancel=cancel,
        on_progress=on_progress,
    )
    for name in strategies:
        search.strategy(name)
        if search.stop:
            break
    notes = []
    if any(spec(n).needs_model for n in strategies):
        notes.append(STAND_IN_NOTE)
    return TuneResult(
        target,
        search.trials,
        search.stop or STOP_DONE,
        time.perf_counter() - started,
        seed,
        notes,
    )


def confirmation_plan(config: SurvivalConfig, trial: Trial) -> Estimate:
    """What confirming `trial` with real recall calls would take (calls, tokens), before any
    call is made: the survival lab's own estimate for that one setting, upkeep by the model."""
    return estimate(replace(config, strategies=(trial.choice,)), with_model=True)


def confirm(
    config: SurvivalConfig,
    trial: Trial,
    *,
    send: Sender,
    summarize: ModelFn | None = None,
    extract: ModelFn | None = None,
    cancel: threading.Event | None = None,
) -> SurvivalResult:
    """Run the survival lab for the winning setting with a real model: its recall verdicts say
    whether the model uses what the payload holds (payload-only tuning cannot)."""
    return run_survival(
        replace(config, strategies=(trial.choice,)),
        send=send,
        summarize=summarize,
        extract=extract,
        cancel=cancel,
        workers=1,
    )
