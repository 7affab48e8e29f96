"""Fact survival: plant facts at turn 1, talk about other things, probe at turn N.

Two verdicts per fact, strategy and N: is the fact in the payload (deterministic), and did
the model recall it. The run happens in a background job; this page shows its progress,
can cancel it (the rows so far are kept), and draws the heat maps when it is done.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import streamlit as st

from engines.survival import (
    DEFAULT_FACTS,
    DEFAULT_PROBE_TURNS,
    Fact,
    SurvivalConfig,
    SurvivalConfigError,
    SurvivalResult,
    estimate,
    parse_turns,
    run_survival,
)
from lanes import jobs
from lanes.binding import bind_settings
from memory.choices import StrategyChoice, parse_choice
from memory.errors import MemoryLabError
from memory.registry import REGISTRY
from present.survival import heatmaps, tokens_chart
from scenarios.filler import BANK, TOPICS, FillerTurn, TranscriptError, parse_transcript
from ui.app_state import AppConfig, settings_for

st.set_page_config(page_title="Fact survival · Memory Lab", page_icon="🧪", layout="wide")

EMBEDDED_NOTE = (
    "**Small local model (SmolLM2-135M): in-payload is the fair test, recall is noisy.** "
    "It can miss a fact that is right in its prompt, and it invents confident answers when "
    "the fact is gone. Use a stronger model (main page sidebar) for a recall verdict that means "
    "something."
)
MAIN_MODEL, NO_MODEL = "main", "none"


@st.cache_resource
def job_board() -> jobs.Board:
    """Survival runs by id; cached so a module reload (a file edit) does not lose them."""
    return jobs.default_board()


def main_config() -> AppConfig:
    """The main page's settings (its model and lanes), or the defaults if it was not opened."""
    config = st.session_state.get("config")
    return config if isinstance(config, AppConfig) else AppConfig.default()


def lane_choices(config: AppConfig) -> list[StrategyChoice]:
    """The main page's lanes first, then every other strategy at its defaults."""
    out = [StrategyChoice(lane.strategy, dict(lane.params)) for lane in config.lanes]
    have = {c.name for c in out}
    out += [StrategyChoice(name) for name in REGISTRY if name not in have]
    return out


def default_settings(config: AppConfig) -> dict[str, Any]:
    return {
        "facts": [f.as_dict() for f in DEFAULT_FACTS],
        "use_facts": [f.key for f in DEFAULT_FACTS],
        "probe_turns": ", ".join(str(n) for n in DEFAULT_PROBE_TURNS),
        "strategies": [c.label for c in lane_choices(config)[: len(config.lanes)]],
        "variants": "",
        "filler": "builtin",
        "filler_turns": None,
        "filler_name": "",
        "seed": 0,
        "replies": "fixed",
        "model": MAIN_MODEL,
        "probe_tokens": 64,
        "parallel": config.provider.preset != "embedded",
    }


def build_config(settings: dict[str, Any], choices: dict[str, StrategyChoice]) -> SurvivalConfig:
    """The engine's config from the page's plain settings (SurvivalConfigError if wrong)."""
    facts = [Fact.from_dict(f) for f in settings["facts"]]
    facts = [f for f in facts if f.key in settings["use_facts"]]
    strategies = [choices[label] for label in settings["strategies"] if label in choices]
    for part in filter(None, (p.strip() for p in settings["variants"].split(";"))):
        try:
            strategies.append(parse_choice(part))
        except MemoryLabError as exc:
            raise SurvivalConfigError(f"extra variant {part!r}: {exc}") from None
    filler = None
    if settings["filler"] == "import":
        if not settings["filler_turns"]:
            raise SurvivalConfigError("import a transcript, or choose the built-in filler")
        filler = tuple(FillerTurn(t["user"], t.get("reply")) for t in settings["filler_turns"])
    return SurvivalConfig(
        facts=tuple(facts),
        probe_turns=parse_turns(settings["probe_turns"]),
        strategies=tuple(strategies),
        filler=filler,
        filler_seed=int(settings["seed"]),
        replies=settings["replies"],
    ).validate()


@st.cache_data(show_spinner=False, max_entries=32)
def cached_estimate(config_json: str, with_model: bool, probe_tokens: int) -> dict[str, Any]:
    config = config_from_json(config_json)
    est = estimate(config, with_model=with_model, assumed_reply_tokens=probe_tokens)
    return {**est.as_dict(), "rough_s": est.rough_seconds(parallel=len(config.strategies))}


