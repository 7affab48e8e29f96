"""Auto-tune: the cheapest memory setting that still keeps the facts you care about.

Pick a conversation, the facts, the probe turns and a target; the tuner (engines/tune.py)
searches every chosen strategy's parameters payload-only (no model) in a background job,
with a progress bar and Cancel. Then: how many settings were tried and why the search
stopped, the frontier with the winner starred, every setting tried, downloads, an optional
confirmation with real recall calls (its cost first), and "Add as lane".
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from engines.survival import SurvivalConfig, SurvivalConfigError, parse_facts_json, parse_turns
from engines.tune import Evaluator
from memory.errors import MemoryLabError
from scenarios.filler import BANK
from ui import navigation, tune_view
from ui.lane_handoff import main_config
from ui.page_jobs import job_board, job_state
from ui.picker import by_name, strategy_picker
from ui.safe import md, plain
from ui.tune_form import (
    QUESTION_SOURCES,
    SOURCE_DEMO,
    SOURCE_FILLER,
    SOURCE_LONGMEM,
    SOURCE_QUESTIONS,
    SOURCE_TRANSCRIPT,
    TuneSettings,
    result_from_dict,
)

navigation.page_config("Auto-tune · Memory Lab", "🎯")

SOURCES = {
    SOURCE_DEMO: f"FinCoach demo: its facts, then the built-in filler bank ({len(BANK)} turns)",
    SOURCE_FILLER: "FinCoach's facts (or a facts file), then an imported transcript as filler",
    SOURCE_TRANSCRIPT: "An imported transcript whose turns state the facts (with a facts file)",
    SOURCE_LONGMEM: "The long-memory benchmark: a generated year of chats and its questions",
    SOURCE_QUESTIONS: "An imported transcript and a questions file (evidence turns)",
}
TRANSCRIPT_HELP = "A transcript file: .txt (User:/Assistant: lines), .json messages, or .csv."


# ---- state -------------------------------------------------------------------------------
app = main_config()
st.session_state.setdefault("tune_settings", TuneSettings())
st.session_state.setdefault("tune_run", None)
settings: TuneSettings = st.session_state.tune_settings
running = job_state("tune", lost="the search was lost (the app restarted): run it again")

st.title("Auto-tune")
st.caption(
    "What is the cheapest memory that still keeps the facts you care about? The tuner "
    "searches each strategy's parameters on a scripted conversation with no model (summaries "
    "and fact extraction by rule-based stand-ins) and draws tokens per turn against facts kept."
)

# ---- settings form -----------------------------------------------------------------------
source = st.radio(
    "Conversation",
    list(SOURCES),
    index=list(SOURCES).index(settings.source),
    format_func=SOURCES.__getitem__,
    key="tune-source",
    horizontal=False,
)
if source != settings.source:
    questions_first = source in QUESTION_SOURCES and settings.source not in QUESTION_SOURCES
    pct = 90 if questions_first and settings.target_pct == 100 else settings.target_pct
    st.session_state.tune_settings = settings = settings.replace(source=source, target_pct=pct)
facts_source = source in (SOURCE_DEMO, SOURCE_FILLER)
with st.form("tune-settings"):
    left, right = st.columns(2, gap="large")
    with left:
        st.subheader("What to keep")
        transcript = facts_upload = questions = None
        if source in (SOURCE_FILLER, SOURCE_TRANSCRIPT, SOURCE_QUESTIONS):
            kept = f" (now: {settings.transcript_name})" if settings.transcript else ""
            transcript = st.file_uploader(
                f"Transcript{kept}", type=["txt", "json", "csv"], help=TRANSCRIPT_HELP
            )
        use_facts: Any = settings.use_facts
        if facts_source:
            keys = [f.key for f in settings.facts]
            use_facts = st.pills(
                "Facts to keep",
                keys,
                selection_mode="multi",
                default=[k for k in settings.use_facts if k in keys],
                format_func=lambda k: plain(next(f.title for f in settings.facts if f.key == k)),
                key="tune-facts",
            )
        if source != SOURCE_LONGMEM and source != SOURCE_QUESTIONS:
            facts_upload = st.file_uploader(
                "Facts file (JSON, as on the Fact survival page; replaces the facts above)"
                if facts_source
                else "Facts file (JSON: key, turn that states it, probe, answer)",
                type=["json"],
                key="tune-facts-file",
            )
        if source == SOURCE_QUESTIONS:
            questions = st.file_uploader(
                "Questions file (JSON: question, evidence turns, after_turn)",
                type=["json"],
                key="tune-questions",
            )
        c1, c2 = st.columns(2)
        if source == SOURCE_LONGMEM:
            longmem_seed = c1.number_input("Conversation seed", 0, 10_000, settings.longmem_seed)
            sessions = c2.number_input(
                "Sessions (about 26 turns each)", 6, 40, settings.longmem_sessions
            )
        probe_turns = settings.probe_turns
        if source not in QUESTION_SOURCES:
            probe_turns = st.text_input(
                "Probe turns N",
                settings.probe_turns,
                help="Each fact is probed at every N after it is stated (comma-separated, up "
                "to 1000). On a transcript, blank: once, after its last turn.",
            )
    with right:
        st.subheader("Target and search")
        c1, c2 = st.columns(2)
        target_pct = c1.slider(
            "Share that must be in the payload (%)",
            5,
            100,
            settings.target_pct,
            5,
            help="Facts: the probes (fact × probe turn) whose current value is in the payload. "
            "Questions: the evidence turns sent verbatim when each question is asked.",
        )
        at_text = c2.text_input(
            "Judge the target at N (blank: everywhere judged)",
            ", ".join(map(str, settings.at)),
            placeholder="50",
        )
        picked = strategy_picker(
            by_name(),
            settings.strategies,
            key="tune-strategies",
            label="Strategies to search (their parameters are tuned)",
            titles=True,
        )
        c1, c2, c3 = st.columns(3)
        seed = c1.number_input("Seed", 0, 1_000_000, settings.seed)
        time_limit = c2.number_input("Time limit (s)", 1.0, 600.0, settings.time_limit_s, 5.0)
        max_trials = c3.number_input("Settings at most", 1, 5000, settings.max_trials, 50)
    applied = st.form_submit_button("Apply settings", type="primary", disabled=running)

problems: list[str] = []
if applied:
    new = settings.replace(
        use_facts=tuple(use_facts or ()),
        probe_turns=probe_turns,
        target_pct=int(target_pct),
        strategies=tuple(picked.keys),
        seed=int(seed),
        time_limit_s=float(time_limit),
        max_trials=int(max_trials),
    )
    if source == SOURCE_LONGMEM:
        new = new.replace(longmem_seed=int(longmem_seed), longmem_sessions=int(sessions))
    try:
        new = new.replace(at=parse_turns(at_text) if at_text.strip() else ())
    except SurvivalConfigError as exc:
        problems.append(f"Judge the target at N: {exc}")
    if transcript is not None:
        new = new.replace(transcript=transcript.getvalue(), transcript_name=transcript.name)
    if questions is not None:
        new = new.replace(questions=questions.getvalue())
    if facts_upload is not None and not facts_source:
        new = new.replace(facts_file=facts_upload.getvalue())
    elif facts_upload is not None:
        try:
            facts = parse_facts_json(facts_upload.getvalue())
            new = new.replace(facts=facts, use_facts=tuple(f.key for f in facts))
        except SurvivalConfigError as exc:
            problems.append(f"Could not read {facts_upload.name}: {exc}")
    st.session_state.tune_settings = settings = new
for problem in problems:
    st.error(plain(problem))

# ---- the plan ----------------------------------------------------------------------------
evaluator: Evaluator | None = None
try:
    if not settings.strategies:
        raise SurvivalConfigError("pick at least one strategy to search")
    evaluator = tune_view.evaluator_for(settings)
    target = settings.target(evaluator)
except (ValueError, MemoryLabError) as exc:  # the parsers' errors are ValueErrors
    evaluator = None
    st.error(md("Cannot search: {}", exc))
if evaluator is not None:
    st.markdown(
        f"Search **{len(settings.strategies)} strategies** for: "
        f"**{target.describe(evaluator.what)}** · {evaluator.describe()} · search seed "
        f"{settings.seed}, "
        f"at most {settings.time_limit_s:g} s and {settings.max_trials:,} settings · "
        "no model calls."
    )
    if st.columns([1, 5])[0].button("▶ Search", type="primary", disabled=running, width="stretch"):
        tune_view.start_search(settings, evaluator, target)
        st.rerun()

if running:
    run = st.session_state.tune_run or {}
    tune_view.progress(
        job_board(),
        st.session_state.tune_job,
        run.get("strategies", []),
        float(run.get("time_limit", 0)),
    )

if st.session_state.tune_error:
    st.error(md("The search failed: {}", st.session_state.tune_error))

data = st.session_state.tune_result
if data and st.session_state.tune_run:
    saved = st.session_state.tune_run.get("config")
    tune_view.result_section(
        result_from_dict(data), SurvivalConfig.from_dict(saved) if saved else None, app
    )
