"""Named rankings of the retrieved block: which scoring terms bridge a question's words and
its evidence's (memory/strategies/recall.py applies them), as plain data.

"bm25" is plain BM25 (with neighbours); "bridged", the default, adds terms that bridge a
question and its evidence: names and numbers weighted, relative time mapped to the sessions'
dates (bench/bench_recall.py compares the rankings). Query expansion and session scores are
options, off by default. "dense" (bridged fused with WordLlama vectors) is offered only where
the `wordllama` wheel is installed; it is not a dependency. May import: nothing.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass


@dataclass(frozen=True)
class Ranking:
    """How older turns are scored against a message (every term off at 0: plain BM25)."""

    entities: float = 0.0  # extra weight on names and numbers
    expand: int = 0  # pseudo-relevance feedback: terms added from the first pass
    expand_from: int = 3  # ... taken from this many best turns
    expand_weight: float = 0.3  # ... each at this weight
    sessions: float = 0.0  # weight of the session's score
    time: float = 0.0  # bonus share for turns in the sessions a relative time points at
    dense: float = 0.0  # weight of dense similarity in a reciprocal-rank fusion with BM25


RANKINGS: dict[str, Ranking] = {
    "bm25": Ranking(),
    "bridged": Ranking(entities=0.5, time=1.0),
}
DEFAULT_RANKING = "bridged"
if importlib.util.find_spec("wordllama") is not None:  # opt-in: memory/dense.py's vectors
    RANKINGS["dense"] = Ranking(entities=0.5, time=1.0, dense=1.0)


def register_ranking(name: str, ranking: Ranking) -> None:
    """Add a named ranking (a benchmark's candidate); a name is registered once."""
    if name in RANKINGS:
        raise ValueError(f"ranking {name!r} is already registered")
    RANKINGS[name] = ranking