def config_from_json(text: str) -> SurvivalConfig:
    data = json.loads(text)
    filler = data["filler"]
    return SurvivalConfig(
        facts=tuple(Fact.from_dict(f) for f in data["facts"]),
        probe_turns=tuple(data["probe_turns"]),
        strategies=tuple(StrategyChoice(s["name"], s["params"]) for s in data["strategies"]),
        filler=None
        if filler == "built-in"
        else tuple(FillerTurn(t["user"], t.get("reply")) for t in filler),
        filler_seed=data["filler_seed"],
        replies=data["replies"],
        system_prompt=data["system_prompt"],
        encoding=data["encoding"],
    )


def start_run(config: SurvivalConfig, settings: dict[str, Any], app: AppConfig) -> None:
    send = model_fn = None
    model_label = "payload only (no model)"
    if settings["model"] == MAIN_MODEL:
        choice = app.provider
        conversation = settings_for(choice).with_(max_tokens=int(settings["probe_tokens"]))
        upkeep = (
            settings_for(choice, choice.maintenance_model) if choice.maintenance_model else None
        )
        if upkeep is not None:
            upkeep = upkeep.with_(max_tokens=max(256, upkeep.max_tokens))
        send, model_fn = bind_settings(conversation, upkeep)
        model_label = app.provider_caption()
    expected = cached_estimate(
        json.dumps(config.as_dict()), send is not None, int(settings["probe_tokens"])
    )["calls"]

    def work(job: jobs.Job) -> SurvivalResult:
        result = run_survival(
            config,
            send=send,
            summarize=model_fn,
            extract=model_fn,
            on_progress=job.set_progress,
            on_row=job.add,
            cancel=job.cancel_event,
            expected_calls=expected,
            workers=None if settings.get("parallel") else 1,
        )
        result.model = model_label
        return result

    job = job_board().submit(work, name="survival")
    st.session_state.survival_job = job.id
    st.session_state.survival_result = None


def collect_finished_job() -> None:
    """Move a finished job's result into session state (as plain data)."""
    job = job_board().get(st.session_state.survival_job)
    if job is None:
        st.session_state.survival_job = None
        st.session_state.survival_error = "the run was lost (the app restarted): run it again"
        return
    if not job.done:
        return
    st.session_state.survival_job = None
    if job.result is not None:
        st.session_state.survival_result = job.result.as_dict()
    if job.error:
        st.session_state.survival_error = job.error


# ---- state -------------------------------------------------------------------------------
app = main_config()
choices = {c.label: c for c in lane_choices(app)}
st.session_state.setdefault("survival_settings", default_settings(app))
st.session_state.setdefault("survival_job", None)
st.session_state.setdefault("survival_result", None)
st.session_state.setdefault("survival_error", None)
settings: dict[str, Any] = st.session_state.survival_settings
if st.session_state.survival_job:
    collect_finished_job()
running = bool(st.session_state.survival_job)

# ---- header ------------------------------------------------------------------------------
st.title("Fact survival")
st.caption(
    "If the user says it at turn 1, does the assistant still have it at turn N? "
    "Facts are planted, filler turns follow, and each strategy is probed at every N from a "
    "copy of its memory, so probing never changes the conversation."
)

