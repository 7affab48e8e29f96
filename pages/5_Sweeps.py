"""Sweeps: a fact-survival grid or the long-recall benchmark through the providers' batch
APIs, at half price, on one model or several (rows labelled by model).

Plan a grid, read the estimate (requests, tokens, cost at batch prices, how upkeep is
handled), confirm, submit. Everything is saved as it happens, so the page can be closed:
reopening it lists the sweep, polls its batches, and collects the results into the same
heat maps and exports as an interactive run. Failed requests are listed and can be
resubmitted alone.
"""

from __future__ import annotations

import time

import pandas as pd
import streamlit as st

from engines.survival import DEFAULT_PROBE_TURNS, SurvivalConfig, parse_turns
from engines.sweep import (
    UPKEEP_MODES,
    SweepError,
    check_models,
    estimate_sweep,
    prepare_sweep,
    total_lines,
)
from engines.sweep_recall import prepare_recall_sweeps
from engines.sweep_run import open_arms, progress, resume, start
from lanes.endpoint_policy import EndpointNotTyped
from memory.lane_spec import LaneSpec
from memory.registry import DEFAULT_LANES, REGISTRY
from providers import ProviderError, preset
from providers.catalog import batch_presets
from ui import navigation
from ui.safe import md, plain
from ui.sweep_view import (
    RECALL_SETTINGS,
    compare_section,
    failed_panel,
    recall_dry_run,
    recall_estimate,
    recall_results,
    survival_results,
    sweep_rows,
    sweep_store,
    typed_again,
)

navigation.page_config("Sweeps · Memory Lab", "📦")
BATCH_PRESETS = batch_presets()
AUTO_POLL_S = 30.0
GRIDS = {"survival": "Fact survival (facts x probe turns)", "recall": "Long-conversation recall"}


store = sweep_store()
st.title("Sweeps")
st.caption(
    "Survival and recall grids through the OpenAI Batch API or Anthropic Message Batches: "
    "asynchronous (up to 24 hours), half the price, separate rate limits. Close the page "
    "at any time: the sweep is saved and collected when you come back."
)

key = st.text_input(
    "API key (kept in this browser session only; else the provider's environment variable)",
    type="password",
    key="sweep-key",
)

# ---- a new sweep ------------------------------------------------------------------------
with st.expander("New sweep", expanded=not store.list_sweeps()):
    kind = st.radio("Grid", list(GRIDS), format_func=GRIDS.__getitem__, horizontal=True,
                    key="sweep-kind")  # fmt: skip
    c1, c2, c3 = st.columns(3)
    preset_name = c1.selectbox(
        "Provider", BATCH_PRESETS, format_func=lambda n: preset(n).label, key="sweep-preset"
    )
    chosen = preset(preset_name)
    model_names = [m.name for m in chosen.models]
    models = c2.multiselect("Models (one row per strategy and model)", model_names,
                            model_names[:1], key=f"sweep-models-{preset_name}")  # fmt: skip
    max_tokens = c3.number_input("Reply cap (tokens)", 16, 4096, 96, key="sweep-max")
    base_url = st.text_input(
        "Endpoint URL (optional: another server speaking the same batch API)", key="sweep-url"
    )
    if kind == "survival":
        turns_text = st.text_input(
            "Probe turns N", ",".join(str(t) for t in DEFAULT_PROBE_TURNS), key="sweep-turns"
        )
        names = st.multiselect(
            "Strategies (defaults)", list(REGISTRY), list(DEFAULT_LANES), key="sweep-strategies"
        )
    else:
        r1, r2 = st.columns(2)
        seed = int(r1.number_input("Conversation seed", 0, 10_000, 0, key="sweep-seed"))
        sessions = int(r2.number_input("Sessions", 6, 60, 24, key="sweep-sessions"))
        labels = st.multiselect("Strategy settings", list(RECALL_SETTINGS),
                                list(RECALL_SETTINGS), key="sweep-settings")  # fmt: skip
    upkeep = st.radio(
        "Upkeep (summaries, fact extraction)",
        UPKEEP_MODES,
        horizontal=True,
        format_func=lambda m: {
            "stand-in": "rule-based stand-ins (free)",
            "interactive": "the model, interactively before the batch (list prices)",
        }[m],
        key="sweep-upkeep",
    )
    estimates = []  # empty when the settings cannot run
    try:
        overrides: dict = {"max_tokens": int(max_tokens), "api_key": key or None}
        if base_url.strip():
            overrides["base_url"] = base_url.strip()
        arms = [chosen.settings(m, **overrides) for m in models]
        check_models(arms)
        if kind == "survival":
            config = SurvivalConfig(
                probe_turns=parse_turns(turns_text),
                strategies=tuple(LaneSpec(n) for n in names),
            ).validate()
            estimates = [estimate_sweep(config, a, upkeep=upkeep) for a in arms]
        else:
            if not labels:
                raise SweepError("choose at least one strategy setting")
            with st.spinner("Replaying the conversation through each setting (no model) …"):
                grid, dry = recall_dry_run(seed, sessions, tuple(labels))
                estimates = [recall_estimate(seed, sessions, tuple(labels), a.with_(api_key=None), upkeep)
                             for a in arms]  # fmt: skip
    except (ValueError, ProviderError) as exc:
        st.error(plain(exc))
    if estimates:
        st.markdown("**Before submitting**")
        st.code("\n".join(total_lines(estimates)), language=None, wrap_lines=True)
        confirm = st.checkbox(
            "I have read the estimate: submit these requests", key="sweep-confirm"
        )
        if st.button("Submit the sweep", type="primary", disabled=not confirm):
            try:
                for arm in arms:
                    arm.resolve_key()
                with st.spinner("Planning (and running interactive upkeep) …"):
                    if kind == "survival":
                        plans = [prepare_sweep(config, a, upkeep=upkeep) for a in arms]
                    else:
                        plans = prepare_recall_sweeps(grid, arms, upkeep=upkeep)
                    sweep_id = start(store, plans)
            except ProviderError as exc:
                st.error(plain(exc))
            else:
                st.session_state["sweep-open"] = sweep_id
                sent = sum(len(p.requests) for p in plans)
                st.success(f"Submitted: {sent:,} requests (sweep {sweep_id[:8]})")

