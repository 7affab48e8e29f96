"""Fact survival: plant facts at turn 1, talk about other things, probe at turn N.

Two verdicts per fact, strategy and N: is the fact in the payload (deterministic), and did
the model recall it. The run happens in a background job; this page shows its progress,
can cancel it (the rows so far are kept), and draws the heat maps when it is done.

The settings parsing lives in ui/survival_form.py, the own-log import in ui/own_log.py, the
engine in engines/survival/.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import streamlit as st

from engines.survival import (
    DEFAULT_FACTS,
    DEFAULT_PROBE_TURNS,
    EXAMPLE_FACTS,
    Estimate,
    SurvivalConfig,
    SurvivalConfigError,
    SurvivalResult,
    estimate,
    facts_json,
    parse_facts_json,
    plan_sentence,
    run_survival,
)
from lanes import jobs
from lanes.binding import bind_settings
from memory.choices import StrategyChoice
from memory.errors import MemoryLabError
from memory.maintenance import Upkeep
from memory.registry import REGISTRY
from present.survival import STAND_IN_LABEL, heatmaps, tokens_chart
from scenarios import fincoach
from scenarios.filler import BANK, TOPICS, TranscriptError, parse_transcript
from ui import navigation, strategy_sources
from ui.app_state import AppConfig, keyed_settings, main_config
from ui.own_log import own_log_section
from ui.page_jobs import job_board, job_state
from ui.picker import strategy_picker
from ui.safe import md, plain
from ui.survival_form import OWN, build_config, facts_from_editor, facts_rows

navigation.page_config("Fact survival · Memory Lab", "🧪")

EMBEDDED_NOTE = (
    "**Small local model (SmolLM2-135M): in-payload is the fair test, recall is noisy.** "
    "It can miss a fact that is right in its prompt, and it invents confident answers when "
    "the fact is gone. Use a stronger model (main page sidebar) for a recall verdict that means "
    "something."
)
MAIN_MODEL, NO_MODEL = "main", "none"
ESTIMATE_FIELDS = (
    "probe_calls",
    "reply_calls",
    "maintenance_calls",
    "prompt_tokens",
    "maintenance_tokens",
    "output_tokens",
    "rows",
    "exact",
)


def lane_choices(config: AppConfig) -> list[StrategyChoice]:
    """The main page's lanes first, then every other strategy at its defaults."""
    out = [StrategyChoice(lane.strategy, dict(lane.params)) for lane in config.lanes]
    have = {c.name for c in out}
    out += [StrategyChoice(name) for name in REGISTRY if name not in have]
    return out


