"""The Tune page's panels: the search's progress (with Cancel), its result (why it stopped,
the frontier with the winner, the settings tried, downloads), "Add as lane", and the
optional confirmation of a setting with real recall calls (its cost shown first).

The page (pages/6_Tune.py) holds the form and the state; everything drawn from a result is
here. Jobs run on ui/page_jobs.py's board: the page keeps only their ids in session state.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from engines.survival import SurvivalConfig, SurvivalResult
from engines.tune import (
    Evaluator,
    FactsEvaluator,
    Target,
    Trial,
    TuneProgress,
    TuneResult,
    confirm,
    confirmation_plan,
    tune,
)
from lanes import jobs
from lanes.binding import bind_settings
from memory.errors import InvalidParameter
from memory.maintenance import Upkeep
from present.tune import frontier_figure
from ui import composer_view, navigation
from ui.app_state import AppConfig, keyed_settings, maintenance_settings
from ui.lane_handoff import add_as_lane
from ui.page_jobs import job_board
from ui.safe import md
from ui.tune_form import TuneSettings, frontier_options, trials_table, unit

CONFIRM_REPLY_TOKENS = 64


def progress_line(
    progress: TuneProgress | None, names: Sequence[str], elapsed: float, limit: float
) -> tuple[float, str]:
    """The bar's fraction and text: strategies searched so far, or the share of the time
    limit used, whichever is further along."""
    if progress is None:
        return 0.0, "Starting…"
    index = names.index(progress.strategy) if progress.strategy in names else 0
    fraction = max(index / max(1, len(names)), elapsed / limit if limit else 0.0)
    text = (
        f"{progress.tried} settings tried · searching {progress.strategy} "
        f"({index + 1} of {len(names)}) · {elapsed:.1f} s of at most {limit:g} s"
    )
    return min(1.0, fraction), text


@st.fragment(run_every=0.5)
def progress(board: jobs.Board, job_id: str, names: Sequence[str], limit: float) -> None:
    """The running search's progress bar and Cancel button; the page reruns (and picks the
    result up) once the job is done or gone."""
    job = board.get(job_id)
    if job is None or job.done:
        st.rerun()
        return
    fraction, text = progress_line(job.progress, names, job.elapsed, limit)
    st.progress(fraction, text=text)
    if st.button(
        "■ Cancel (keep the settings tried so far)",
        key="tune-cancel",
        disabled=job.cancel_event.is_set(),
    ):
        job.cancel()
        st.toast("Cancelling: the search stops after the setting it is trying…")


def result_section(result: TuneResult, config: SurvivalConfig | None, app: AppConfig) -> None:
    """Everything a finished (or stopped) search shows (`config`: the facts searched on, for
    a confirmation with a model; None for other conversations)."""
    st.divider()
    st.subheader("Result")
    st.markdown(
        md(
            "**{} settings tried** in {:.1f} s; the search stopped because **{}**. "
            "Target: {}. Conversation: {}.",
            len(result.trials),
            result.elapsed_s,
            result.stop_reason,
            result.target.describe(result.what),
            result.conversation,
        )
    )
    winner = result.winner
    if winner is not None:
        st.success(
            md(
                "Cheapest setting that meets the target: **{}**, {:,.0f} prompt tokens per {}, "
                "{}/{} {} kept.",
                winner.label,
                winner.tokens_per_turn,
                unit(result),
                winner.kept,
                winner.probes,
                result.what,
            )
        )
    else:
        st.warning(
            "No setting tried meets the target. Lower the target, judge it at fewer probe "
            "turns, or search more strategies (or give the search more time)."
        )
    for note in result.notes:
        st.caption(md("Note: {}", note))
    st.plotly_chart(
        frontier_figure(result), theme=None, key="tune-frontier", config={"displayModeBar": False}
    )
    st.caption(
        "Each dot is a setting tried; the black line is the frontier (no other setting is both "
        "cheaper and keeps more); the star is the cheapest setting meeting the target (dashed)."
    )
    add_lane_row(result)
    st.markdown("**Every setting tried**, in the order tried")
    st.dataframe(trials_table(result), hide_index=True, key="tune-trials")
    d1, d2, _ = st.columns([1, 1, 4])
    d1.download_button("Download CSV", result.to_csv(), "tune.csv", "text/csv", width="stretch")
    d2.download_button(
        "Download JSON", result.to_json(), "tune.json", "application/json", width="stretch"
    )
    if winner is not None and config is not None:
        confirmation(config, winner, app)
    elif winner is not None:
        st.caption(
            "Confirming with a model's recall calls is offered for the FinCoach-style facts; "
            "on this conversation the verdict is the payload's alone."
        )


def add_lane_row(result: TuneResult) -> None:
    """A frontier setting (the winner first) and the button that puts it on the main page."""
    options = frontier_options(result)
    if not options:
        return
    left, middle, right = st.columns([4, 1, 1], vertical_alignment="bottom")
    label = left.selectbox("Setting to add as a lane", list(options), key="tune-lane-pick")
    choice = options[label].choice
    if middle.button("Add as lane", key="tune-add-lane", type="primary", width="stretch"):
        st.session_state.tune_added = add_as_lane(choice)
    if right.button(
        "Edit as blocks",
        key="tune-edit-blocks",
        width="stretch",
        help="Open this setting in the Composer, written as blocks, to change it further.",
    ):
        try:
            comp = composer_view.as_blocks(choice)
        except InvalidParameter as exc:
            st.error(md("{} cannot be written as blocks: {}", choice.label, exc))
        else:
            composer_view.load_draft(comp, f"From the tuner: {choice.label}.", choice.name)
            st.switch_page("pages/7_Composer.py")
    added = st.session_state.get("tune_added")
    if added:
        st.success(added)
        st.page_link(navigation.MAIN_PAGE, label="Open Compare strategies →")


def confirmation(config: SurvivalConfig, winner: Trial, app: AppConfig) -> None:
    """Confirm the winner with real recall calls on the main page's model, cost first."""
    with st.expander(md("Confirm {} with the main page's model (optional)", winner.label)):
        plan = confirmation_plan(config, winner)
        cost = confirmation_cost(
            app, plan.prompt_tokens + plan.maintenance_tokens, plan.output_tokens
        )
        st.markdown(
            md("Model: **{}**. ", app.provider_caption())
            + "Confirming runs the survival lab for this one "
            f"setting: **{plan.calls:,} calls** ({plan.probe_calls} probes, {plan.reply_calls} "
            f"replies, {plan.maintenance_calls} upkeep calls), about **{plan.tokens:,} tokens**"
            f"{cost}. Nothing is sent until you press the button."
        )
        job = job_board().get(st.session_state.get("tune_confirm_job"))
        running = job is not None and not job.done
        if st.button(
            f"Run the confirmation ({plan.calls:,} calls)", key="tune-confirm", disabled=running
        ):
            st.session_state.tune_confirm_job = start_confirmation(config, winner, app).id
            st.rerun()
        if job is not None and job.done:
            confirmation_result(job)
        elif running:
            st.info("Confirming… (reopen this page to see the verdicts when it is done)")