# ---- saved sweeps -----------------------------------------------------------------------
sweeps = store.list_sweeps()
if not sweeps:
    st.info("No sweeps yet. Plan one above.")
    st.stop()

st.subheader("Saved sweeps")
st.dataframe(pd.DataFrame(sweep_rows(sweeps)), hide_index=True)
ids = [s.id for s in sweeps]
wanted = st.session_state.get("sweep-open")
sweep_id = st.selectbox(
    "Open sweep",
    ids,
    index=ids.index(wanted) if wanted in ids else 0,
    format_func=lambda i: next(f"{s.id[:8]} · {s.name}" for s in sweeps if s.id == i),
)


# a saved sweep never chooses its endpoint: a custom one is reached once typed in this session
typed_urls = [base_url.strip() or None, *st.session_state.get("sweep-typed-urls", [])]
try:
    record, settings = open_arms(store, sweep_id, api_key=key or None, typed_urls=typed_urls)
except EndpointNotTyped as exc:
    st.error(plain(exc))
    st.text_input("Endpoint URL of this sweep, typed again", key="sweep-open-url",
                  on_change=typed_again)  # fmt: skip
    st.stop()
except ValueError as exc:
    st.error(plain(exc))
    st.stop()
now = progress(store, sweep_id)
models_text = ", ".join(a.model for a in settings)
st.markdown(md("**{}** · {} · {} · _{}_", record.name, record.provider, models_text, record.status))
estimate_lines = record.plan.get("estimate", {})
if estimate_lines.get("upkeep_sentence"):
    st.caption(estimate_lines["upkeep_sentence"])

# An open sweep is polled when the page opens it, then at most every AUTO_POLL_S seconds
# (any click reruns the page), or at once with the button.
polled = st.session_state.setdefault("sweep-polled", {})
polling = not now.done or now.planned
due = time.monotonic() - polled.get(sweep_id, -AUTO_POLL_S) >= AUTO_POLL_S
clicked = polling and st.button("Poll and collect", type="primary", key="sweep-poll")
if polling and (due or clicked):
    try:
        now = resume(store, sweep_id, settings)
    except ProviderError as exc:
        st.warning(md("Could not poll the provider: {}", exc))
    else:
        polled[sweep_id] = time.monotonic()
        if now.done:
            st.rerun()
st.progress(now.succeeded / max(1, now.requests), text=now.line())

failed_panel(store, sweep_id, settings)
if now.result is not None:
    survival_results(now.result, now.requests)
if now.recall is not None:
    recall_results(now.recall, now.requests)
compare_section(store, sweeps)
