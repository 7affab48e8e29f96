"""The Composer page's widgets: the blocks table, the problems next to their fields, the
live preview (payload and token split by block) and the registration behind "Add as lane".

The page (pages/7_Composer.py) keeps the composition being edited as plain data
(`Composition.to_dict()`) plus a version number that keys the widgets, so starting from a
built-in or importing a file redraws them with the new values.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import pandas as pd
import streamlit as st

from memory.compose import KINDS, POLICIES, Composition
from memory.errors import InvalidParameter
from memory.lane_spec import LaneSpec
from memory.ranking import RANKINGS
from memory.registry import (
    REGISTRY,
    builtin_composition,
    register_composition,
    unregister_composition,
)
from present.anatomy import comparison_anatomy_figure
from ui.composer_form import Checked
from ui.composer_preview import Shown
from ui.safe import md, plain

BLOCK_COLUMNS = {
    "order": st.column_config.NumberColumn(
        "order", min_value=1, step=1, width="small", help="Send order: lower first."
    ),
    "kind": st.column_config.SelectboxColumn("kind", options=list(KINDS), required=True),
    "budget": st.column_config.NumberColumn(
        "budget", min_value=0, step=10, help="Tokens this block may take (blank: no cap)."
    ),
    "count": st.column_config.NumberColumn(
        "recent: last N", min_value=0, step=1, help="recent: the last N turns (blank: by tokens)."
    ),
    "turns": st.column_config.TextColumn("pinned: turns", help="pinned: turn numbers, e.g. 1, 2"),
    "first": st.column_config.NumberColumn(
        "pinned: first N", min_value=0, step=1, help="pinned: the first N turns."
    ),
    "policy": st.column_config.SelectboxColumn(
        "summary: fold", options=list(POLICIES), help="every_turn, or threshold (needs a budget)"
    ),
    "trigger": st.column_config.NumberColumn(
        "summary: trigger", min_value=0.05, max_value=1.0, step=0.05
    ),
    "fold_to": st.column_config.NumberColumn(
        "summary: fold to", min_value=0.05, max_value=1.0, step=0.05
    ),
    "placement": st.column_config.SelectboxColumn("summary: where", options=["system", "message"]),
    "note": st.column_config.CheckboxColumn("summary: note"),
    "top_k": st.column_config.NumberColumn("retrieved: top k", min_value=0, step=1),
    "share": st.column_config.NumberColumn(
        "retrieved: share",
        min_value=0.0,
        max_value=0.9,
        step=0.05,
        help="retrieved: share of the overall budget",
    ),  # fmt: skip
    "neighbours": st.column_config.NumberColumn(
        "retrieved: neighbours", min_value=0.0, max_value=1.0, step=0.05
    ),
    "ranking": st.column_config.SelectboxColumn(
        "retrieved: ranking",
        options=list(RANKINGS),
        help="bridged: BM25 + names and numbers, relative time; bm25: plain",
    ),
}


def load_draft(comp: Composition, message: str | None = None, origin: str | None = None) -> None:
    """Make `comp` the composition the Composer page edits (its widgets are redrawn with
    it); the preview compares it with `origin`, the strategy it started from."""
    st.session_state.composer_origin = origin
    st.session_state.composer_loaded = comp.to_dict()
    st.session_state.composer_version = st.session_state.get("composer_version", 0) + 1
    st.session_state.composer_message = message


def as_blocks(choice: LaneSpec) -> Composition:
    """A strategy setting written as blocks: a composition at those values, or a built-in
    as its composition (InvalidParameter when it has no blocks form)."""
    comp = REGISTRY[choice.name].composition
    if comp is not None:
        return comp.with_values(choice.params) if choice.params else comp
    return builtin_composition(choice.name, choice.params)


def problems(checked: Checked, where: str, extra: Sequence[str] = ()) -> None:
    """The problems found for one field, drawn where the page calls this (next to it)."""
    for message in (*checked.at(where), *extra):
        st.error(plain(message))


def register(composition: Composition) -> str:
    """Register `composition` for lanes (or replace an earlier registration of the same
    name); InvalidParameter when the name is a built-in strategy's."""
    existing = REGISTRY.get(composition.name)
    if existing is not None and existing.composition is None:
        raise InvalidParameter(
            f"{composition.name!r} is a built-in strategy's name: give the composition its own"
        )
    if existing is not None and existing.composition == composition:
        return f"{composition.name} is registered"
    if existing is not None:
        unregister_composition(composition.name)
        register_composition(composition, color=existing.color)
        return f"{composition.name} is updated"
    register_composition(composition)
    return f"{composition.name} is registered"


def preview_section(
    shown: Sequence[Shown], *, source: str, window: int | None, reserve: int
) -> str | None:
    """The payload the composition would send at the latest turn and its token split by
    block, beside the compared strategies; returns the composition's own error, if any."""
    mine = shown[0]
    for other in shown[1:]:
        if other.error:
            st.caption(md("{} cannot run here: {}", other.title, other.error))
    if mine.record is None or mine.request is None:
        return mine.error
    turn = mine.record.turn
    st.caption(
        f"Replayed on {source}, no model: summaries and facts by rule-based stand-ins. "
        f"The request at turn {turn} (the latest message): "
        f"**{mine.record.counted:,} tokens** of content."
    )
    drawn = {s.key: [s.record] for s in shown if s.record is not None}
    titles = {s.key: s.title for s in shown}
    figure = comparison_anatomy_figure(drawn, titles, turn=turn, window=window, reserve=reserve)
    st.plotly_chart(figure, theme=None, key="composer-anatomy", config={"displayModeBar": False})
    left, right = st.columns([2, 3])
    with left:
        st.markdown("**Token split by block**")
        split = pd.DataFrame(
            [
                {"part": p.name, "tokens": p.tokens, "turns": ", ".join(map(str, p.turns))}
                for p in mine.record.account.parts
                if p.tokens
            ]
        )
        st.dataframe(split, hide_index=True, key="composer-split")
    with right:
        st.markdown("**The payload it would send now**")
        st.code(
            json.dumps(mine.record.body, indent=2, ensure_ascii=False),
            language="json",
            wrap_lines=True,
            height=420,
        )
    return None


def import_file() -> None:
    """The uploader's callback: a good file replaces the draft, a bad one changes nothing."""
    upload = st.session_state.get("composer-import")
    st.session_state.composer_import_error = None
    if upload is None:
        return
    try:
        comp = Composition.from_json(upload.getvalue().decode("utf-8"))
    except (InvalidParameter, UnicodeDecodeError) as exc:
        st.session_state.composer_import_error = (
            f"Could not import {upload.name}: {exc}. The composition being edited is unchanged."
        )
        return
    load_draft(comp, f"Imported {comp.name} from {upload.name}.")
