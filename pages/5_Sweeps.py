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

from engines.recall import RecallResult, default_settings
from engines.survival import DEFAULT_PROBE_TURNS, SurvivalConfig, SurvivalResult, parse_turns
from engines.sweep import (
    UPKEEP_MODES,
    SweepError,
    SweepEstimate,
    check_models,
    estimate_sweep,
    prepare_sweep,
    total_lines,
)
from engines.sweep_recall import (
    RecallGrid,
    dry_run,
    estimate_recall_sweep,
    prepare_recall_sweeps,
)
from engines.sweep_run import (
    compare,
    failed_requests,
    open_arms,
    progress,
    resubmit_failed,
    resume,
    start,
)
from lanes.endpoint_policy import EndpointNotTyped
from memory.choices import StrategyChoice
from memory.registry import DEFAULT_LANES, REGISTRY
from present.recall import frontier_chart, table_rows
from present.survival import heatmaps, tokens_chart
from providers import ProviderError, ProviderSettings, preset
from scenarios.longmem_world import generate
from storage.store import SweepStore
from ui import navigation
from ui.safe import md, plain

navigation.page_config("Sweeps · Memory Lab", "📦")
BATCH_PRESETS = ("openai", "anthropic")
AUTO_POLL_S = 30.0
GRIDS = {"survival": "Fact survival (facts x probe turns)", "recall": "Long-conversation recall"}
RECALL_SETTINGS = {s.label: s for s in default_settings()}


@st.cache_resource(max_entries=4)
def recall_dry_run(seed: int, sessions: int, labels: tuple[str, ...]):  # noqa: ANN201
    """The recall grid and its model-free dry run (replaying the conversation takes a while)."""
    grid = RecallGrid(generate(seed, sessions=sessions), tuple(RECALL_SETTINGS[x] for x in labels))
    return grid, dry_run(grid)


@st.cache_data(max_entries=32)
def recall_estimate(seed: int, sessions: int, labels: tuple[str, ...], settings: ProviderSettings,
                    upkeep: str) -> SweepEstimate:  # fmt: skip
    """One model's estimate (bodies built and hashed once per choice, not on every rerun);
    `settings` carries no key, so none is cached."""
    grid, dry = recall_dry_run(seed, sessions, labels)
    return estimate_recall_sweep(grid, settings, upkeep=upkeep, dry=dry)


@st.cache_resource
def sweep_store() -> SweepStore:
    """The sweeps tables in the app's database (one per process, shared by sessions)."""
    return SweepStore()


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
                strategies=tuple(StrategyChoice(n) for n in names),
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
st.dataframe(
    pd.DataFrame(
        [
            {
                "sweep": s.id[:8],
                "name": s.name,
                "started": s.created_at.strftime("%Y-%m-%d %H:%M"),
                "grid": s.kind,
                "model": f"{s.provider} · {s.model}",
                "status": s.status,
                "back": f"{s.succeeded}/{s.requests}",
                "failed": s.failed,
            }
            for s in sweeps
        ]
    ),
    hide_index=True,
)
ids = [s.id for s in sweeps]
wanted = st.session_state.get("sweep-open")
sweep_id = st.selectbox(
    "Open sweep",
    ids,
    index=ids.index(wanted) if wanted in ids else 0,
    format_func=lambda i: next(f"{s.id[:8]} · {s.name}" for s in sweeps if s.id == i),
)


def _typed_again() -> None:
    url = (st.session_state.get("sweep-open-url") or "").strip()
    if url:  # kept past this widget's last run
        st.session_state.setdefault("sweep-typed-urls", []).append(url)


# a saved sweep never chooses its endpoint: a custom one is reached once typed in this session
typed_urls = [base_url.strip() or None, *st.session_state.get("sweep-typed-urls", [])]
try:
    record, settings = open_arms(store, sweep_id, api_key=key or None, typed_urls=typed_urls)
except EndpointNotTyped as exc:
    st.error(plain(exc))
    st.text_input("Endpoint URL of this sweep, typed again", key="sweep-open-url",
                  on_change=_typed_again)  # fmt: skip
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

failed = failed_requests(store, sweep_id)
if failed:
    st.warning(f"{len(failed)} request(s) failed, expired or never ran: resubmit them alone.")
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "request": r.custom_id,
                    "state": r.state,
                    "attempts": r.attempts,
                    "error": r.error or "",
                }  # fmt: skip
                for r in failed
            ]
        ),
        hide_index=True,
    )
    if st.button("Resubmit the failed requests", key="sweep-resubmit"):
        try:
            resubmit_failed(store, sweep_id, settings)
        except ProviderError as exc:
            st.error(plain(exc))
        else:
            st.rerun()

if now.result is not None:
    result = now.result
    st.divider()
    st.subheader(md("Results · {}", result.model))
    st.caption(f"{len(result.rows)} probes · {now.requests} batch requests")
    st.plotly_chart(heatmaps(result), theme=None, key="sweep-heatmaps")
    st.plotly_chart(tokens_chart(result), theme=None, key="sweep-tokens")
    for note in result.notes:
        st.caption(md("Note: {}", note))
    d1, d2, _ = st.columns([1, 1, 4])
    d1.download_button("Download CSV", result.to_csv(), "sweep.csv", "text/csv")
    d2.download_button("Download JSON", result.to_json(), "sweep.json", "application/json")

if now.recall is not None:
    recall: RecallResult = now.recall
    st.divider()
    st.subheader(md("Results · {}", recall.model))
    st.caption(f"{len(recall.rows)} rows (setting x model) · {now.requests} batch requests")
    st.plotly_chart(frontier_chart(recall.rows), width="stretch", key="sweep-frontier")
    table = pd.DataFrame(table_rows(recall.rows, []))
    st.dataframe(table, hide_index=True, width="stretch")
    st.caption(
        "Evidence kept and answer in payload say what the request held; answered says "
        f"whether the model's reply held the answer. Full buffer: {recall.full_tokens:,} tokens."
    )
    for note in recall.notes:
        st.caption(md("Note: {}", note))
    st.download_button("Download CSV", table.to_csv(index=False), "recall_sweep.csv", "text/csv")

# ---- several models side by side --------------------------------------------------------
collected = [s for s in sweeps if s.has_result and s.kind == "survival"]
if len(collected) > 1:
    st.divider()
    st.subheader("Compare models")
    picked = st.multiselect(
        "Collected sweeps to put side by side (one heat-map row per strategy and model)",
        [s.id for s in collected],
        format_func=lambda i: next(
            f"{s.id[:8]} · {s.model} · {s.name}" for s in collected if s.id == i
        ),  # fmt: skip
        key="sweep-compare",
    )
    if len(picked) > 1:
        records = [store.sweep(i) for i in picked]
        both = compare([(r.model, SurvivalResult.from_dict(r.result)) for r in records if r.result])
        st.plotly_chart(heatmaps(both), theme=None, key="sweep-compare-heatmaps")
        st.download_button("Download CSV", both.to_csv(), "sweeps_compared.csv", "text/csv",
                           key="sweep-compare-csv")  # fmt: skip
