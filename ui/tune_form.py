"""The Tune page's settings as one frozen value, and the tuner's result back from plain data.

No Streamlit here, so the page's parsing is tested like any function. The page keeps its
settings (a `TuneSettings`) and the finished result (`TuneResult.as_dict()`) in session state;
`result_from_dict` turns that plain data back into the engine's record for the figure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from engines.survival import (
    DEFAULT_FACTS,
    DEFAULT_PROBE_TURNS,
    SurvivalConfig,
    SurvivalConfigError,
    parse_turns,
)
from engines.tune import DEFAULT_STRATEGIES, Target, Trial, TuneResult
from memory.choices import StrategyChoice
from scenarios.filler import FillerTurn

SOURCE_DEMO = "demo"
SOURCE_TRANSCRIPT = "transcript"


@dataclass(frozen=True)
class TuneSettings:
    """What the Tune page's form holds (plain values; the facts as the engine's records)."""

    facts: tuple[Any, ...] = DEFAULT_FACTS  # engines.survival.Fact
    use_facts: tuple[str, ...] = tuple(f.key for f in DEFAULT_FACTS)
    probe_turns: str = ", ".join(str(n) for n in DEFAULT_PROBE_TURNS)
    target_pct: int = 100
    at: tuple[int, ...] = ()
    strategies: tuple[str, ...] = DEFAULT_STRATEGIES
    source: str = SOURCE_DEMO
    filler: tuple[FillerTurn, ...] = ()
    filler_name: str = ""
    filler_seed: int = 0
    seed: int = 0
    time_limit_s: float = 20.0
    max_trials: int = 400
    refine: int = 6

    def replace(self, **changes: Any) -> TuneSettings:
        return replace(self, **changes)

    def config(self) -> SurvivalConfig:
        """The survival config the tuner searches on; SurvivalConfigError says what is wrong."""
        if not self.strategies:
            raise SurvivalConfigError("pick at least one strategy to search")
        if self.source == SOURCE_TRANSCRIPT and not self.filler:
            raise SurvivalConfigError(
                "upload a transcript for the conversation, or choose the FinCoach demo"
            )
        facts = tuple(f for f in self.facts if f.key in self.use_facts)
        return SurvivalConfig(
            facts=facts,
            probe_turns=parse_turns(self.probe_turns),
            strategies=tuple(StrategyChoice(n) for n in self.strategies),
            filler=self.filler if self.source == SOURCE_TRANSCRIPT else None,
            filler_seed=self.filler_seed,
        ).validate()

    def target(self, config: SurvivalConfig) -> Target:
        """The target; judged only at probe turns that are probed (others are named)."""
        missing = sorted(set(self.at) - set(config.probe_turns))
        if missing:
            raise SurvivalConfigError(
                f"the target is judged at N={', '.join(map(str, missing))}, which is not a "
                "probe turn: add it to the probe turns or leave it out"
            )
        if not 1 <= self.target_pct <= 100:
            raise SurvivalConfigError(
                f"the target is a share from 1 to 100 %, got {self.target_pct}"
            )
        return Target(self.target_pct / 100, tuple(sorted(self.at)))


def _trial(data: Mapping[str, Any]) -> Trial:
    return Trial(
        StrategyChoice(str(data["strategy"]), dict(data.get("params") or {})),
        int(data["kept"]),
        int(data["probes"]),
        float(data["tokens_per_turn"]),
        meets=bool(data["meets_target"]),
        stage=str(data["stage"]),
        error=data.get("error"),
    )


def result_from_dict(data: Mapping[str, Any]) -> TuneResult:
    """The TuneResult whose `as_dict()` gave `data` (trial costs rounded to 2 decimals)."""
    target = data["target"]
    return TuneResult(
        Target(float(target["share"]), tuple(int(n) for n in target.get("at") or ())),
        [_trial(t) for t in data["trials"]],
        str(data["stop_reason"]),
        float(data["elapsed_s"]),
        int(data["seed"]),
        list(data.get("notes") or ()),
    )


def trials_table(result: TuneResult) -> pd.DataFrame:
    """Every setting tried, in the order tried, with its verdict and whether it is on the
    frontier or the winner."""
    frontier = {id(t) for t in result.frontier}
    winner = result.winner
    return pd.DataFrame(
        [
            {
                "#": i,
                "setting": t.label,
                "tokens/turn": round(t.tokens_per_turn, 1),
                "facts kept": f"{t.kept}/{t.probes}",
                "kept %": round(t.share * 100, 1),
                "meets target": t.meets,
                "frontier": id(t) in frontier,
                "winner": t is winner,
                "stage": t.stage,
                "error": t.error or "",
            }
            for i, t in enumerate(result.trials, start=1)
        ]
    )


def frontier_options(result: TuneResult) -> dict[str, Trial]:
    """The settings one can add as a lane, by a label: the winner first, then the frontier."""
    out: dict[str, Trial] = {}
    winner = result.winner
    ordered: Sequence[Trial] = ([winner] if winner else []) + [
        t for t in result.frontier if t is not winner
    ]
    for t in ordered:
        mark = " · cheapest meeting the target" if t is winner else ""
        out[f"{t.label} — {t.tokens_per_turn:,.0f} tokens/turn, {t.share:.0%} kept{mark}"] = t
    return out
