"""The survival lab's "probe facts from your own log": import a conversation, see the facts
the user stated in it (engines/survival/suggest.py, rule-based), tick the ones to test.

Returns the page's new settings when the user asks to test them (the conversation is then
the filler, played in place); every text from the file is drawn through ui/safe.py.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from engines.survival import Fact, default_probe_turns, suggest_facts
from ui.safe import md
from ui.survival_form import OWN, suggestion_rows, ticked_facts
from ui.transcript_picker import FILE_TYPES, pick_conversation


def own_log_section(settings: dict[str, Any], *, running: bool) -> dict[str, Any] | None:
    """The expander; the settings to apply when "Test the ticked facts" is pressed."""
    with st.expander(
        "Probe facts from your own log",
        expanded=settings["filler"] == OWN or bool(st.session_state.get("own_log_text")),
    ):
        st.caption(
            "Import a conversation (any format the Sessions page imports). The lab proposes the "
            "facts the user stated in it — names, amounts, dates, numbers, preferences, found by "
            "the same rule-based matcher as the stand-in extractor, not a model — with the turn "
            "each was said at. Tick the ones to test: your conversation is then played as it was, "
            "and each fact is probed at later turns of it."
        )
        own_upload = st.file_uploader("Your conversation", type=FILE_TYPES, key="own-log-upload")
        own_pasted = st.text_area("…or paste it here", height=100, key="own_log_text")
        own_raw: str | bytes | None = (
            own_upload.getvalue() if own_upload is not None else (own_pasted or None)
        )
        own_name = own_upload.name if own_upload is not None else ""
        log = pick_conversation(own_raw, own_name, key="own-log") if own_raw else None
        if log is not None:
            found = [s.to_dict() for s in suggest_facts(log)]
            st.markdown(
                md(
                    "{} · **{} facts** the user stated (rule-based, no model).",
                    log.describe(),
                    len(found),
                )
            )
            if not found:
                st.info(
                    "No name, amount, date, number or preference was found in the user's turns: "
                    "write the facts in the table below (their turn and expected answer)."
                )
            else:
                suggested = st.data_editor(
                    suggestion_rows(found, [f["key"] for f in found]),
                    hide_index=True,
                    key="own-log-facts",
                    disabled=["turn", "kind", "answer", "what the user said", "key"],
                    column_config={
                        "test": st.column_config.CheckboxColumn("test", width="small"),
                        "turn": st.column_config.NumberColumn("said at turn", width="small"),
                        "kind": st.column_config.TextColumn("kind", width="small"),
                        "answer": st.column_config.TextColumn("expected answer", width="medium"),
                        "probe": st.column_config.TextColumn(
                            "probe question (editable)", width="large"
                        ),
                        "what the user said": st.column_config.TextColumn(width="large"),
                        "key": None,
                    },
                )
                ticked = ticked_facts(suggested, found)
                own_turns = default_probe_turns(
                    len(log.turns), [Fact.from_dict(f) for f in ticked] or ()
                )
                st.caption(
                    f"{len(ticked)} of {len(found)} ticked · probed at N = "
                    f"{', '.join(map(str, own_turns))} (spread over the {len(log.turns)} turns; "
                    "change them in the settings below)"
                )
                if st.button(
                    "Test the ticked facts on this conversation",
                    type="primary",
                    disabled=running or not ticked,
                ):
                    return {
                        **settings,
                        "facts": ticked,
                        "use_facts": [f["key"] for f in ticked],
                        "filler": OWN,
                        "filler_turns": [{"user": u, "reply": r} for u, r in log.turns],
                        "filler_name": log.title or own_name or "the pasted conversation",
                        "probe_turns": ", ".join(map(str, own_turns)),
                        "system_prompt": log.system or settings["system_prompt"],
                    }
                    st.rerun()

    return None
