"""Fact survival: plant facts at turn 1, talk about other things, probe at turn N.

Two verdicts per fact, strategy and N: is the fact in the payload (deterministic), and did
the model recall it. The run happens in a background job; this page shows its progress,
can cancel it (the rows so far are kept), and draws the heat maps when it is done.

The settings as data live in ui/survival_form.py, the form, run and results in
ui/survival_view.py, the own-log import in ui/own_log.py, the engine in engines/survival/.
"""

from __future__ import annotations

import json
from typing import Any

import streamlit as st

from engines.survival import SurvivalConfig, SurvivalConfigError, facts_json
from memory.errors import MemoryLabError
from memory.lane_spec import LaneSpec
from providers import preset
from ui import navigation, strategy_sources
from ui.app_state import main_config
from ui.own_log import own_log_section
from ui.page_jobs import job_state
from ui.safe import md, plain
from ui.survival_form import (
    MAIN_MODEL,
    OWN,
    apply,
    build_config,
    default_settings,
    lane_choices,
    plan_line,
)
from ui.survival_view import cached_estimate, progress_panel, results, settings_form, start_run

navigation.page_config("Fact survival · Memory Lab", "🧪")

EMBEDDED_NOTE = (
    "**Small local model (SmolLM2-135M): in-payload is the fair test, recall is noisy.** "
    "It can miss a fact that is right in its prompt, and it invents confident answers when "
    "the fact is gone. Use a stronger model (main page sidebar) for a recall verdict that means "
    "something."
)

# ---- state -------------------------------------------------------------------------------
app = main_config()
main_lanes = [LaneSpec(lane.name, dict(lane.params)) for lane in app.lanes]
choices = {c.label: c for c in lane_choices(main_lanes)}
st.session_state.setdefault(
    "survival_settings",
    default_settings(main_lanes, parallel=not preset(app.provider.preset).family.app_server),
)
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
form = settings_form(settings, choices, app, running=running)
if form is not None:
    settings, errors, warnings = apply(settings, form)
    for message in errors:
        st.error(plain(message))
    for message in warnings:
        st.warning(plain(message))
    st.session_state.survival_settings = settings

# ---- the plan ----------------------------------------------------------------------------
config: SurvivalConfig | None
try:
    config = build_config(settings, choices)
    problem = None
except (SurvivalConfigError, MemoryLabError, ValueError) as exc:
    config, problem = None, str(exc)

with_model = settings["model"] == MAIN_MODEL
embedded = with_model and preset(app.provider.preset).family.app_server
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
    plan = plan_line(config, est, settings, embedded=embedded)
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


if running:
    progress_panel()

if st.session_state.survival_error:
    st.error(md("The run failed: {}", st.session_state.survival_error))

# ---- results -----------------------------------------------------------------------------
data = st.session_state.survival_result
if data:
    results(data)
