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

import hashlib
import json

import pandas as pd
import streamlit as st

from engines.benchmarks import DEFAULT_SETTINGS, run_benchmark
from engines.benchmarks import table_rows as bench_rows
from engines.recall import RecallRow, Setting, default_settings, full_tokens, run_recall
from engines.transcripts import TranscriptError
from engines.transcripts import parse as parse_transcript
from lanes.binding import bind_settings
from memory.errors import MemoryLabError
from memory.registry import REGISTRY, spec
from memory.tokens import TokenCounter
from present.recall import frontier_chart, table_rows
from providers import ProviderError, ProviderSettings
from providers.catalog import PRESETS
from scenarios.benchmarks import BenchmarkFormatError, detect, load
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


BENCH_FORMATS = {
    "auto": "Told from its shape",
    "locomo": "LoCoMo",
    "longmemeval": "LongMemEval",
    "memorylab": "Memory Lab",
}
BENCH_HELP = """
**LoCoMo** (`locomo10.json`: samples with `conversation` sessions of `{speaker, dia_id,
text}` and `qa` with `evidence` dialogue ids; speaker A is the user), **LongMemEval** (a
list of questions, each with its own `haystack_sessions`; evidence from `has_answer` turns
and `answer_session_ids`) or a **Memory Lab** conversation file. No model: the same run and
the same numbers as `memory-lab recall --dataset ... FILE`; adversarial (LoCoMo) and
abstention (LongMemEval) questions are reported apart.
"""


def benchmark_file() -> None:
    """Upload a benchmark file, pick settings, run: `memory-lab recall`'s table."""
    with st.expander("Benchmark formats"):
        st.markdown(BENCH_HELP)
    c1, c2 = st.columns([3, 1])
    upload = c1.file_uploader(
        "Benchmark file (JSON, or LoCoMo's release zip)", type=["json", "zip"], key="bench-upload"
    )
    fmt = c2.selectbox(
        "Format", list(BENCH_FORMATS), format_func=BENCH_FORMATS.__getitem__, key="bench-format"
    )
    if upload is None:
        st.info("Upload a LoCoMo, LongMemEval or Memory Lab file to run the benchmark on it.")
        return
    data = upload.getvalue()
    try:
        name = detect(data) if fmt == "auto" else fmt
        dataset = load(name, data)
    except (BenchmarkFormatError, ValueError) as exc:
        st.error(md("That file cannot be used: {}", exc))
        return
    st.markdown(
        md("**{}** · {}: {} conversation(s), {} questions.", upload.name,
           BENCH_FORMATS[dataset.name], len(dataset.conversations), dataset.questions)
    )  # fmt: skip
    options = {s.label: s for s in DEFAULT_SETTINGS}
    options.update({label: s for label, s in all_settings().items() if label not in options})
    picked = st.multiselect(
        "Strategy settings",
        list(options),
        default=[s.label for s in DEFAULT_SETTINGS],
        key="bench-settings",
    )
    ran_for = (hashlib.sha256(data).hexdigest(), dataset.name, tuple(picked))
    if st.button("Run", type="primary", disabled=not picked, key="bench-run"):
        try:
            with st.spinner("Replaying every conversation through each setting..."):
                report = run_benchmark(dataset, [options[p] for p in picked])
        except MemoryLabError as exc:
            st.error(md("A setting could not run: {}", exc))
            return
        st.session_state["bench_result"] = {
            "for": ran_for,
            "rows": bench_rows(report),
            "report": report.as_dict(),
        }
    result = st.session_state.get("bench_result")
    if result is None or result["for"] != ran_for:
        return
    report_data = result["report"]
    st.subheader(
        md("{} · {} questions, payload only", BENCH_FORMATS[dataset.name], report_data["questions"])
    )
    st.dataframe(
        pd.DataFrame(result["rows"]),
        hide_index=True,
        width="stretch",
        key="bench-table",
        column_config={"setting": st.column_config.TextColumn("setting", width=330)},
    )
    st.caption(
        "Evidence recall: the share of evidence turns sent verbatim (LoCoMo's retrieval recall "
        "of dia_ids); all evidence: questions with every evidence turn in the payload; recall "
        "@5: LongMemEval's turn- and session-level recall for strategies that retrieve; then "
        "per category, and the questions reported apart. No model: summaries and facts by "
        "rule-based stand-ins."
    )
    no_evidence = report_data["rows"][0]["no_evidence"] if report_data["rows"] else 0
    if no_evidence:
        st.caption(f"{no_evidence} question(s) list no evidence: counted, not scored.")
    unresolved = report_data["unresolved_evidence"]
    if unresolved:
        st.caption(
            md("{} evidence id(s) match no line: {}", len(unresolved), ", ".join(unresolved[:10]))
        )
    for note in report_data["notes"][:10]:
        st.caption(md("Note: {}", note))
    for reason in report_data.get("skipped", [])[:20]:
        st.caption(md("Skipped {}", reason))
    st.download_button(
        "Download the table (CSV)",
        pd.DataFrame(result["rows"]).to_csv(index=False),
        "benchmark_recall.csv",
        "text/csv",
    )
    st.download_button(
        "Download the report (JSON, as `memory-lab recall --json`)",
        json.dumps(report_data, ensure_ascii=False, indent=2),
        "benchmark_recall.json",
        "application/json",
    )


def all_settings() -> dict[str, Setting]:
    settings = default_settings()
    settings.append(Setting("retrieval", spec("retrieval").defaults()))
    have = {s.name for s in settings}
    settings += [Setting(name) for name in REGISTRY if name not in have]  # any added later
    return {s.label: s for s in settings}


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
    benchmark_file()
    st.stop()
with st.expander("File format"):
    st.markdown(FORMAT_HELP)
conv = load_conversation(source)
options = all_settings()
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