# ---- settings form -----------------------------------------------------------------------
with st.form("survival-settings"):
    left, right = st.columns(2, gap="large")
    with left:
        st.subheader("Facts")
        facts_df = pd.DataFrame(
            [
                {
                    "key": f["key"],
                    "plant": f["plant"],
                    "probe": f["probe"],
                    "answers": "; ".join(f["answers"]),
                    "plant_turn": int(f.get("plant_turn", 1)),
                }
                for f in settings["facts"]
            ]
        )
        edited = st.data_editor(
            facts_df,
            num_rows="dynamic",
            hide_index=True,
            key="facts-editor",
            column_config={
                "key": st.column_config.TextColumn("key", width="small", required=True),
                "plant": st.column_config.TextColumn("what the user says", width="large"),
                "probe": st.column_config.TextColumn("probe question", width="medium"),
                "answers": st.column_config.TextColumn(
                    "accepted answers (; between)",
                    help="Amounts match in any form: ₹1,20,000 = 120000 = 1.2 lakh = 1.2L",
                ),
                "plant_turn": st.column_config.NumberColumn("turn", min_value=1, step=1),
            },
        )
        keys = [str(k) for k in edited["key"].dropna().tolist() if str(k).strip()]
        use_facts = st.pills(
            "Facts to probe",
            keys,
            selection_mode="multi",
            default=[k for k in settings["use_facts"] if k in keys] or keys,
            key="use-facts",
            wrap=True,
        )
        probe_turns = st.text_input(
            "Probe turns N",
            settings["probe_turns"],
            help="Comma-separated, each after the planting turn, up to 1000.",
        )
    with right:
        st.subheader("Strategies")
        picked = st.pills(
            "Strategies (the main page's lanes first)",
            list(choices),
            selection_mode="multi",
            default=[s for s in settings["strategies"] if s in choices],
            key="strategy-pills",
            wrap=True,
        )
        variants = st.text_input(
            "Extra variants",
            settings["variants"],
            placeholder="window:k=10; summary_buffer:budget=400",
            help="More strategy settings, written name:key=value, separated by ';'.",
        )
        st.subheader("Conversation")
        filler_mode = st.radio(
            "Filler between the facts and the probes",
            ["builtin", "import"],
            index=0 if settings["filler"] == "builtin" else 1,
            format_func=lambda m: (
                f"Built-in bank ({len(BANK)} turns: {', '.join(TOPICS)})"
                if m == "builtin"
                else "An imported transcript"
            ),
            horizontal=False,
        )
        upload = st.file_uploader(
            "Transcript (.txt one message a line, .json messages, .csv with a 'user' column)",
            type=["txt", "json", "csv"],
        )
        c1, c2 = st.columns(2)
        replies = c1.radio(
            "Replies to filler turns",
            ["fixed", "generated"],
            index=0 if settings["replies"] == "fixed" else 1,
            format_func=lambda m: (
                "Fixed short replies (fast, free)" if m == "fixed" else "Generated by the model"
            ),
        )
        seed = c2.number_input("Filler shuffle seed", 0, 10_000, int(settings["seed"]))
        model_mode = c1.radio(
            "Model for probes and upkeep",
            [MAIN_MODEL, NO_MODEL],
            index=0 if settings["model"] == MAIN_MODEL else 1,
            format_func=lambda m: (
                f"The main page's model ({app.provider_caption()})"
                if m == MAIN_MODEL
                else "None: payload only (rule-based upkeep)"
            ),
        )
        probe_tokens = c2.number_input(
            "Max reply tokens per probe", 16, 1024, int(settings["probe_tokens"]), 16
        )
        parallel = st.checkbox(
            "Run the strategies in parallel",
            bool(settings["parallel"]),
            help="Faster. On the embedded model, requests answered together are batched and "
            "their replies can then differ slightly from run to run; one at a time, the same "
            "inputs give the same replies.",
        )
    applied = st.form_submit_button("Apply settings", type="primary", disabled=running)

if applied:
    facts = []
    for row in edited.to_dict("records"):
        if not str(row.get("key") or "").strip():
            continue
        answers = [a.strip() for a in str(row.get("answers") or "").split(";") if a.strip()]
        turn = row.get("plant_turn")
        facts.append(
            {
                "key": str(row["key"]).strip(),
                "plant": str(row.get("plant") or ""),
                "probe": str(row.get("probe") or ""),
                "answers": answers,
                "label": "",
                "plant_turn": int(turn) if turn == turn and turn else 1,  # NaN -> 1
            }
        )
    new = {
        **settings,
        "facts": facts,
        "use_facts": list(use_facts or []),
        "probe_turns": probe_turns,
        "strategies": list(picked or []),
        "variants": variants,
        "filler": filler_mode,
        "seed": int(seed),
        "replies": replies,
        "model": model_mode,
        "probe_tokens": int(probe_tokens),
        "parallel": bool(parallel),
    }
    if upload is not None:
        try:
            turns = parse_transcript(upload.getvalue().decode("utf-8"), name=upload.name)
            new["filler_turns"] = [{"user": t.user, "reply": t.reply} for t in turns]
            new["filler_name"] = upload.name
        except (TranscriptError, UnicodeDecodeError) as exc:
            st.error(f"Could not read {upload.name}: {exc}")
    st.session_state.survival_settings = settings = new

# ---- the plan ----------------------------------------------------------------------------
config: SurvivalConfig | None
try:
    config = build_config(settings, choices)
    problem = None
except (SurvivalConfigError, MemoryLabError, ValueError) as exc:
    config, problem = None, str(exc)

with_model = settings["model"] == MAIN_MODEL
embedded = with_model and app.provider.preset == "embedded"
if embedded:
    st.info(EMBEDDED_NOTE)

if problem:
    st.error(f"Cannot run: {problem}")
