"""Long-conversation recall: which strategies keep the turns that later questions need.

A generated multi-session conversation (or the user's own, with a questions file) is
replayed through every chosen strategy setting, with no model: summaries and facts come from
the rule-based stand-ins. For each question we check the request the strategy would send.
A benchmark file (LoCoMo, LongMemEval, the lab's own) is run as `memory-lab recall` runs it,
with the same numbers (engines/benchmarks.py).
Optionally a model answers every question (graded by the expected answer in its reply);
the Sweeps page sends the same requests through a batch API at half price.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from engines.recall import RecallRow, every_setting, full_tokens, run_recall
from engines.transcripts import TranscriptError
from engines.transcripts import parse as parse_transcript
from lanes.binding import bind_settings
from memory.errors import MemoryLabError
from memory.tokens import TokenCounter
from present.recall import frontier_chart, table_rows
from providers import ProviderError, ProviderSettings
from providers.catalog import PRESETS
from scenarios.longmem import (
    KINDS,
    LongConversation,
    LongMemFormatError,
    from_turns,
    parse_conversation,
    parse_questions,
)
from scenarios.longmem_world import generate
from ui import navigation, strategy_sources
from ui.benchmark_view import benchmark_file
from ui.safe import md, plain

navigation.page_config("Long-conversation recall · Memory Lab", "🔎")

GENERATED, ONE_FILE, TWO_FILES, BENCH = "generated", "file", "transcript", "benchmark"
SOURCES = {
    GENERATED: "A generated conversation (dated sessions, five kinds of question)",
    BENCH: "A benchmark file (LoCoMo, LongMemEval or the lab's own format)",
    ONE_FILE: "My conversation + questions (one JSON file)",
    TWO_FILES: "My transcript (any importable format) + a questions file",
}
FORMAT_HELP = """
**Conversation file** (JSON): `{"system": "...", "sessions": [{"date": "2024-01-06",
"turns": [{"user": "...", "assistant": "..."}]}], "questions": [...]}`.

