"""Auto-tune: the cheapest memory setting that still keeps what you care about (payload only).

The stable API (the Tune page, the CLI and the benchmark use only these names)::

    from engines.tune import FactsEvaluator, QuestionsEvaluator, Target, tune

    result = tune(FactsEvaluator.from_config(SurvivalConfig(probe_turns=(50,))), Target(1.0))
    result = tune(QuestionsEvaluator.from_seed(0), Target(0.9), strategies=["window"])
    result.winner, result.frontier, result.trials, result.stop_reason, result.to_csv()

Evaluators (what to keep, on which conversation; each measures one LaneSpec at a time,
no model, upkeep by the rule-based stand-ins, deterministic):

* `FactsEvaluator.from_config(config)` - the survival lab's facts on its scripted
  conversation (the FinCoach demo facts, the filler bank or imported filler), probes at N;
  kept = facts x probe turns whose current value is in the payload; cost = prompt tokens
  sent per turn up to the last probe, upkeep included.
* `TranscriptFactsEvaluator(transcript, facts, probe_turns)` or `.from_files(...)` - the
  same verdict on an imported transcript, each fact stated at one of its turns.
* `QuestionsEvaluator.from_seed(seed)`, `.from_files(transcript, questions)` or
  `.from_conversation_file(text)` - the long-memory benchmark (or your own log): kept =
  evidence turns sent verbatim at each question; cost = mean prompt tokens at the questions
  plus upkeep tokens per turn.

`tune(evaluator, target, strategies=..., seed=..., time_limit_s=..., max_trials=...,
cancel=..., on_progress=...)` searches every named registered strategy (a registered
composition included) and returns a `TuneResult`: every `Trial`, the `frontier`, the `winner`
(cheapest meeting the target), `stop_reason`, `summary()`, `to_csv()`, `to_json()`.
`confirmation_plan` and `confirm` check a winner with a real model (facts only).

Modules: results.py (records), evaluator.py (the interface), facts.py and questions.py (the
evaluators), search.py (the search), confirm.py (real-model confirmation).
"""

from engines.tune.confirm import confirm, confirmation_plan
from engines.tune.evaluator import Evaluator, Measure, Point
from engines.tune.facts import FactsEvaluator, TranscriptFactsEvaluator, transcript_facts
from engines.tune.questions import QuestionsEvaluator
from engines.tune.results import (
    COST_PER_TURN,
    EVIDENCE,
    FACTS,
    STOP_CANCELLED,
    STOP_DONE,
    STOP_TIME,
    STOP_TRIALS,
    Target,
    Trial,
    TuneProgress,
    TuneResult,
)
from engines.tune.search import DEFAULT_STRATEGIES, ladder, tune

__all__ = [
    "COST_PER_TURN",
    "DEFAULT_STRATEGIES",
    "EVIDENCE",
    "FACTS",
    "STOP_CANCELLED",
    "STOP_DONE",
    "STOP_TIME",
    "STOP_TRIALS",
    "Evaluator",
    "FactsEvaluator",
    "Measure",
    "Point",
    "QuestionsEvaluator",
    "Target",
    "TranscriptFactsEvaluator",
    "Trial",
    "TuneProgress",
    "TuneResult",
    "confirm",
    "confirmation_plan",
    "ladder",
    "transcript_facts",
    "tune",
]
