"""Memory Lab as a library, for notebooks and scripts: a small, stable surface over the engines.

    import memorylab as ml
    ml.count_tokens(ml.FINCOACH_PROMPT)                    # 132
    ml.replay(ml.FINCOACH_TURNS, ["full", "window:k=3"]).to_frame()
    ml.survival(["full", "window:k=3"], probe_turns=(2, 5, 10)).grid()

Every result is a frozen record with `to_frame()` (a pandas DataFrame). docs/library.md is the
guide; its example is run by tests/cli/test_docs.py.

May import: memory/, providers/, scenarios/, lanes/, engines/, storage/. Never streamlit, ui/,
present/, cli/.
"""

from memorylab.api import (
    FINCOACH_PROMPT,
    FINCOACH_TURNS,
    Replay,
    ReplayRow,
    SavedLaneTurn,
    SessionRecords,
    StrategyInfo,
    SurvivalGrid,
    count_tokens,
    create,
    import_transcript,
    list_conversations,
    list_sessions,
    load_session,
    read_transcript,
    replay,
    strategies,
    survival,
)

__all__ = [
    "FINCOACH_PROMPT",
    "FINCOACH_TURNS",
    "Replay",
    "ReplayRow",
    "SavedLaneTurn",
    "SessionRecords",
    "StrategyInfo",
    "SurvivalGrid",
    "count_tokens",
    "create",
    "import_transcript",
    "list_conversations",
    "list_sessions",
    "load_session",
    "read_transcript",
    "replay",
    "strategies",
    "survival",
]
