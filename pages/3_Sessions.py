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
from storage.store import SessionNotFound, Store, StoreError
from ui import navigation, persistence
from ui.app_state import main_config
from ui.picker import by_name, strategy_picker
from ui.replay_job import collect_replay, replay_progress, start_replay
from ui.safe import md, plain
from ui.session_view import FLASH, downloads, flash, go_main, label, list_rows, show_session
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
st.session_state.setdefault(FLASH, None)


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
if st.session_state[FLASH]:
    st.success(plain(st.session_state[FLASH]))
    st.session_state[FLASH] = None

saved_tab, import_tab = st.tabs(["Saved sessions", "Import a transcript"])


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
        st.dataframe(pd.DataFrame(list_rows(infos)), hide_index=True, width="stretch")
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
        downloads(store, chosen, stem)

        if st.session_state.sessions_open in by_id:
            st.divider()
            payloads = st.toggle("Show payloads", key=navigation.MODES["payloads"][1])
            try:
                saved = store.load(st.session_state.sessions_open, bodies=payloads)
            except SessionNotFound:
                st.session_state.sessions_open = None
            else:
                show_session(saved, payloads=payloads)


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
                        list(dict.fromkeys(lane.name for lane in config.lanes)),
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
                    start_replay(
                        store, transcript, strategies, mode, prompts[prompt_label], name, config
                    )
                    st.rerun()
    if st.session_state.sessions_job:
        replay_progress()