**Questions** (inside it, or a file of their own: `{"questions": [...]}`): each
`{"id": "q1", "kind": "single-hop", "question": "...", "evidence": [12, 140],
"answer": "optional", "after_turn": 530}`. Turns are numbered from 1 across all sessions;
`evidence` lists the turns that hold the answer; `after_turn` (optional, default: the end)
is when the question is asked. Kinds: single-hop, multi-hop, temporal, update, open (others
are kept as their own kind). With a separate transcript, turns are numbered the same way.
"""


DEFAULT_PICK = [
    "full",
    "window (k=10)",
    "token_window (budget=5.0% of full)",
    "token_window (budget=10.0% of full)",
    "summary_buffer (budget=10.0% of full)",
    "entity",
    "hybrid (budget=5.0% of full)",
    "hybrid (budget=10.0% of full)",
    "retrieval (top_k=2, recall_budget=0, neighbours=0.0)",
    "retrieval (recall_budget=2.5% of full)",
    "retrieval (recall_budget=5.0% of full)",
    "retrieval (recall_budget=10.0% of full)",
    "retrieval",
]


def load_conversation(source: str) -> LongConversation | None:
    """The conversation to run, or None (with the reason shown) if the inputs are not usable."""
    if source == GENERATED:
        c1, c2 = st.columns(2)
        seed = int(c1.number_input("Seed", min_value=0, max_value=10_000, value=0, step=1))
        sessions = int(c2.number_input("Sessions", min_value=6, max_value=60, value=24, step=1))
        return generate(seed, sessions=sessions)
    try:
        if source == ONE_FILE:
            upload = st.file_uploader("Conversation + questions (JSON)", type=["json"])
            if upload is None:
                st.info("Upload a conversation file to run the benchmark on it.")
                return None
            return parse_conversation(upload.getvalue())
        c1, c2 = st.columns(2)
        transcript_file = c1.file_uploader(
            "Transcript (OpenAI/Anthropic JSON, User:/Assistant: text, a session export)",
            type=["json", "txt", "md"],
        )
        questions_file = c2.file_uploader("Questions (JSON)", type=["json"])
        if transcript_file is None or questions_file is None:
            st.info("Upload both a transcript and its questions file.")
            return None
        transcript = parse_transcript(transcript_file.getvalue(), name=transcript_file.name)
        turns = [(u, r or "") for u, r in transcript.turns]
        questions = parse_questions(questions_file.getvalue(), len(turns))
        return from_turns(turns, questions, transcript.system or "")
    except (LongMemFormatError, TranscriptError) as exc:
        st.error(md("That file cannot be used: {}", exc))
        return None


def answering_model() -> ProviderSettings | None:
    """The model that answers each question, or None for payload only."""
    if not st.toggle("A model answers each question (interactive; graded by the answer)",
                     key="recall-answer"):  # fmt: skip
        st.caption("Batch mode (half price, resumable, several models): the Sweeps page, "
                   "grid *Long-conversation recall*.")  # fmt: skip
        return None
    c1, c2, c3 = st.columns(3)
    name = c1.selectbox("Provider", list(PRESETS), format_func=lambda n: PRESETS[n].label,
                        key="recall-preset")  # fmt: skip
    chosen = PRESETS[name]
    models = [m.name for m in chosen.models]
    model = (c2.selectbox("Model", models, key=f"recall-model-{name}") if models
             else c2.text_input("Model", chosen.default_model or "", key=f"recall-model-{name}"))  # fmt: skip
    key = c3.text_input("API key (this session only)", type="password", key="recall-key")
    url = st.text_input("Endpoint URL (optional)", chosen.base_url or "", key=f"recall-url-{name}")
    extra = {"base_url": url.strip()} if url.strip() else {}
    try:
        return chosen.settings(model, max_tokens=96, api_key=key or None, **extra)
    except ValueError as exc:
        st.error(plain(exc))
        return None


def show(rows: list[RecallRow], conv: LongConversation, full: int) -> None:
    kinds = sorted(
        {q.kind for q in conv.questions},
        key=lambda k: (KINDS.index(k) if k in KINDS else len(KINDS), k),
    )
    st.plotly_chart(frontier_chart(rows), width="stretch")
    st.caption(
        "Each point is one setting; the line joins each strategy's settings that no cheaper "
        "setting beats. Dotted lines: 5% and 10% of the full buffer. Payload only, no model: "
        "summaries and facts are made by rule-based stand-ins, so for summary, entity and "
        "hybrid the *answer in payload* column is the fairer one."
    )
    if any(r.model for r in rows):
        failed = sum(r.errors for r in rows)
        st.caption(md("Answered by {}: ", rows[0].model) + "*answered %* is the share of questions whose "
                   "reply holds the expected answer" + (f"; {failed} call(s) failed" if failed else "."))  # fmt: skip
    table = pd.DataFrame(table_rows(rows, kinds))
    st.dataframe(table, hide_index=True, width="stretch")
    st.download_button(
        "Download the table (CSV)", table.to_csv(index=False), "long_recall.csv", "text/csv"
    )
    st.caption(f"Full buffer after the last turn: {full:,} tokens (o200k_base).")


st.title("Long-conversation recall")
st.caption(
    "Which memory keeps the turns that later questions need? Evidence kept vs tokens sent, "
    "on a long multi-session conversation, no model needed."
)
source = st.radio("Conversation", list(SOURCES), format_func=SOURCES.__getitem__)
if source == BENCH:
    benchmark_file(every_setting())
    st.stop()
with st.expander("File format"):
    st.markdown(FORMAT_HELP)
conv = load_conversation(source)
options = every_setting()
strategy_sources.defaults_button("recall-settings", options, lambda k: options[k].name)
strategy_sources.caption_missing()
picked = st.multiselect(
    "Strategy settings",
    list(options),
    default=[p for p in DEFAULT_PICK if p in options],
    key="recall-settings",
)
if conv is not None:
    counter = TokenCounter()
    full = full_tokens(conv, counter)
    st.write(
        f"**{len(conv.turns):,} turns** in {len(conv.sessions)} session(s), "
        f"**{len(conv.questions)} questions**, full buffer {full:,} tokens."
    )
    answerer = answering_model()
    if st.button("Run", type="primary", disabled=not picked):
        send = bind_settings(answerer)[0] if answerer is not None else None
        try:
            with st.spinner("Replaying the conversation through each setting..."):
                rows = run_recall([conv], [options[p] for p in picked], counter=counter,
                                  send=send, model=answerer.model if answerer else "")  # fmt: skip
            st.session_state["recall_result"] = (rows, conv, full)
        except (MemoryLabError, ProviderError) as exc:
            st.error(md("A setting could not run: {}", exc))
    result = st.session_state.get("recall_result")
    if result is not None and result[1] == conv:
        show(*result)