def confirmation_cost(app: AppConfig, input_tokens: int, output_tokens: int) -> str:
    """ ", about $0.0123", ", free (a local model)" or why there is no figure."""
    price = app.price
    if price is None:
        return " (this model has no listed price)"
    dollars = price.cost(input_tokens, output_tokens)
    return f", about ${dollars:,.4f}" if dollars else ", free (a local model)"


def start_confirmation(config: SurvivalConfig, winner: Trial, app: AppConfig) -> jobs.Job:
    conversation = keyed_settings(app.provider).with_(max_tokens=CONFIRM_REPLY_TOKENS)
    send, model_fn = bind_settings(conversation, maintenance_settings(app.provider))

    def work(job: jobs.Job) -> SurvivalResult:
        return confirm(
            config, winner, send=send, upkeep=Upkeep.using(model_fn), cancel=job.cancel_event
        )

    return job_board().submit(work, name="tune-confirm")


def confirmation_result(job: jobs.Job) -> None:
    if job.error:
        st.error(md("The confirmation failed: {}", job.error))
        return
    result: SurvivalResult = job.result
    recalled = sum(1 for r in result.rows if r.recall_state == "current")
    st.markdown(
        f"**Recalled by the model: {recalled}/{len(result.rows)}** probes "
        f"({result.provider_calls} calls, {result.maintenance_calls} upkeep calls)."
    )
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "N": r.probe_turn,
                    "fact": r.fact,
                    "in payload": r.payload_state,
                    "recalled": r.recall_state,
                    "model's answer": r.reply,
                }
                for r in result.rows
            ]
        ),
        hide_index=True,
        key="tune-confirm-rows",
    )


@st.cache_resource(max_entries=4, show_spinner="Reading the conversation…")
def evaluator_for(settings: TuneSettings) -> Evaluator:
    """The evaluator for the conversation settings (a long conversation takes a second to
    build; searches only read it)."""
    return settings.evaluator()


def start_search(settings: TuneSettings, evaluator: Evaluator, target: Target) -> None:
    """Submit the search as a background job and note what a confirmation needs."""

    def work(job: jobs.Job) -> dict:
        result = tune(
            evaluator,
            target,
            cancel=job.cancel_event,
            on_progress=job.set_progress,
            **settings.search_options(),
        )
        return result.as_dict()

    job = job_board().submit(work, name="tune")
    st.session_state.tune_error = None
    st.session_state.tune_job = job.id
    st.session_state.tune_result = None
    st.session_state.tune_added = None
    facts_config = evaluator.config if isinstance(evaluator, FactsEvaluator) else None
    st.session_state.tune_run = {
        "config": facts_config.to_dict() if facts_config else None,  # for a confirmation
        "strategies": list(settings.strategies),
        "time_limit": settings.time_limit_s,
    }
