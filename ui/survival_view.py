"""The fact-survival page's parts: the settings form, the run's start and progress, and the
results. Streamlit drawing over ui/survival_form.py (plain data) and engines/survival/.
Reads and writes the page's session-state keys `survival_job`, `survival_result` and
`survival_error`."""

from __future__ import annotations

import json
from typing import Any

import streamlit as st

from engines.survival import (
    SurvivalConfig,
    SurvivalConfigError,
    SurvivalResult,
    estimate,
    run_survival,
)
from lanes import jobs
from lanes.binding import bind_settings
from memory.lane_spec import LaneSpec
from memory.maintenance import Upkeep
from present.survival import STAND_IN_LABEL, heatmaps, tokens_chart
from scenarios import fincoach
from scenarios.filler import BANK, TOPICS
from ui.app_state import AppConfig, keyed_settings
from ui.page_jobs import job_board
from ui.picker import strategy_picker
from ui.safe import md, plain
from ui.survival_form import MAIN_MODEL, NO_MODEL, OWN, FormValues, facts_rows, results_table


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


def _upload(file: Any) -> tuple[str, bytes] | None:
    return None if file is None else (file.name, file.getvalue())


def settings_form(
    settings: dict[str, Any], choices: dict[str, LaneSpec], app: AppConfig, *, running: bool
) -> FormValues | None:
    """The settings form; its values once applied, else None."""
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
                        help="A fact that changes later (rent goes up at turn 9): load a "
                        "facts file.",
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
                help="Comma-separated, up to 1000. Each fact is probed at every N after it is "
                "stated.",
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
    if not applied:
        return None
    return FormValues(
        edited=edited,
        facts_file=_upload(facts_upload),
        add_examples=add_examples,
        use_facts=list(use_facts or []),
        probe_turns=probe_turns,
        strategies=list(picked.keys),
        variants=picked.variants,
        system_prompt=system_prompt,
        filler=filler_mode,
        transcript=_upload(upload),
        replies=replies,
        seed=int(seed),
        model=model_mode,
        probe_tokens=int(probe_tokens),
        parallel=bool(parallel),
    )


def start_run(config: SurvivalConfig, settings: dict[str, Any], app: AppConfig) -> None:
    """Submit the run as a background job on the main page's model (or none)."""
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


def results(data: dict[str, Any]) -> None:
    """A finished (or cancelled) run: heat maps, tokens spent, the table and downloads."""
    result = SurvivalResult.from_dict(data)
    st.divider()
    st.subheader(plain(f"Results · {result.model or result.mode}"))
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
    st.dataframe(results_table(result), hide_index=True, key="rows-table")
    d1, d2, _ = st.columns([1, 1, 4])
    d1.download_button(
        "Download CSV", result.to_csv(), "fact_survival.csv", "text/csv", width="stretch"
    )
    d2.download_button(
        "Download JSON", result.to_json(), "fact_survival.json", "application/json", width="stretch"
    )
