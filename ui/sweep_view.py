"""The Sweeps page's parts: the cached dry runs and store, the saved-sweeps table, the
failed requests, the results of an open sweep and the side-by-side comparison. Streamlit
drawing over engines/sweep*.py; `sweep_rows` and `failed_rows` are plain data (tested).
Reads and writes the page's session-state key `sweep-typed-urls`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st

from engines.recall import RecallResult, default_settings
from engines.survival import SurvivalResult
from engines.sweep import SweepEstimate
from engines.sweep_recall import RecallGrid, dry_run, estimate_recall_sweep
from engines.sweep_run import compare, failed_requests, resubmit_failed
from present.recall import frontier_chart, table_rows
from present.survival import heatmaps, tokens_chart
from providers import ProviderError, ProviderSettings
from scenarios.longmem_world import generate
from storage.store import SweepStore
from ui.safe import md, plain

RECALL_SETTINGS = {s.sized_label: s for s in default_settings()}


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


def sweep_rows(sweeps: Sequence[Any]) -> list[dict[str, Any]]:
    """The saved sweeps as the table lists them."""
    return [
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


def failed_rows(failed: Sequence[Any]) -> list[dict[str, Any]]:
    """Requests that failed, expired or never ran, as the table lists them."""
    return [
        {"request": r.custom_id, "state": r.state, "attempts": r.attempts, "error": r.error or ""}
        for r in failed
    ]


def typed_again() -> None:
    """The endpoint URL field's callback: keep what was typed past the widget's last run."""
    url = (st.session_state.get("sweep-open-url") or "").strip()
    if url:
        st.session_state.setdefault("sweep-typed-urls", []).append(url)


def failed_panel(store: SweepStore, sweep_id: str, settings: Any) -> None:
    """The failed requests of a sweep and the button that resubmits them alone."""
    failed = failed_requests(store, sweep_id)
    if not failed:
        return
    st.warning(f"{len(failed)} request(s) failed, expired or never ran: resubmit them alone.")
    st.dataframe(pd.DataFrame(failed_rows(failed)), hide_index=True)
    if st.button("Resubmit the failed requests", key="sweep-resubmit"):
        try:
            resubmit_failed(store, sweep_id, settings)
        except ProviderError as exc:
            st.error(plain(exc))
        else:
            st.rerun()


def survival_results(result: SurvivalResult, requests: int) -> None:
    st.divider()
    st.subheader(md("Results · {}", result.model))
    st.caption(f"{len(result.rows)} probes · {requests} batch requests")
    st.plotly_chart(heatmaps(result), theme=None, key="sweep-heatmaps")
    st.plotly_chart(tokens_chart(result), theme=None, key="sweep-tokens")
    for note in result.notes:
        st.caption(md("Note: {}", note))
    d1, d2, _ = st.columns([1, 1, 4])
    d1.download_button("Download CSV", result.to_csv(), "sweep.csv", "text/csv")
    d2.download_button("Download JSON", result.to_json(), "sweep.json", "application/json")


def recall_results(recall: RecallResult, requests: int) -> None:
    st.divider()
    st.subheader(md("Results · {}", recall.model))
    st.caption(f"{len(recall.rows)} rows (setting x model) · {requests} batch requests")
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


def compare_section(store: SweepStore, sweeps: Sequence[Any]) -> None:
    """Collected survival sweeps side by side (one heat-map row per strategy and model)."""
    collected = [s for s in sweeps if s.has_result and s.kind == "survival"]
    if len(collected) < 2:
        return
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
