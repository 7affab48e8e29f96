"""The search: the cheapest setting that meets the target, asking an evaluator per setting.

How it searches (a search, not a grid dump):
1. Each of a strategy's *size* parameters (its whole-number ones: k, budget, top_k,
   recall_budget, a block's budget) gets a ladder of values from small to "keeps everything"
   (the evaluator's `room`). A bisection on that ladder finds the smallest value that meets
   the target, assuming more room never keeps less (counts exactly, token amounts to within
   1 %); both ends are tried first, so a strategy that cannot meet the target costs two
   trials. Sizes are bisected in order, each with the ones before it held at the values
   found and the ones after it at their defaults (retrieval: k, then top_k, then
   recall_budget); if the first one misses even at its most room, it is tried once more
   with the later sizes at their most room too.
   From the smallest value that meets, it walks up the ladder while the cost falls (a
   summary folded less often can cost less upkeep with a larger budget).
2. Around those values (the cheapest found, the smallest that met, the rung below) a seeded
   random search tries the other parameters (fold thresholds, placements, neighbour weights).
3. It stops when every planned setting was tried, or at the time or trial limit, or when
   cancelled; the result says which, and how many settings were tried.
The evaluator decides what is kept and what it costs (evaluator.py); the same seed and
inputs give the same trials.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from engines.survival import SurvivalConfig
from engines.tune.evaluator import Evaluator, is_token_amount
from engines.tune.facts import FactsEvaluator
from engines.tune.results import (
    STOP_CANCELLED,
    STOP_DONE,
    STOP_TIME,
    STOP_TRIALS,
    Target,
    Trial,
    TuneProgress,
    TuneResult,
)
from memory.lane_spec import LaneSpec
from memory.registry import Param, spec
from memory.tokens import TokenCounter

TOKEN_PRECISION = 0.01  # token amounts are bisected to within 1 % (counts exactly)
EVERY_FACT = Target(1.0)  # the default target: everything kept at every probe
DEFAULT_STRATEGIES = ("window", "token_window", "summary_buffer", "entity", "hybrid", "retrieval")


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


def _values(p: Param) -> list[Any]:
    """The values the refinement draws from for a parameter that is not a size."""
    if p.choices:
        return list(p.choices)
    if isinstance(p.default, bool):
        return [False, True]
    if isinstance(p.default, float) and p.minimum is not None and p.maximum is not None:
        lo, hi = float(p.minimum), float(p.maximum)
        return sorted({round(lo + (hi - lo) * f, 2) for f in (0.25, 0.5, 0.75, 1.0)})
    return [p.default]


class _Search:
    def __init__(
        self,
        evaluator: Evaluator,
        target: Target,
        *,
        seed: int,
        time_limit_s: float,
        max_trials: int,
        refine: int,
        cancel: threading.Event | None,
        on_progress: Callable[[TuneProgress], None] | None,
    ) -> None:
        self.evaluator = evaluator
        self.target = target
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
    def evaluate(self, choice: LaneSpec, stage: str) -> Trial | None:
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

    def _run(self, choice: LaneSpec, stage: str) -> Trial:
        measure = self.evaluator.measure(choice)
        if measure.error is not None:
            return Trial(choice, 0, 0, 0.0, meets=False, stage=stage, error=measure.error)
        points = measure.judged(self.target.at)
        errors = [p.error for p in points if p.error]
        kept = sum(p.kept for p in points)
        total = sum(p.total for p in points)
        share = kept / total if total else 0.0
        return Trial(
            choice,
            kept,
            total,
            measure.cost,
            meets=not errors and share >= self.target.share - 1e-12,
            stage=stage,
            error=errors[0] if errors else None,
        )

    # -- one strategy -----------------------------------------------------------------------
    def strategy(self, name: str) -> None:
        """Bisect each size parameter in turn (the ones before it held at the values found),
        then try the other parameters at random around what was found."""
        s = spec(name)
        sizes = _int_params(s.params)
        if not sizes:
            self.evaluate(LaneSpec(name), "ladder")
            return
        found: dict[str, int] = {}
        near: dict[str, list[int]] = {}  # each size: the value found, the smallest, one below
        others = [p for p in s.params if p not in sizes]
        refine = self.refine if others or len(sizes) > 1 else 0
        for i, p in enumerate(sizes):
            low, cap = self.evaluator.room(p)
            rungs = ladder(p, cap, low=low)
            self.planned += 2 + max(1, len(rungs).bit_length()) + (refine if i == 0 else 0)
            close = TOKEN_PRECISION if is_token_amount(p) else 0.0
            at = self._bisect(name, p.name, rungs, found, close)
            if at is None and i == 0 and len(sizes) > 1:
                # its most room misses with the other sizes at their defaults: give them
                # theirs too (retrieval: k=100 alone may miss, k with every turn retrieved not)
                most = {q.name: self._most(q) for q in sizes[1:]}
                at = self._bisect(name, p.name, rungs, most, close)
                found.update(most if at is not None else {})
            if at is None:
                if i == 0:
                    return  # even the most room misses the target: nothing to refine
                continue  # this size stays where it was (its default, or its most room)
            value = self._descend(name, p.name, rungs, at, found)
            found[p.name] = value
            near[p.name] = sorted({value, rungs[at]} | ({rungs[at - 1]} if at > 0 else set()))
            if self.stop:
                return
        space = {p.name: _values(p) for p in others}
        for _ in range(refine):
            params: dict[str, Any] = {k: self.rng.choice(v) for k, v in near.items()}
            for p in others:
                params[p.name] = self.rng.choice(space[p.name])
            if self.evaluate(LaneSpec(name, _non_default(name, params)), "refine") is None:
                return

    def _descend(
        self, name: str, param: str, rungs: list[int], at: int, fixed: Mapping[str, int]
    ) -> int:
        """The cheapest value at or above the smallest that meets the target (`rungs[at]`).
        More room costs more for most strategies, but a summary folded less often can cost
        less upkeep: walk up the rungs while the cost falls, then try the midpoints on either
        side of the cheapest rung. One extra trial when the cost only grows."""

        def trial(value: int) -> Trial | None:
            choice = LaneSpec(name, _non_default(name, {**fixed, param: value}))
            return self.evaluate(choice, "ladder")

        best = trial(rungs[at])
        if best is None:
            return rungs[at]
        i = at
        while i + 1 < len(rungs):
            step = trial(rungs[i + 1])
            if step is None or not step.meets or step.tokens_per_turn >= best.tokens_per_turn:
                break
            best, i = step, i + 1
        value = rungs[i]
        if i == at:
            return value
        for mid in (
            (rungs[i - 1] + rungs[i]) // 2,
            (rungs[i] + rungs[min(i + 1, len(rungs) - 1)]) // 2,
        ):
            t = trial(mid)
            if t is not None and t.meets and t.tokens_per_turn < best.tokens_per_turn:
                best, value = t, mid
        return value

    def _most(self, p: Param) -> int:
        """The largest value of a size the search tries (its room, within its limits)."""
        low, cap = self.evaluator.room(p)
        return ladder(p, cap, low=low)[-1]

    def _bisect(
        self,
        name: str,
        param: str,
        rungs: list[int],
        fixed: Mapping[str, int],
        close: float = 0.0,
    ) -> int | None:
        """Index of the smallest value meeting the target with the `fixed` parameters (None if
        even the top misses). Bisects the ladder, then the whole numbers between the last rung
        that missed and the first that met, so the answer is exact while more room never
        keeps less (within `close` x the value, e.g. 1 % for token amounts, when `close` is
        set); a value found between rungs is inserted into `rungs`."""

        def meets(value: int) -> bool | None:
            choice = LaneSpec(name, _non_default(name, {**fixed, param: value}))
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
        while hi - lo > max(1, int(hi * close)) and not self.stop:
            mid = (lo + hi) // 2
            m = meets(mid)
            if m is None:
                break
            lo, hi = (lo, mid) if m else (mid, hi)
        if hi not in rungs:
            rungs.append(hi)
            rungs.sort()
        return rungs.index(hi)


def _non_default(name: str, params: Mapping[str, Any]) -> dict[str, Any]:
    defaults = spec(name).defaults()
    return {k: v for k, v in params.items() if defaults.get(k) != v}


def tune(
    evaluator: Evaluator | SurvivalConfig,
    target: Target = EVERY_FACT,
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
    """Search `strategies`' parameters payload-only for the cheapest setting meeting `target`.

    `evaluator` is what to keep on which conversation (FactsEvaluator,
    TranscriptFactsEvaluator, QuestionsEvaluator); a SurvivalConfig is read as
    `FactsEvaluator.from_config(config, counter=counter)`. Stops at `time_limit_s`,
    `max_trials` or when `cancel` is set, keeping the trials so far; `on_progress` is called
    after each trial. ValueError (a subclass) for a target judged at turns with no points
    and UnknownStrategy for a name that is not registered, both before any trial."""
    if isinstance(evaluator, SurvivalConfig):
        evaluator = FactsEvaluator.from_config(evaluator, counter=counter)
    for name in strategies:
        spec(name)  # UnknownStrategy names the ones that exist
    missing = sorted(set(target.at) - set(evaluator.judged_turns))
    if missing:
        raise ValueError(
            f"the target is judged at N={', '.join(map(str, missing))}, but nothing is judged "
            f"there; judged turns: {', '.join(map(str, evaluator.judged_turns))}"
        )
    started = time.perf_counter()
    search = _Search(
        evaluator,
        target,
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
    return TuneResult(
        target,
        search.trials,
        search.stop or STOP_DONE,
        time.perf_counter() - started,
        seed,
        evaluator.notes(strategies),
        what=evaluator.what,
        cost=evaluator.cost,
        conversation=evaluator.describe(),
    )
