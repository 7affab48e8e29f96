"""Saved sessions: list, open read-only, continue, present, rename, delete, export; import a
transcript and replay it through any strategies.

Every conversation of the main page is saved turn by turn (storage/store.py). Opening a session
here reads it; continuing or presenting it makes it this browser session's conversation on
the main page. Nothing on this page is shared between browser sessions except the store.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from engines import transcripts
from lanes import jobs
from lanes.lane import lane_title
from memory.registry import REGISTRY
from present import export
from present.lanes import comparison_figure, cumulative_figure, lane_figure
from storage.store import SavedSession, SessionInfo, SessionNotFound, Store, StoreError
from ui import navigation, persistence
from ui.app_state import AppConfig, LaneChoice, keyed_settings, maintenance_settings
from ui.page_jobs import job_board, take_finished
from ui.picker import by_name, strategy_picker
from ui.safe import md, plain
from ui.transcript_picker import ACCEPTED, FILE_TYPES, pick_conversation

navigation.page_config("Sessions · Memory Lab", "🗂️")

MODES = {
    transcripts.RECORDED: "Keep the recorded replies (no model calls except upkeep)",
    transcripts.FRESH: "Send the user turns again (fresh replies from the model)",
}

st.session_state.setdefault("sessions_selected", None)
st.session_state.setdefault("sessions_open", None)
st.session_state.setdefault("sessions_confirm_delete", None)
st.session_state.setdefault("sessions_job", None)
st.session_state.setdefault("sessions_flash", None)


def main_config() -> AppConfig:
    config = st.session_state.get("config")
    return config if isinstance(config, AppConfig) else AppConfig.default()


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


def flash(message: str) -> None:
    st.session_state.sessions_flash = message


# ---- header ------------------------------------------------------------------------------
st.title("Saved sessions")
try:
    store: Store = persistence.store()
except StoreError as exc:
    st.error(md("The session store cannot be opened: {}", exc))
    st.stop()
st.caption(
    md(
        "Every conversation on the main page is saved as each turn completes · store: {}",
        store.display_url,
    )
)
if st.session_state.sessions_flash:
    st.success(plain(st.session_state.sessions_flash))
    st.session_state.sessions_flash = None

saved_tab, import_tab = st.tabs(["Saved sessions", "Import a transcript"])


# ---- one session, read-only ----------------------------------------------------------------
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


def downloads(session_id: str, stem: str) -> None:
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
    try:
        session, config = persistence.continue_saved(session_id, main_config())
    except (SessionNotFound, StoreError, ValueError) as exc:
        st.error(md("Cannot continue this session: {}", exc))
        return
    persistence.open_in_main(session, config, present=present)


# ---- the list ------------------------------------------------------------------------------
with saved_tab:
    try:
        infos = store.list()
    except StoreError as exc:  # a damaged database file: say so, and what to do
        st.error(plain(exc))
        st.stop()
    if not infos:
        st.info(
            "No saved sessions yet. Send a message on the main page (every turn is saved as it "
            "completes), or import a transcript in the next tab."
        )
    else:
        st.dataframe(
            pd.DataFrame(
                [
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
            ),
            hide_index=True,
            width="stretch",
        )
        by_id = {i.id: i for i in infos}
        ids = list(by_id)
        current = st.session_state.sessions_selected
        chosen = st.selectbox(
            "Session",
            ids,
            index=ids.index(current) if current in by_id else 0,
            format_func=lambda i: label(by_id[i]),
        )
        if chosen != current:
            st.session_state.sessions_selected = chosen
            st.session_state.sessions_confirm_delete = None
        info = by_id[chosen]

        b1, b2, b3 = st.columns(3)
        if b1.button("Open (read-only)", width="stretch", type="primary"):
            st.session_state.sessions_open = chosen
        if b2.button("Continue on the main page", width="stretch"):
            go_main(chosen, present=False)
        if b3.button("Present (presentation mode)", width="stretch"):
            go_main(chosen, present=True)

        with st.expander("Rename or delete"):
            new_name = st.text_input("Name", info.name, key=f"rename-{chosen}")
            r1, r2 = st.columns(2)
            if r1.button("Rename", width="stretch"):
                try:
                    store.rename(chosen, new_name)
                    flash(f"Renamed to “{' '.join(new_name.split())}”.")
                    st.rerun()
                except (ValueError, SessionNotFound) as exc:
                    st.error(plain(exc))
            if r2.button("Delete…", width="stretch"):
                st.session_state.sessions_confirm_delete = chosen
            if st.session_state.sessions_confirm_delete == chosen:
                st.warning(
                    f"Delete “{plain(info.name)}” and its {info.turns} turns? This cannot be undone."
                )
                y, n = st.columns(2)
                if y.button("Yes, delete it", type="primary", width="stretch"):
                    store.delete(chosen)
                    st.session_state.sessions_confirm_delete = None
                    st.session_state.sessions_selected = None
                    if st.session_state.sessions_open == chosen:
                        st.session_state.sessions_open = None
                    flash(f"Deleted “{info.name}”.")
                    st.rerun()
                if n.button("Cancel", width="stretch"):
                    st.session_state.sessions_confirm_delete = None
                    st.rerun()

        survival = st.session_state.get("survival_result")
        if survival or info.has_survival:
            with st.expander("Fact-survival run"):
                if survival and st.button("Attach this browser session's fact-survival run"):
                    store.attach_survival(chosen, survival)
                    flash("Fact-survival run attached: it appears in the report.")
                    st.rerun()
                if info.has_survival and st.button("Remove the attached run"):
                    store.attach_survival(chosen, None)
                    st.rerun()

        st.markdown("**Export**")
        stem = f"memory-lab-{chosen}"
        downloads(chosen, stem)

        if st.session_state.sessions_open in by_id:
            st.divider()
            payloads = st.toggle("Show payloads", key=navigation.MODES["payloads"][1])
            try:
                saved = store.load(st.session_state.sessions_open, bodies=payloads)
            except SessionNotFound:
                st.session_state.sessions_open = None
            else:
                show_session(saved, payloads=payloads)


# ---- import and replay --------------------------------------------------------------------
def start_replay(
    transcript: transcripts.Transcript,
    strategies: list[str],
    mode: str,
    system_prompt: str,
    name: str,
    config: AppConfig,
) -> None:
    provider = keyed_settings(config.provider)
    maintenance = maintenance_settings(config.provider)
    # each picked strategy's lanes on the main page (their own models too), else its defaults
    chosen = [
        lane
        for s in strategies
        for lane in [x for x in config.lanes if x.strategy == s]
        or [LaneChoice(s, REGISTRY[s].defaults())]
    ]
    run = config.replace(system_prompt=system_prompt, lanes=tuple(chosen))
    lanes = persistence.lane_specs(run)
    app = persistence.app_settings(run)

    def work(job: jobs.Job) -> str:
        session = transcripts.replay(
            transcript,
            lanes,
            provider=provider,
            maintenance=maintenance,
            mode=mode,
            system_prompt=system_prompt,
            name=name,
            on_start=lambda s: store.track(s, app=app, source=f"import · {mode}"),
            on_turn=lambda done, total: job.set_progress((done, total)),
            cancelled=job.cancel_event.is_set,
        )
        return session.id

    job = job_board().submit(work, name="replay")
    st.session_state.sessions_job = job.id


@st.fragment(run_every=1.0)
def replay_progress() -> None:
    job = job_board().get(st.session_state.sessions_job)
    if job is None or job.done:
        st.rerun()
        return
    done, total = job.progress or (0, 1)
    st.progress(
        done / max(1, total), text=f"Replayed {done} of {total} turns · {job.elapsed:.0f} s"
    )
    if st.button("■ Stop (keep the turns so far)", disabled=job.cancel_event.is_set()):
        job.cancel()


def collect_replay() -> None:
    finished = take_finished("sessions_job", lost="it was lost (the app restarted): run it again")
    if finished is None:
        return
    if finished.error:
        st.error(md("The replay failed: {}", finished.error))
    elif finished.result:
        st.session_state.sessions_selected = finished.result
        st.session_state.sessions_open = finished.result
        flash(
            "Replay saved: it is selected in the Saved sessions tab (open it, continue it, "
            "or export it)."
        )
        st.rerun()


with import_tab:
    st.markdown(
        "Bring a conversation from your own product and see what each strategy would have "
        "sent. Accepted: " + ACCEPTED + ". A file of many conversations is a list to pick "
        "from."
    )
    upload = st.file_uploader("Transcript file", type=FILE_TYPES)
    pasted = st.text_area("…or paste it here", height=140, key="import_text")
    raw: str | bytes | None = upload.getvalue() if upload is not None else (pasted or None)
    source_name = upload.name if upload is not None else ""
    collect_replay()
    if raw:
        transcript = pick_conversation(raw, source_name, key="import")
        if transcript is not None:
            st.success(md("Read {}.", transcript.describe()))
            if transcript.title:
                st.caption(md("Conversation {}: {} · {}", transcript.number, transcript.title,
                              transcript.created[:10] or "no date"))  # fmt: skip
            for note in transcript.notes:
                st.caption(plain(note))
            if transcript.saved is not None and st.button(
                "Restore this export as a saved session", type="primary"
            ):
                new_id = store.save(transcript.saved, source="import")
                st.session_state.sessions_selected = new_id
                flash(f"Restored as a saved session ({new_id}).")
                st.rerun()
            config = main_config()
            running = bool(st.session_state.sessions_job)
            with st.form("replay"):
                st.markdown("**Replay it**")
                strategies = list(
                    strategy_picker(
                        by_name(),
                        list(dict.fromkeys(lane.strategy for lane in config.lanes)),
                        key="replay-strategies",
                        titles=True,
                    ).keys
                )
                mode = st.radio("Replies", list(MODES), format_func=MODES.get)
                prompts: dict[str, str] = {}
                if transcript.system:
                    prompts["The transcript's own system prompt"] = transcript.system
                prompts["The main page's system prompt"] = config.system_prompt
                prompt_label = st.radio("System prompt", list(prompts))
                base = transcript.title or (
                    source_name.rsplit(".", 1)[0] if source_name else "pasted transcript"
                )
                name = st.text_input("Name of the replayed session", f"Replay of {base}")
                st.caption(
                    md("Model: {} ", config.provider_caption())
                    + "(change it in the main page's sidebar). Strategies use the main page's "
                    "lanes: their parameters and own models."
                )
                go = st.form_submit_button("▶ Replay", type="primary", disabled=running)
            if go:
                if not strategies:
                    st.error("Pick at least one strategy.")
                else:
                    start_replay(transcript, strategies, mode, prompts[prompt_label], name, config)
                    st.rerun()
    if st.session_state.sessions_job:
        replay_progress()
