"""Auto-tune: the cheapest memory setting that still keeps the facts you care about.

Pick a conversation, the facts, the probe turns and a target; the tuner (engines/tune.py)
searches every chosen strategy's parameters payload-only (no model) in a background job,
with a progress bar and Cancel. Then: how many settings were tried and why the search
stopped, the frontier with the winner starred, every setting tried, downloads, an optional
confirmation with real recall calls (its cost first), and "Add as lane".
"""

from __future__ import annotations

import streamlit as st

from engines.survival import SurvivalConfig, SurvivalConfigError, parse_facts_json, parse_turns
from engines.tune import tune
from lanes import jobs
from memory.errors import MemoryLabError
from scenarios.filler import BANK, TranscriptError, parse_transcript
from ui import tune_view
from ui.app_state import AppConfig
from ui.picker import by_name, strategy_picker
from ui.tune_form import SOURCE_DEMO, SOURCE_TRANSCRIPT, TuneSettings, result_from_dict

st.set_page_config(page_title="Auto-tune · Memory Lab", page_icon="🎯", layout="wide")

SOURCES = {
    SOURCE_DEMO: f"FinCoach demo: its facts, then the built-in filler bank ({len(BANK)} turns)",
    SOURCE_TRANSCRIPT: "An imported transcript as the talk between the facts and the probes",
}


@st.cache_resource
def job_board() -> jobs.Board:
    """Searches by id; cached so a module reload (a file edit) does not lose them."""
    return jobs.default_board()


def main_config() -> AppConfig:
    config = st.session_state.get("config")
    return config if isinstance(config, AppConfig) else AppConfig.default()


def start_search(settings: TuneSettings, config: SurvivalConfig) -> None:
    target = settings.target(config)

    def work(job: jobs.Job) -> dict:
        result = tune(
            config,
            target,
            strategies=settings.strategies,
            seed=settings.seed,
            time_limit_s=settings.time_limit_s,
            max_trials=settings.max_trials,
            refine=settings.refine,
            cancel=job.cancel_event,
            on_progress=job.set_progress,
        )
        return result.as_dict()

    job = job_board().submit(work, name="tune")
    st.session_state.tune_job = job.id
    st.session_state.tune_result = None
    st.session_state.tune_added = None
    st.session_state.tune_run = {
        "config": config.to_dict(),
        "strategies": list(settings.strategies),
        "time_limit": settings.time_limit_s,
    }


def collect_finished_job() -> None:
    job = job_board().get(st.session_state.tune_job)
    if job is None:
        st.session_state.tune_job = None
        st.session_state.tune_error = "the search was lost (the app restarted): run it again"
    elif job.done:
        st.session_state.tune_job = None
        st.session_state.tune_result = job.result
        st.session_state.tune_error = job.error


# ---- state -------------------------------------------------------------------------------
app = main_config()
st.session_state.setdefault("tune_settings", TuneSettings())
st.session_state.setdefault("tune_job", None)
st.session_state.setdefault("tune_result", None)
st.session_state.setdefault("tune_error", None)
st.session_state.setdefault("tune_run", None)
settings: TuneSettings = st.session_state.tune_settings
if st.session_state.tune_job:
    collect_finished_job()
running = bool(st.session_state.tune_job)

st.title("Auto-tune")
st.caption(
    "What is the cheapest memory that still keeps the facts you care about? The tuner "
    "searches each strategy's parameters on a scripted conversation with no model (summaries "
    "and fact extraction by rule-based stand-ins) and draws tokens per turn against facts kept."
)

