"""Composer: build a memory strategy from blocks with no code, preview it, use it.

Start from a built-in (the blocks it declares, memory/registry.py's `builtin_composition`) or a
JSON file; edit the blocks (kind, send order, budget, the settings of each kind), the
overall budget, the give-way order and the name. Every change is previewed at once on the
main page's conversation (or the FinCoach demo): the payload it would send now and its token
split by block, next to any strategies to compare. Problems are shown next to their field.
Then: Add as lane, Export JSON, Import JSON.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from memory.compose import Composition
from memory.errors import InvalidParameter
from memory.lane_spec import LaneSpec
from memory.registry import REGISTRY, builtin_composition
from storage.store import Store, StoreError
from ui import composer_form, composer_view, navigation, persistence
from ui.app_state import keyed_settings
from ui.composer_form import Draft, blocks_frame, check, give_way_options, where
from ui.composer_preview import conversation_of, preview
from ui.composer_view import load_draft
from ui.lane_handoff import add_as_lane, main_config
from ui.picker import by_name, strategy_picker
from ui.safe import md, plain

navigation.page_config("Composer · Memory Lab", "🧩")

START = "hybrid"


app = main_config()
saved_in: Store | None
try:
    saved_in = persistence.store()  # opening it registers the saved compositions
except StoreError as exc:
    saved_in = None
    st.warning(md("The database cannot be opened, so Save is off: {}", exc))
options = composer_form.start_options()
if "composer_loaded" not in st.session_state:
    load_draft(builtin_composition(START), origin=START)
loaded = Composition.from_dict(st.session_state.composer_loaded)
v = st.session_state.composer_version

st.title("Composer")
st.caption(
    "A memory strategy made of blocks: pinned turns, a running summary, a fact store, "
    "retrieved older turns, recent turns. Each block has its own token budget; the overall "
    "budget bounds the whole request, and when it is tight the blocks give way in the order "
    "you choose (pinned turns, the system prompt and the new message never do)."
)

# ---- where to start ------------------------------------------------------------------------
c1, c2, c3 = st.columns([3, 1, 3], vertical_alignment="bottom")
labels = list(options)
default = next((i for i, k in enumerate(labels) if k.startswith(f"{START} ")), 0)
start = c1.selectbox("Start from", labels, index=default, key="composer-start")
if c2.button("Start from this", width="stretch", key="composer-start-button"):
    origin, comp = options[start]
    load_draft(comp, f"Started from {start}.", origin)
    st.rerun()
c3.file_uploader(
    "Import JSON (a composition exported here)",
    type=["json"],
    key="composer-import",
    on_change=composer_view.import_file,
)
if st.session_state.get("composer_import_error"):
    st.error(plain(st.session_state.composer_import_error))
if st.session_state.get("composer_message"):
    st.success(plain(st.session_state.composer_message))

# ---- the composition --------------------------------------------------------------------
c1, c2, c3 = st.columns([2, 2, 1])
with c1:
    name = st.text_input(
        "Name (lowercase letters, digits, _)", loaded.name, key=f"composer-name-{v}"
    )
    name_problems = st.container()
title = c2.text_input("Title (shown on lanes)", loaded.title, key=f"composer-title-{v}")
with c3:
    budget = st.number_input(
        "Overall budget (tokens; 0: none)",
        0,
        1_000_000,
        loaded.budget or 0,
        50,
        key=f"composer-budget-{v}",
    )
    budget_problems = st.container()
st.markdown("**Blocks** (one row each, sent in `order`; a row uses only the columns of its kind)")
frame = st.data_editor(
    blocks_frame(loaded),
    num_rows="dynamic",
    hide_index=True,
    width="stretch",
    column_config=composer_view.BLOCK_COLUMNS,
    key=f"composer-blocks-{v}",
)
block_problems = st.container()
kinds = give_way_options(frame)
give_way = st.multiselect(
    "Give way first, in this order (the rest follow: recent, retrieved, summary, facts)",
    kinds,
    default=[k for k in loaded.give_way if k in kinds],
    key=f"composer-give-way-{v}",
)
give_way_problems = st.container()

draft = Draft(name, title, loaded.description, int(budget) or None, tuple(give_way), frame)
checked = check(draft)
composition = checked.composition

# ---- preview ----------------------------------------------------------------------------
st.subheader("Preview")
session: Any = st.session_state.get("session")
conversation = conversation_of(session)
compared = strategy_picker(
    by_name(),
    [o for o in [st.session_state.get("composer_origin")] if o in REGISTRY],
    key=f"composer-compare-{v}",
    label="Compare with",
    titles=True,
)
late: dict[str, list[str]] = {}
if composition is None:
    st.info("Fix the problems marked above to see the preview.")
else:
    settings = keyed_settings(app.provider)
    shown = preview(
        composition,
        conversation,
        settings,
        [LaneSpec(n) for n in compared.keys],
    )
    error = composer_view.preview_section(
        shown,
        source=conversation.source,
        window=app.context_window,
        reserve=int(settings.max_tokens or 0),
    )
    if error:
        late.setdefault(where(error), []).append(error)
        st.info("Fix the problems marked above to see the preview.")

for container, field in (
    (name_problems, "name"),
    (budget_problems, "budget"),
    (block_problems, "blocks"),
    (give_way_problems, "give_way"),
):
    with container:
        composer_view.problems(checked, field, late.get(field, ()))

# ---- use it -----------------------------------------------------------------------------
st.subheader("Use it")
usable = composition is not None and not late
b1, b2, b3, _ = st.columns([1, 1, 1, 2])
if b1.button("Add as lane", type="primary", disabled=not usable, key="composer-add-lane"):
    assert composition is not None
    try:
        registered = composer_view.register(composition)
    except InvalidParameter as exc:
        st.error(plain(exc))
    else:
        st.session_state.composer_added = f"{registered}. " + add_as_lane(
            LaneSpec(composition.name)
        )
if b2.button(
    "Save", disabled=not usable or saved_in is None, key="composer-save",
    help="Save it in the app's database: it is registered whenever the app starts, and the "
    "command line finds it by name.",
):  # fmt: skip
    assert composition is not None and saved_in is not None
    try:
        registered = composer_view.register(composition)
        saved_in.compositions.save(composition)
    except (InvalidParameter, StoreError) as exc:
        st.error(md("Not saved: {}", exc))
    else:
        st.session_state.composer_added = f"Saved {composition.name} in the database; {registered}."
b3.download_button(
    "Export JSON",
    composition.to_json() if composition is not None else "",
    f"{composition.name if composition else 'composition'}.json",
    "application/json",
    disabled=composition is None,
    key="composer-export",
)
if st.session_state.get("composer_added"):
    st.success(plain(st.session_state.composer_added))
    st.page_link(navigation.MAIN_PAGE, label="Open Compare strategies →")
