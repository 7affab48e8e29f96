"""The tuner's records: the target, one trial, the whole result (frontier, winner, exports).

Plain frozen data except `TuneResult`, which is built once at the end of a search. A trial's
`kept`/`probes` count facts x probe turns for the facts evaluators and evidence turns for the
questions evaluator; `TuneResult.what` and `.cost` say which, so tables and charts can name
their axes without knowing the evaluator.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from typing import Any

from memory.lane_spec import LaneSpec

STOP_DONE = "every planned setting was tried"
STOP_TIME = "the time limit was reached"
STOP_TRIALS = "the trial limit was reached"
STOP_CANCELLED = "cancelled"

FACTS = "facts"
EVIDENCE = "evidence turns"
COST_PER_TURN = "prompt tokens sent per turn up to the last probe, upkeep included"


@dataclass(frozen=True)
class Target:
    """What 'keeps the facts' means: at least `share` of the probes (fact x probe turn, or
    evidence turn x question) are in the payload; `at` limits it to some probe turns (for
    questions: the turns they are asked after)."""

    share: float = 1.0
    at: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if not 0.0 < self.share <= 1.0:
            raise ValueError(f"the target share must be in (0, 1], got {self.share}")

    def describe(self, what: str = FACTS) -> str:
        where = f" at N={', '.join(map(str, self.at))}" if self.at else ""
        if self.share >= 1.0:
            every = "every fact" if what == FACTS else f"every one of the {what}"
            return f"{every} in the payload{where}"
        return f"at least {self.share:.0%} of the {what} in the payload{where}"


@dataclass(frozen=True)
class Trial:
    """One setting tried: its share kept and what it costs (see TuneResult.cost)."""

    choice: LaneSpec
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
        return label_of(self.choice)

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


def label_of(choice: LaneSpec) -> str:
    """'window (k=12)': the name and every parameter that differs from the defaults."""
    if not choice.params:
        return choice.name
    shown = ", ".join(f"{k}={v}" for k, v in sorted(choice.params.items()))
    return f"{choice.name} ({shown})"


@dataclass(frozen=True)
class TuneProgress:
    """How far a search is: settings tried, settings planned so far, the strategy searched."""

    tried: int
    planned: int
    strategy: str


@dataclass
class TuneResult:
    """Every trial in the order tried, the frontier, the winner and why the search stopped.

    `what` names what was counted as kept ("facts" or "evidence turns"), `cost` what
    `Trial.tokens_per_turn` measures, `conversation` the conversation searched on."""

    target: Target
    trials: list[Trial]
    stop_reason: str
    elapsed_s: float
    seed: int
    notes: list[str] = field(default_factory=list)
    what: str = FACTS
    cost: str = COST_PER_TURN
    conversation: str = ""

    @property
    def winner(self) -> Trial | None:
        """The cheapest trial that meets the target (ties: more kept, then the label)."""
        met = [t for t in self.trials if t.meets]
        return min(met, key=lambda t: (t.tokens_per_turn, -t.share, t.label)) if met else None

    @property
    def frontier(self) -> list[Trial]:
        """The trials no other trial beats on both cost and share kept, cheapest first."""
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
            f"tokens/{'turn' if self.cost == COST_PER_TURN else 'request'} "
            f"({winner.share:.0%} kept)"
            if winner
            else "no setting tried meets the target"
        )
        return (
            f"{len(self.trials)} settings tried in {self.elapsed_s:.1f} s; stopped because "
            f"{self.stop_reason}. Target: {self.target.describe(self.what)}. {found}."
        )

    def as_dict(self) -> dict[str, Any]:
        winner = self.winner
        return {
            "target": {"share": self.target.share, "at": list(self.target.at)},
            "conversation": self.conversation,
            "kept_counts": self.what,
            "cost": self.cost,
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