# ---- settings form -----------------------------------------------------------------------
with st.form("tune-settings"):
    left, right = st.columns(2, gap="large")
    with left:
        st.subheader("Conversation and facts")
        source = st.radio(
            "Conversation",
            list(SOURCES),
            index=list(SOURCES).index(settings.source),
            format_func=SOURCES.__getitem__,
        )
        transcript = st.file_uploader(
            "Transcript (.txt one message a line, .json messages, .csv with a 'user' column)",
            type=["txt", "json", "csv"],
            key="tune-transcript",
        )
        keys = [f.key for f in settings.facts]
        use_facts = st.pills(
            "Facts to keep",
            keys,
            selection_mode="multi",
            default=[k for k in settings.use_facts if k in keys],
            format_func=lambda k: next(f.title for f in settings.facts if f.key == k),
            key="tune-facts",
        )
        facts_upload = st.file_uploader(
            "Facts file (JSON, as on the Fact survival page; replaces the facts above)",
            type=["json"],
            key="tune-facts-file",
        )
        probe_turns = st.text_input(
            "Probe turns N",
            settings.probe_turns,
            help="Each fact is probed at every N after it is stated (comma-separated, up to 1000).",
        )
    with right:
        st.subheader("Target and search")
        c1, c2 = st.columns(2)
        target_pct = c1.slider(
            "Facts that must be in the payload (%)",
            5,
            100,
            settings.target_pct,
            5,
            help="Share of the probes (fact × probe turn) whose current value is in the payload.",
        )
        at_text = c2.text_input(
            "Judge the target at N (blank: every probe turn)",
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
        source=source,
        use_facts=tuple(use_facts or ()),
        probe_turns=probe_turns,
        target_pct=int(target_pct),
        strategies=tuple(picked.keys),
        seed=int(seed),
        time_limit_s=float(time_limit),
        max_trials=int(max_trials),
    )
    try:
        new = new.replace(at=parse_turns(at_text) if at_text.strip() else ())
    except SurvivalConfigError as exc:
        problems.append(f"Judge the target at N: {exc}")
    if facts_upload is not None:
        try:
            facts = parse_facts_json(facts_upload.getvalue().decode("utf-8"))
            new = new.replace(facts=facts, use_facts=tuple(f.key for f in facts))
        except (SurvivalConfigError, UnicodeDecodeError) as exc:
            problems.append(f"Could not read {facts_upload.name}: {exc}")
    if transcript is not None:
        try:
            turns = parse_transcript(transcript.getvalue().decode("utf-8"), name=transcript.name)
            new = new.replace(filler=tuple(turns), filler_name=transcript.name)
        except (TranscriptError, UnicodeDecodeError) as exc:
            problems.append(f"Could not read {transcript.name}: {exc}")
    st.session_state.tune_settings = settings = new
for problem in problems:
    st.error(problem)

# ---- the plan ----------------------------------------------------------------------------
config: SurvivalConfig | None = None
try:
    config = settings.config()
    target = settings.target(config)
except (SurvivalConfigError, MemoryLabError, ValueError) as exc:
    config = None
    st.error(f"Cannot search: {exc}")
if config is not None:
    where = (
        f"{settings.filler_name} ({len(settings.filler)} turns, cycled)"
        if settings.source == SOURCE_TRANSCRIPT
        else "the FinCoach facts, then the built-in filler bank"
    )
    st.markdown(
        f"Search **{len(settings.strategies)} strategies** for: **{target.describe()}** · "
        f"{len(config.facts)} facts × {len(config.probe_turns)} probe turns, up to turn "
        f"{config.last_turn}, on {where} · seed {settings.seed}, at most "
        f"{settings.time_limit_s:g} s and {settings.max_trials:,} settings · no model calls."
    )
    run_col, _ = st.columns([1, 5])
    if run_col.button("▶ Search", type="primary", disabled=running, width="stretch"):
        st.session_state.tune_error = None
        start_search(settings, config)
        st.rerun()


@st.fragment(run_every=0.5)
def progress_panel() -> None:
    job = job_board().get(st.session_state.tune_job)
    if job is None:
        return
    if job.done:
        st.rerun()
    run = st.session_state.tune_run or {}
    tune_view.running_panel(job, run.get("strategies", []), float(run.get("time_limit", 0)))


if running:
    progress_panel()

if st.session_state.tune_error:
    st.error(f"The search failed: {st.session_state.tune_error}")

data = st.session_state.tune_result
if data and st.session_state.tune_run:
    tune_view.result_section(
        result_from_dict(data),
        SurvivalConfig.from_dict(st.session_state.tune_run["config"]),
        app,
    )
