"""The Sessions page's saved-session views: the list's labels and table, one session read-only
(charts, summary table, conversation, payloads), its exports, and the way to the main page.
Draws with Streamlit; reads the store it is given."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from lanes.lane import lane_title
from memory.registry import REGISTRY
from present import export
from present.lanes import comparison_figure, cumulative_figure, lane_figure
from storage.store import SavedSession, SessionInfo, SessionNotFound, Store, StoreError
from ui import persistence
from ui.app_state import main_config
from ui.safe import md, plain

FLASH = "sessions_flash"  # a message shown once at the top of the page's next run


def flash(message: str) -> None:
    st.session_state[FLASH] = message


def when(info: SessionInfo) -> str:
    return info.updated.astimezone().strftime("%Y-%m-%d %H:%M")


def label(info: SessionInfo) -> str:
    mark = " · interrupted" if info.interrupted else ""
    return f"{info.name} · {when(info)} · {info.turns} turns{mark}"


def titles(names: tuple[str, ...]) -> str:
    """Lane labels as titles ('Summary buffer · gpt-4o-mini'); unknown ones as they are."""
    strategies = [n.split(" ", 1)[0] for n in names]
    return ", ".join(
        lane_title(REGISTRY[s].title, s, n) if s in REGISTRY else n
        for s, n in zip(strategies, names, strict=True)
    )


def list_rows(infos: list[SessionInfo]) -> list[dict[str, Any]]:
    """The saved-session list's table."""
    return [
        {
            "Name": i.name,
            "Updated": when(i),
            "Turns": i.turns,
            "Tokens": i.total_tokens,
            "Status": "interrupted" if i.interrupted else "complete",
            "Strategies": titles(i.strategies),
            "Source": i.source,
        }
        for i in infos
    ]


def show_session(saved: SavedSession, *, payloads: bool) -> None:
    info = saved.info
    names = saved.titles()
    price = export.price_of(saved)
    st.subheader(plain(saved.name))
    st.caption(
        md(
            "{} · {} turns · {} strategies · {:,} tokens · source: {} · id {}",
            when(info),
            info.turns,
            len(saved.strategies),
            info.total_tokens,
            info.source,
            saved.id,
        )
    )
    if saved.interrupted:
        st.warning(
            f"Interrupted turn(s): {', '.join(map(str, saved.interrupted))} — the app stopped "
            "before every lane answered. Continue the session to retry those lanes."
        )
    left, right = st.columns(2)
    left.plotly_chart(
        comparison_figure(saved.records, names), width="stretch", key=f"open-cmp-{saved.id}"
    )
    right.plotly_chart(
        cumulative_figure(saved.records, names), width="stretch", key=f"open-cum-{saved.id}"
    )
    summaries = export.lane_summaries(saved, price)
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "Strategy": s.title,
                    "Turns ok": s.turns_ok,
                    "Failed": s.turns_failed,
                    "Interrupted": s.turns_interrupted,
                    "Prompt tokens (counted)": s.prompt_counted,
                    "First prompt": s.first_prompt,
                    "Last prompt": s.last_prompt,
                    "Upkeep tokens": s.upkeep_tokens,
                    "All tokens": s.total_tokens,
                    "Cost (USD)": None if s.cost is None else round(s.cost, 5),
                }
                for s in summaries
            ]
        ),
        hide_index=True,
        width="stretch",
    )
    columns = st.columns(min(3, len(saved.strategies)))
    for i, name in enumerate(saved.strategies):
        with columns[i % len(columns)]:
            st.markdown(md("**{}**", names[name]))
            st.plotly_chart(
                lane_figure(name, saved.records[name], height=280),
                width="stretch",
                key=f"open-lane-{saved.id}-{name}",
                config={"displayModeBar": False},
            )
    heatmaps = export.survival_figures(saved)
    if heatmaps:
        st.subheader("Fact survival")
        for i, fig in enumerate(heatmaps):
            st.plotly_chart(fig, width="stretch", key=f"open-survival-{saved.id}-{i}", theme=None)
    st.subheader("Conversation")
    for turn, user in enumerate(saved.user_turns, start=1):
        mark = " (interrupted)" if turn in saved.interrupted else ""
        with st.expander(f"Turn {turn}{mark}: {plain(user[:80])}", expanded=turn == 1):
            st.markdown(f"**You:** {plain(user)}")
            for name in saved.strategies:
                r = saved.records[name][turn - 1]
                text = (
                    plain(r.reply)
                    if r.ok
                    else md(":red[{}: {} — {}]", r.status, r.error_kind, r.error or "")
                )
                st.markdown(md("**{}** · {:,} prompt tokens  \n", names[name], r.counted) + text)
                if payloads and r.body is not None:
                    st.json(r.body, expanded=False)


def downloads(store: Store, session_id: str, stem: str) -> None:
    """Exports, generated when clicked (a report embeds Plotly: ~5 MB)."""
    with_payloads = st.checkbox(
        "Include each turn's payloads in the HTML report", key=f"dl-payloads-{session_id}"
    )

    def load() -> SavedSession:
        return store.load(session_id, bodies=True)

    downloads = [
        (
            "HTML report",
            lambda: export.to_html(load(), payloads=with_payloads),
            "html",
            "text/html",
        ),
        ("Markdown summary", lambda: export.to_markdown(load()), "md", "text/markdown"),
        ("CSV (per turn)", lambda: export.to_csv(load()), "csv", "text/csv"),
        ("JSON (whole session)", lambda: export.to_json(load()), "json", "application/json"),
    ]
    for column, (label, make, suffix, mime) in zip(st.columns(4), downloads, strict=True):
        column.download_button(
            label, make, f"{stem}.{suffix}", mime, width="stretch", on_click="ignore"
        )


def go_main(session_id: str, *, present: bool) -> None:
    """Make a saved session the main page's conversation (continued or presented)."""
    try:
        session, config = persistence.continue_saved(session_id, main_config())
    except (SessionNotFound, StoreError, ValueError) as exc:
        st.error(md("Cannot continue this session: {}", exc))
        return
    persistence.open_in_main(session, config, present=present)