def default_settings(config: AppConfig) -> dict[str, Any]:
    return {
        "facts": [f.to_dict() for f in DEFAULT_FACTS],
        "system_prompt": fincoach.SYSTEM_PROMPT,
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


@st.cache_data(show_spinner=False, max_entries=32)
def cached_estimate(config_json: str, with_model: bool, probe_tokens: int) -> dict[str, Any]:
    config = SurvivalConfig.from_dict(json.loads(config_json))
    est = estimate(config, with_model=with_model, assumed_reply_tokens=probe_tokens)
    return {**est.as_dict(), "rough_s": est.rough_seconds(parallel=len(config.strategies))}


def pick(label: str, options: list[str], chosen: list[str], key: str) -> list[str]:
    """A multi-select row of pills."""
    picked = st.pills(
        label,
        options,
        selection_mode="multi",
        default=chosen,
        key=key,
        wrap=True,
        format_func=plain,
    )
    return list(picked or [])


def start_run(config: SurvivalConfig, settings: dict[str, Any], app: AppConfig) -> None:
    send = model_fn = None
    model_label = "payload only (no model)"
    if settings["model"] == MAIN_MODEL:
        choice = app.provider
        conversation = keyed_settings(choice).with_(max_tokens=int(settings["probe_tokens"]))
        upkeep = (
            keyed_settings(choice, choice.maintenance_model) if choice.maintenance_model else None
        )
        if upkeep is not None:
            upkeep = upkeep.with_(max_tokens=max(256, upkeep.max_tokens))
        send, model_fn = bind_settings(conversation, upkeep)
        model_label = app.provider_caption()
    expected = cached_estimate(
        json.dumps(config.to_dict()), send is not None, int(settings["probe_tokens"])
    )["calls"]

    def work(job: jobs.Job) -> SurvivalResult:
        result = run_survival(
            config,
            send=send,
            upkeep=Upkeep.using(model_fn),
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


# ---- state -------------------------------------------------------------------------------
app = main_config()
choices = {c.label: c for c in lane_choices(app)}
st.session_state.setdefault("survival_settings", default_settings(app))
settings: dict[str, Any] = st.session_state.survival_settings
running = job_state(  # its result is kept as plain data
    "survival",
    lost="the run was lost (the app restarted): run it again",
    keep=lambda result: result.as_dict(),
)

# ---- header ------------------------------------------------------------------------------
st.title("Fact survival")
st.caption(
    "If the user says it at turn 1, does the assistant still have it at turn N? "
    "Facts are planted, filler turns follow, and each strategy is probed at every N from a "
    "copy of its memory, so probing never changes the conversation."
)

# ---- your own log ------------------------------------------------------------------------
own = own_log_section(settings, running=running)
if own is not None:
    st.session_state.survival_settings = settings = own
    for widget in ("use-facts", "facts-editor"):  # they would keep the old facts' selection
        st.session_state.pop(widget, None)
    st.rerun()

# ---- settings form -----------------------------------------------------------------------
strategy_sources.defaults_button("strategy-pills", choices, lambda k: choices[k].name)
strategy_sources.caption_missing()
with st.form("survival-settings"):
    left, right = st.columns(2, gap="large")
    with left:
        st.subheader("Facts")
        edited = st.data_editor(
            facts_rows(settings["facts"]),
            num_rows="dynamic",
            hide_index=True,
            key="facts-editor",
            column_config={
                "key": st.column_config.TextColumn("key", width="small", required=True),
                "speaker": st.column_config.SelectboxColumn(
                    "said by", options=["user", "assistant"], width="small", required=True
                ),
                "text": st.column_config.TextColumn("what is said", width="large"),
                "probe": st.column_config.TextColumn("probe question", width="medium"),
                "answer": st.column_config.TextColumn(
                    "expected answer (; between)",
                    help="Amounts match in any form: ₹1,20,000 = 120000 = 1.2 lakh = 1.2L",
                ),
                "turn": st.column_config.NumberColumn("turn", min_value=1, step=1),
                "updates": st.column_config.TextColumn(
                    "updates (from a facts file)",
                    disabled=True,
                    help="A fact that changes later (rent goes up at turn 9): load a facts file.",
                ),
            },
        )
        facts_upload = st.file_uploader(
            "Facts file (JSON: key, text, probe, answer, turn, speaker, updates)",
            type=["json"],
            help="Replaces the facts above. The format is in engines/survival/facts.py; "
            "download the current facts below for an example.",
        )
        add_examples = st.checkbox(
            "Add two example facts: one the assistant states, one updated at turn 9",
            value=False,
        )
        keys = [str(k) for k in edited["key"].dropna().tolist() if str(k).strip()]
        chosen = [k for k in settings["use_facts"] if k in keys] or keys
        use_facts = pick("Facts to probe", keys, chosen, "use-facts")
        probe_turns = st.text_input(
            "Probe turns N",
            settings["probe_turns"],
            help="Comma-separated, up to 1000. Each fact is probed at every N after it is stated.",
        )
    with right:
        st.subheader("Strategies")
        picked = strategy_picker(
            choices,
            settings["strategies"],
            key="strategy-pills",
            label="Strategies (the main page's lanes first)",
            variants=settings["variants"],
            placeholder="window:k=10; summary_buffer:budget=400",
        )
        st.subheader("Conversation")
        system_prompt = st.text_area(
            "System prompt",
            settings.get("system_prompt", fincoach.SYSTEM_PROMPT),
            height=120,
            help="Sent first, unchanged, by every strategy (FinCoach's by default).",
        )
        fillers = ["builtin", "import", OWN]
        filler_mode = st.radio(
            "Filler between the facts and the probes",
            fillers,
            index=fillers.index(settings["filler"]) if settings["filler"] in fillers else 0,
            format_func=lambda m: {
                "builtin": f"Built-in bank ({len(BANK)} turns: {', '.join(TOPICS)})",
                "import": "An imported transcript",
                OWN: "My own log, played as it was (its facts at their turns; import it above)",
            }[m],
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
    facts = facts_from_editor(edited, settings["facts"])
    if facts_upload is not None:
        try:
            facts = [f.to_dict() for f in parse_facts_json(facts_upload.getvalue())]
        except SurvivalConfigError as exc:
            st.error(md("Could not read {}: {}", facts_upload.name, exc))
    if add_examples:
        have = {f["key"] for f in facts}
        facts += [f.to_dict() for f in EXAMPLE_FACTS if f.key not in have]
    new_keys = [f["key"] for f in facts if f["key"] not in {g["key"] for g in settings["facts"]}]
    new = {
        **settings,
        "facts": facts,
        "use_facts": list(use_facts or []) + new_keys,
        "system_prompt": system_prompt,
        "probe_turns": probe_turns,
        "strategies": list(picked.keys),
        "variants": picked.variants,
        "filler": filler_mode,
        "seed": int(seed),
        "replies": replies,
        "model": model_mode,
        "probe_tokens": int(probe_tokens),
        "parallel": bool(parallel),
    }
    if upload is not None and filler_mode == OWN:
        st.warning(
            "The transcript upload is filler for the other modes: import your own log above."
        )
    elif upload is not None:
        try:
            turns = parse_transcript(upload.getvalue().decode("utf-8"), name=upload.name)
            new["filler_turns"] = [{"user": t.user, "reply": t.reply} for t in turns]
            new["filler_name"] = upload.name
        except (TranscriptError, UnicodeDecodeError) as exc:
            st.error(md("Could not read {}: {}", upload.name, exc))
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
    st.error(md("Cannot run: {}", problem))
elif config is not None:
    est = cached_estimate(json.dumps(config.as_dict()), with_model, int(settings["probe_tokens"]))
    if settings["filler"] == OWN:
        st.caption(
            md(
                "Conversation: {} ({} turns), played as it was; each fact is probed at every "
                "N after the turn it was said at.",
                settings["filler_name"],
                len(settings["filler_turns"]),
            )
        )
    if settings["filler"] == "import":
        st.caption(
            md(
                "Filler: {} ({} turns, cycled)",
                settings["filler_name"],
                len(settings["filler_turns"]),
            )
        )
    plan = plan_sentence(
        config, Estimate(**{k: est[k] for k in ESTIMATE_FIELDS}), with_model=with_model
    )
    if embedded:
        minutes = est["rough_s"] * (1.0 if settings.get("parallel") else 1.4) / 60
        plan += f"; roughly {max(1, round(minutes))} min on the embedded model"
    plan += "."
    st.markdown(plan)
    st.download_button(
        "Download these facts as a facts file",
        facts_json(config.facts),
        "facts.json",
        "application/json",
    )

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
    st.error(md("The run failed: {}", st.session_state.survival_error))

# ---- results -----------------------------------------------------------------------------
data = st.session_state.survival_result
if data:
    result = SurvivalResult.from_dict(data)
    st.divider()
    head = f"Results · {result.model or result.mode}"
    st.subheader(plain(head))
    if result.cancelled:
        try:
            total = SurvivalConfig.from_dict(data["config"]).rows_total
        except SurvivalConfigError:
            total = len(result.rows)
        st.warning(f"Cancelled: {len(result.rows)} of {total} probes done. The results so far:")
    st.caption(
        f"{len(result.rows)} probes · {result.provider_calls} model calls · "
        f"{result.maintenance_calls} upkeep calls · {result.elapsed_s:.1f} s"
    )
    if result.stand_in_upkeep:
        st.warning(
            f"**{STAND_IN_LABEL.capitalize()}.** The summary, entity and hybrid figures below "
            "show what the rule-based stand-ins keep, not what a model would."
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
        st.caption(md("Note: {}", note))

    table = pd.DataFrame(
        [
            {
                "strategy": r.strategy,
                "N": r.probe_turn,
                "fact": r.fact,
                "said by": r.speaker,
                "verdict": r.verdict,
                "payload": r.payload_state,
                "reply": r.recall_state,
                "expected": "; ".join(r.answers),
                "stale values": "; ".join(r.stale_answers),
                "upkeep": r.upkeep,
                "flag": r.flag,
                "found in": ", ".join(r.found_in),
                "probe": r.probe,
                "model's answer": r.reply,
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