elif config is not None:
    est = cached_estimate(json.dumps(config.as_dict()), with_model, int(settings["probe_tokens"]))
    if settings["filler"] == "import":
        st.caption(
            f"Filler: {settings['filler_name']} ({len(settings['filler_turns'])} turns, cycled)"
        )
    plan = (
        f"**{len(config.facts)} facts × {len(config.strategies)} strategies × "
        f"{len(config.probe_turns)} probe turns = {est['rows']} probes.** "
    )
    if with_model:
        plan += (
            f"About **{est['calls']:,} model calls** ({est['probe_calls']} probes, "
            f"{est['reply_calls']} replies, {est['maintenance_calls']} summaries/extractions) "
            f"and **{est['tokens']:,} tokens**"
        )
        if embedded:
            minutes = est["rough_s"] * (1.0 if settings.get("parallel") else 1.4) / 60
            plan += f"; roughly {max(1, round(minutes))} min on the embedded model."
        else:
            plan += "."
    else:
        plan += "No model calls: the payload verdict only, computed in a moment."
    st.markdown(plan)

    run_col, _ = st.columns([1, 5])
    if run_col.button("▶ Run", type="primary", disabled=running, width="stretch"):
        st.session_state.survival_error = None
        start_run(config, settings, app)
        st.rerun()


@st.fragment(run_every=1.0)
def progress_panel() -> None:
    job = job_board().get(st.session_state.survival_job)
    if job is None:
        return
    p = job.progress
    if job.done:
        st.rerun()
    if p is None:
        st.progress(0.0, text="Starting…")
    elif p.total:
        st.progress(
            p.fraction,
            text=f"Calls done: {p.done:,} · to go: {p.to_go:,} · probes {p.rows}/{p.rows_total}"
            f" · {job.elapsed:.0f} s",
        )
    else:
        st.progress(p.fraction, text=f"Probes {p.rows}/{p.rows_total}")
    if st.button(
        "■ Cancel (keep results so far)", key="cancel-run", disabled=job.cancel_event.is_set()
    ):
        job.cancel()
        st.toast("Cancelling: waiting for the calls in flight…")


if running:
    progress_panel()

if st.session_state.survival_error:
    st.error(f"The run failed: {st.session_state.survival_error}")

# ---- results -----------------------------------------------------------------------------
data = st.session_state.survival_result
if data:
    result = SurvivalResult.from_dict(data)
    st.divider()
    head = f"Results · {result.model or result.mode}"
    st.subheader(head)
    if result.cancelled:
        total = (
            len(data["config"]["facts"])
            * len(data["config"]["strategies"])
            * len(data["config"]["probe_turns"])
        )
        st.warning(f"Cancelled: {len(result.rows)} of {total} probes done. The results so far:")
    st.caption(
        f"{len(result.rows)} probes · {result.provider_calls} model calls · "
        f"{result.maintenance_calls} upkeep calls · {result.elapsed_s:.1f} s"
    )
    st.plotly_chart(heatmaps(result), theme=None, key="heatmaps")
    if result.mode == "model":
        st.caption(
            "Left, deterministic: the fact (in any number format) is in the request sent at N. "
            "Right: the model's reply to the probe contains an accepted answer; 'guess/leak' "
            "marks a fact recalled although it was not in the payload."
        )
    else:
        st.caption(
            "Deterministic: the fact (in any number format) is in the request sent at N. "
            "Payload only: no model answered, so there is no recall verdict."
        )
    st.plotly_chart(tokens_chart(result), theme=None, key="tokens-spent")
    for note in result.notes:
        st.caption(f"Note: {note}")

    table = pd.DataFrame(
        [
            {
                "strategy": r.strategy,
                "N": r.probe_turn,
                "fact": r.fact,
                "verdict": r.verdict,
                "flag": r.flag,
                "found in": ", ".join(r.found_in),
                "probe": r.probe,
                "reply": r.reply,
                "prompt tokens": r.probe_prompt_tokens,
                "spent to reach N": r.prompt_tokens_spent,
                "upkeep calls": r.maintenance_calls,
                "error": r.error or "",
            }
            for r in result.rows
        ]
    )
    st.dataframe(table, hide_index=True, key="rows-table")
    d1, d2, _ = st.columns([1, 1, 4])
    d1.download_button(
        "Download CSV", result.to_csv(), "fact_survival.csv", "text/csv", width="stretch"
    )
    d2.download_button(
        "Download JSON", result.to_json(), "fact_survival.json", "application/json", width="stretch"
    )
