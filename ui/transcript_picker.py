"""A transcript file on a page: one conversation is read at once; a file of many (a ChatGPT or
Claude.ai export) is a list to pick from — title, date, turns — with a search box.

Used by the Sessions import and the survival lab's "your own log". The listing streams the
file (scenarios/transcripts/ keeps no conversation's text while listing) and is cached by
the file's bytes; every title, note and error drawn goes through ui/safe.py.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from engines import transcripts
from ui.safe import md, plain

FILE_TYPES = ["json", "jsonl", "txt", "md"]
ACCEPTED = (
    "OpenAI or Anthropic messages JSON, `User:`/`Assistant:` text, a ChatGPT or Claude.ai data "
    "export (`conversations.json`), ShareGPT, OpenAI chat JSONL or Batch input, a LangChain "
    "`messages_to_dict` dump, LangSmith runs, OpenTelemetry GenAI spans, a Memory Lab export"
)


@st.cache_data(show_spinner=False, max_entries=8)
def listing(raw: str | bytes, name: str) -> list[transcripts.Conversation]:
    """The file's pick list (TranscriptError if the file cannot be read at all)."""
    return transcripts.list_conversations(raw, name=name)


@st.cache_data(show_spinner=False, max_entries=8)
def read(raw: str | bytes, name: str, number: int | None) -> transcripts.Transcript:
    """One conversation of the file (`number` from 1; None: the file holds one)."""
    return transcripts.parse(raw, name=name, conversation=number)


def when(created: str) -> str:
    return created[:16].replace("T", " ") if created else "-"


def choice_label(c: transcripts.Conversation) -> str:
    """'#2 · Trip to Goa · 2024-06-02 · 3 turns' ('1 turn') (a selectbox option: shown as text)."""
    title = c.title or "(untitled)"
    if len(title) > 60:
        title = title[:59] + "…"
    turns = f"{c.turns} turn" + ("" if c.turns == 1 else "s")
    return f"#{c.number} · {title} · {when(c.created)[:10]} · {turns}"


def pick_conversation(raw: str | bytes, name: str, *, key: str) -> transcripts.Transcript | None:
    """The conversation to use from an uploaded or pasted file, or None (the reason shown)."""
    try:
        found = listing(raw, name)
    except transcripts.TranscriptError as exc:
        st.error(md("Cannot import this file — {}", exc))
        return None
    number: int | None = None
    if len(found) > 1:
        st.markdown(
            md("**{}** holds **{} conversations**: pick one.", name or "The file", len(found))
        )
        search = st.text_input(
            "Search titles and ids", key=f"{key}-search", placeholder="e.g. budget"
        )
        needle = search.strip().casefold()
        shown = [
            c
            for c in found
            if not needle or needle in c.title.casefold() or needle in c.id.casefold()
        ]
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "#": c.number,
                        "title": c.title or "(untitled)",
                        "date": when(c.created),
                        "turns": c.turns,
                        "skipped parts": c.skipped,
                        "note": f"cannot be read: {c.error}" if c.error else "",
                    }
                    for c in shown
                ],
                columns=["#", "title", "date", "turns", "skipped parts", "note"],
            ),
            hide_index=True,
            width="stretch",
            height=min(38 + 35 * max(1, len(shown)), 320),
            key=f"{key}-list",
        )
        readable = [c for c in shown if not c.error]
        if not readable:
            st.info(md("No conversation matches {}.", search) if needle else "None can be read.")
            return None
        by_number = {c.number: c for c in readable}
        number = st.selectbox(
            "Conversation",
            list(by_number),
            format_func=lambda n: choice_label(by_number[n]),
            key=f"{key}-pick",
        )
    try:
        return read(raw, name, number)
    except transcripts.TranscriptError as exc:
        st.error(md("Cannot import this conversation — {}", exc))
        return None


def describe(t: transcripts.Transcript) -> str:
    """A safe one-line description: its title (if any) and what was read."""
    title = f"“{t.title}” · " if t.title else ""
    return plain(title + t.describe())
