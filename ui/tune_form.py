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
    Fact,
    SurvivalConfig,
    SurvivalConfigError,
    parse_turns,
)
from engines.tune import (
    COST_PER_TURN,
    DEFAULT_STRATEGIES,
    FACTS,
    Evaluator,
    FactsEvaluator,
    QuestionsEvaluator,
    Target,
    TranscriptFactsEvaluator,
    Trial,
    TuneResult,
)
from memory.lane_spec import LaneSpec
from scenarios.filler import parse_transcript

SOURCE_DEMO = "demo"  # FinCoach's facts, then the built-in filler bank
SOURCE_FILLER = "filler"  # FinCoach's facts (or a facts file), an imported transcript as filler
SOURCE_TRANSCRIPT = "transcript"  # an imported transcript whose turns state the facts
SOURCE_LONGMEM = "longmem"  # the long-memory benchmark's generated conversation and questions
SOURCE_QUESTIONS = "questions"  # an imported transcript and a questions file
SOURCES: tuple[str, ...] = (
    SOURCE_DEMO,
    SOURCE_FILLER,
    SOURCE_TRANSCRIPT,
    SOURCE_LONGMEM,
    SOURCE_QUESTIONS,
)
QUESTION_SOURCES = (SOURCE_LONGMEM, SOURCE_QUESTIONS)


@dataclass(frozen=True)
class TuneSettings:
    """What the Tune page's form holds: plain values, uploaded files as their bytes, and the
    facts of the FinCoach-style sources as the engine's records."""

    facts: tuple[Fact, ...] = DEFAULT_FACTS
    use_facts: tuple[str, ...] = tuple(f.key for f in DEFAULT_FACTS)
    probe_turns: str = ", ".join(str(n) for n in DEFAULT_PROBE_TURNS)
    target_pct: int = 100
    at: tuple[int, ...] = ()
    strategies: tuple[str, ...] = DEFAULT_STRATEGIES
    source: str = SOURCE_DEMO
    transcript: bytes = b""
    transcript_name: str = ""
    facts_file: bytes = b""  # a facts file for a transcript (statements are its turns)
    questions: bytes = b""
    longmem_seed: int = 0
    longmem_sessions: int = 24
    filler_seed: int = 0
    seed: int = 0
    time_limit_s: float = 20.0
    max_trials: int = 400
    refine: int = 6

    def replace(self, **changes: Any) -> TuneSettings:
        return replace(self, **changes)

    def search_options(self) -> dict[str, Any]:
        """The tuner's keyword arguments for what to search and for how long."""
        return {
            "strategies": self.strategies,
            "seed": self.seed,
            "time_limit_s": self.time_limit_s,
            "max_trials": self.max_trials,
            "refine": self.refine,
        }

    def _needs(self, data: bytes, what: str) -> bytes:
        if not data:
            raise SurvivalConfigError(f"upload {what} for this conversation (or pick another)")
        return data

    def config(self) -> SurvivalConfig:
        """The survival config of the FinCoach-style sources (SurvivalConfigError, or
        TranscriptError for the filler file, says what is wrong)."""
        filler = None
        if self.source == SOURCE_FILLER:
            text = self._needs(self.transcript, "a transcript").decode("utf-8", "replace")
            filler = tuple(parse_transcript(text, name=self.transcript_name))
        return SurvivalConfig(
            facts=tuple(f for f in self.facts if f.key in self.use_facts),
            probe_turns=parse_turns(self.probe_turns),
            strategies=tuple(LaneSpec(n) for n in self.strategies),
            filler=filler,
            filler_seed=self.filler_seed,
        ).validate()

    def evaluator(self) -> Evaluator:
        """What the tuner measures, on which conversation; a ValueError subclass (or a
        MemoryLabError) names what is wrong."""
        if not self.strategies:
            raise SurvivalConfigError("pick at least one strategy to search")
        if self.source in (SOURCE_DEMO, SOURCE_FILLER):
            return FactsEvaluator.from_config(self.config())
        if self.source == SOURCE_TRANSCRIPT:
            turns = parse_turns(self.probe_turns) if self.probe_turns.strip() else None
            return TranscriptFactsEvaluator.from_files(
                self._needs(self.transcript, "a transcript"),
                self._needs(self.facts_file, "a facts file"),
                turns,
                name=self.transcript_name,
            )
        if self.source == SOURCE_LONGMEM:
            return QuestionsEvaluator.from_seed(self.longmem_seed, sessions=self.longmem_sessions)
        if self.source == SOURCE_QUESTIONS:
            return QuestionsEvaluator.from_files(
                self._needs(self.transcript, "a transcript"),
                self._needs(self.questions, "a questions file"),
                name=self.transcript_name,
            )
        raise SurvivalConfigError(f"unknown conversation source {self.source!r}")

    def target(self, evaluator: Evaluator) -> Target:
        """The target; judged only at turns the evaluator judges (others are named)."""
        missing = sorted(set(self.at) - set(evaluator.judged_turns))
        if missing:
            judged = ", ".join(map(str, evaluator.judged_turns))
            raise SurvivalConfigError(
                f"the target is judged at N={', '.join(map(str, missing))}, which is not a "
                f"probe turn (judged: {judged}): add it to the probe turns or leave it out"
            )
        if not 1 <= self.target_pct <= 100:
            raise SurvivalConfigError(
                f"the target is a share from 1 to 100 %, got {self.target_pct}"
            )
        return Target(self.target_pct / 100, tuple(sorted(self.at)))


def _trial(data: Mapping[str, Any]) -> Trial:
    return Trial(
        LaneSpec(str(data["strategy"]), dict(data.get("params") or {})),
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
        what=str(data.get("kept_counts") or FACTS),
        cost=str(data.get("cost") or COST_PER_TURN),
        conversation=str(data.get("conversation") or ""),
    )


def unit(result: TuneResult) -> str:
    """What a trial's cost is counted per: a turn (facts) or a request (questions)."""
    return "turn" if result.cost == COST_PER_TURN else "request"


def trials_table(result: TuneResult) -> pd.DataFrame:
    """Every setting tried, in the order tried, with its verdict and whether it is on the
    frontier or the winner."""
    frontier = {id(t) for t in result.frontier}
    winner = result.winner
    per = unit(result)
    return pd.DataFrame(
        [
            {
                "#": i,
                "setting": t.label,
                f"tokens/{per}": round(t.tokens_per_turn, 1),
                "kept": f"{t.kept}/{t.probes}",
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
    per = unit(result)
    for t in ordered:
        mark = " · cheapest meeting the target" if t is winner else ""
        out[f"{t.label} — {t.tokens_per_turn:,.0f} tokens/{per}, {t.share:.0%} kept{mark}"] = t
    return out
