"""The fact-survival lab: state facts (by the user or the assistant, updated or not), talk
about other things, probe at turn N, and give a payload and a recall verdict per probe.

facts.py (facts and their file format), config.py (a run's settings, the plan sentence and
the script), verdicts.py (current / both / stale / missing), results.py (rows, results,
CSV/JSON), saved.py (an export's survival part, checked on import), runner.py (lanes over
the script), run.py (estimate and run a grid), suggest.py (facts an imported conversation
states, probed in place). Import from here.
"""

from engines.survival.config import (
    DEFAULT_PROBE_TURNS,
    DEFAULT_STRATEGIES,
    MAX_TURN,
    REPLY_MODES,
    ScriptTurn,
    SurvivalConfig,
    parse_turns,
    plan_sentence,
    script,
)
from engines.survival.facts import (
    DEFAULT_FACTS,
    EXAMPLE_FACTS,
    Fact,
    SurvivalConfigError,
    Update,
    facts_json,
    load_facts,
    parse_facts_json,
)
from engines.survival.results import (
    CSV_COLUMNS,
    Estimate,
    ProbeRow,
    Progress,
    SurvivalResult,
    rows_to_csv,
)
from engines.survival.run import STAND_IN_NOTE, estimate, run_survival
from engines.survival.runner import Cancelled
from engines.survival.saved import check_part
from engines.survival.suggest import (
    Suggestion,
    conversation_config,
    default_probe_turns,
    suggest_facts,
)
from engines.survival.verdicts import (
    BOTH,
    CURRENT,
    ERROR,
    IN_PAYLOAD,
    KEPT,
    LEAK,
    LEAK_FLAG,
    LOST,
    MISSED,
    MISSING,
    NOT_IN_PAYLOAD,
    STALE,
    STALE_IN_PAYLOAD,
    STALE_RECALL,
    STATE_MEANING,
    STATES,
    payload_check,
    verdict_of,
)

__all__ = [
    "check_part",
    "BOTH",
    "CSV_COLUMNS",
    "CURRENT",
    "DEFAULT_FACTS",
    "DEFAULT_PROBE_TURNS",
    "DEFAULT_STRATEGIES",
    "ERROR",
    "EXAMPLE_FACTS",
    "IN_PAYLOAD",
    "KEPT",
    "LEAK",
    "LEAK_FLAG",
    "LOST",
    "MAX_TURN",
    "MISSED",
    "MISSING",
    "NOT_IN_PAYLOAD",
    "REPLY_MODES",
    "STALE",
    "STALE_IN_PAYLOAD",
    "STALE_RECALL",
    "STAND_IN_NOTE",
    "STATES",
    "STATE_MEANING",
    "Cancelled",
    "Estimate",
    "Fact",
    "ProbeRow",
    "Progress",
    "ScriptTurn",
    "SurvivalConfig",
    "SurvivalConfigError",
    "SurvivalResult",
    "Suggestion",
    "Update",
    "conversation_config",
    "default_probe_turns",
    "estimate",
    "facts_json",
    "load_facts",
    "parse_facts_json",
    "parse_turns",
    "payload_check",
    "plan_sentence",
    "rows_to_csv",
    "run_survival",
    "script",
    "suggest_facts",
    "verdict_of",
]
