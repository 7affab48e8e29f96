"""Sweeps: a fact-survival (recall) grid through the providers' batch APIs, at half price.

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

from engines.survival import DEFAULT_PROBE_TURNS, SurvivalConfig, SurvivalResult, parse_turns
from engines.sweep import UPKEEP_MODES, SweepEstimate, estimate_sweep, prepare_sweep
from engines.sweep_run import (
    compare,
    failed_requests,
    open_sweep,
    progress,
    resubmit_failed,
    resume,
    start,
)
from memory.choices import StrategyChoice
from memory.registry import DEFAULT_LANES, REGISTRY
from present.survival import heatmaps, tokens_chart
from providers import ProviderError, preset
from storage.sweeps import SweepStore

st.set_page_config(page_title="Sweeps · Memory Lab", page_icon="📦", layout="wide")
BATCH_PRESETS = ("openai", "anthropic")
AUTO_POLL_S = 30.0


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
    c1, c2, c3 = st.columns(3)
    preset_name = c1.selectbox(
        "Provider", BATCH_PRESETS, format_func=lambda n: preset(n).label, key="sweep-preset"
    )
    chosen = preset(preset_name)
    model = c2.selectbox("Model", [m.name for m in chosen.models], key="sweep-model")
    max_tokens = c3.number_input("Reply cap (tokens)", 16, 4096, 96, key="sweep-max")
    base_url = st.text_input(
        "Endpoint URL (optional: another server speaking the same batch API)", key="sweep-url"
    )
    turns_text = st.text_input(
        "Probe turns N", ",".join(str(t) for t in DEFAULT_PROBE_TURNS), key="sweep-turns"
    )
    names = st.multiselect(
        "Strategies (defaults)", list(REGISTRY), list(DEFAULT_LANES), key="sweep-strategies"
    )
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
    est: SweepEstimate | None = None  # None when the settings cannot run
    try:
        config = SurvivalConfig(
            probe_turns=parse_turns(turns_text),
            strategies=tuple(StrategyChoice(n) for n in names),
        ).validate()
        overrides: dict = {"max_tokens": int(max_tokens), "api_key": key or None}
        if base_url.strip():
            overrides["base_url"] = base_url.strip()
        settings = chosen.settings(model, **overrides)
        est = estimate_sweep(config, settings, upkeep=upkeep)
    except (ValueError, ProviderError) as exc:
        st.error(str(exc))
        est = None
    if est is not None:
        st.markdown("**Before submitting**")
        st.code("\n".join(est.lines()), language=None, wrap_lines=True)
        confirm = st.checkbox(
            "I have read the estimate: submit these requests", key="sweep-confirm"
        )
        if st.button("Submit the sweep", type="primary", disabled=not confirm):
            try:
                settings.resolve_key()
                with st.spinner("Planning (and running interactive upkeep) …"):
                    plan = prepare_sweep(config, settings, upkeep=upkeep)
                    sweep_id = start(store, plan)
            except ProviderError as exc:
                st.error(str(exc))
            else:
                st.session_state["sweep-open"] = sweep_id
                st.success(f"Submitted: {len(plan.requests):,} requests (sweep {sweep_id[:8]})")

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
record, settings = open_sweep(store, sweep_id, api_key=key or None)
now = progress(store, sweep_id)
st.markdown(f"**{record.name}** · {record.provider} · {record.model} · _{record.status}_")
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
        st.warning(f"Could not poll the provider: {exc}")
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
            st.error(str(exc))
        else:
            st.rerun()

if now.result is not None:
    result = now.result
    st.divider()
    st.subheader(f"Results · {result.model}")
    st.caption(f"{len(result.rows)} probes · {now.requests} batch requests")
    st.plotly_chart(heatmaps(result), theme=None, key="sweep-heatmaps")
    st.plotly_chart(tokens_chart(result), theme=None, key="sweep-tokens")
    for note in result.notes:
        st.caption(f"Note: {note}")
    d1, d2, _ = st.columns([1, 1, 4])
    d1.download_button("Download CSV", result.to_csv(), "sweep.csv", "text/csv")
    d2.download_button("Download JSON", result.to_json(), "sweep.json", "application/json")

# ---- several models side by side --------------------------------------------------------
collected = [s for s in sweeps if s.has_result]
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
