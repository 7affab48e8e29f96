"""Token growth without a model: seed 000's simulation, made interactive.

User turns are counted with tiktoken, every reply is assumed to be a fixed length, and each
strategy is replayed by the memory core itself. The defaults give the seed's table exactly.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from engines.simulator import (
    MAX_TURNS,
    Price,
    SimulationError,
    default_prices,
    matches_seed,
    seed_rows,
)
from memory.errors import MemoryLabError
from memory.replay import growth_factor
from present.growth import projection_chart, seed_chart
from scenarios.filler import TranscriptError, parse_transcript
from ui import navigation
from ui.growth_form import default_settings, freeze, simulated
from ui.picker import every_strategy, strategy_picker
from ui.safe import md

navigation.page_config("Token growth · Memory Lab", "📈")

SOURCES = {
    "fincoach": "FinCoach's ten simulated turns (seed 000)",
    "filler": "The filler bank (225 everyday questions)",
    "custom": "My own turns (edit below or upload)",
}
options = every_strategy()
st.session_state.setdefault("growth_settings", default_settings())
settings: dict[str, Any] = st.session_state.growth_settings

st.title("Token growth")
st.caption(
    "No model is called: every user turn is counted with tiktoken (o200k_base) and every reply "
    "is assumed to be the same length, as in seed 000. Each strategy is replayed by the memory "
    "core; summaries are assumed to be a fixed length."
)

with st.sidebar, st.form("growth-settings", border=False):
    st.header("Simulation")
    source = st.radio(
        "User turns (cycled)",
        list(SOURCES),
        index=list(SOURCES).index(settings["source"]),
        format_func=SOURCES.get,
    )
    custom = st.text_area("Your turns, one a line (for 'My own turns')", settings["custom_turns"])
    upload = st.file_uploader("…or upload a transcript", type=["txt", "json", "csv"])
    turns = st.number_input("Turns", 1, MAX_TURNS, int(settings["turns"]), 1)
    reply_tokens = st.number_input(
        "Reply length (tokens)", 0, 4000, int(settings["reply_tokens"]), 10
    )
    st.header("Strategies to project")
    chosen = strategy_picker(
        options, settings["strategies"], key="growth-strategies", variants=settings["variants"]
    )
    summary_tokens = st.number_input(
        "Assumed summary length (tokens)", 1, 4000, int(settings["summary_tokens"]), 10
    )
    facts_tokens = st.number_input(
        "Assumed facts block (tokens, entity/hybrid)", 0, 4000, int(settings["facts_tokens"]), 10
    )
    overhead = st.checkbox(
        "Add chat-template overhead (3 tokens a message + 3)", bool(settings["overhead"])
    )
    c1, c2 = st.columns(2)
    applied = c1.form_submit_button("Apply", type="primary", width="stretch")
    reset = c2.form_submit_button("Seed defaults", width="stretch")

if reset:
    st.session_state.growth_settings = settings = default_settings()
elif applied:
    new = {
        "source": source,
        "custom_turns": custom,
        "turns": int(turns),
        "reply_tokens": int(reply_tokens),
        "strategies": list(chosen.keys),
        "variants": chosen.variants,
        "summary_tokens": int(summary_tokens),
        "facts_tokens": int(facts_tokens),
        "overhead": bool(overhead),
    }
    if upload is not None:
        try:
            loaded = parse_transcript(upload.getvalue().decode("utf-8"), name=upload.name)
            new["source"] = "custom"
            new["custom_turns"] = "\n".join(t.user.replace("\n", " ") for t in loaded)
        except (TranscriptError, UnicodeDecodeError) as exc:
            st.error(md("Could not read {}: {}", upload.name, exc))
    st.session_state.growth_settings = settings = new

try:
    with st.spinner("Replaying…"):
        sim = simulated(freeze(settings))
except (SimulationError, MemoryLabError, ValueError) as exc:
    st.error(md("Cannot simulate: {}", exc))
    st.stop()

# ---- the seed's view --------------------------------------------------------------------
labels = sim.labels
focus = st.selectbox("Strategy for the table and the seed's chart", labels, index=0)
rows = sim.rows[focus]
left, right = st.columns([3, 2], gap="large")
with left:
    name = sim.names.get(focus, focus)
    title = (
        f"Conversation buffer memory: token growth over {len(rows)} turns"
        if name == "full"
        else f"{focus}: token growth over {len(rows)} turns"
    )
    st.plotly_chart(seed_chart(rows, title=title), theme=None, key="seed-chart")
with right:
    if matches_seed(sim, focus):
        st.success("Matches seed 000's table exactly: 132-token system prompt, 5,611 sent, 6.55x.")
    seed = seed_rows(sim, focus)
    st.markdown(
        f"System prompt: **{sim.system_tokens} tokens** on every call · "
        f"turn {len(seed)} over turn 1: **{growth_factor(seed):.2f}x** · "
        f"**{seed[-1].sent_so_far:,}** tokens sent in all"
    )
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "Turn": r.turn,
                    "Msg tokens": r.message_tokens,
                    "Conv history": r.history_tokens,
                    "Prompt to API": r.prompt_tokens,
                    "Sent so far": r.sent_so_far,
                }
                for r in seed
            ]
        ),
        hide_index=True,
        height=min(420, 38 + 35 * len(seed)),
        key="seed-table",
        column_config={
            c: st.column_config.NumberColumn(format="localized")
            for c in ("Conv history", "Prompt to API", "Sent so far")
        },
    )

# ---- every strategy on one figure ---------------------------------------------------------
st.divider()
log_scale = st.toggle("Log scale (both axes)", value=sim.config.n_turns > 100)
st.plotly_chart(projection_chart(sim, log_scale=log_scale), theme=None, key="projection")
st.caption(
    "Full buffer: each request grows in a straight line, the total grows quadratically. A window "
    "plateaus. A summary buffer holds near its trigger, paying for summaries instead."
)

# ---- cost ---------------------------------------------------------------------------------
st.subheader("Cost of the whole conversation")
st.caption(
    "US dollars per million tokens, from the providers catalog (approximate list prices): "
    "edit them. Input = every prompt + upkeep calls' prompts; output = replies + summaries."
)
st.session_state.setdefault(
    "growth_prices",
    [
        {"model": p.model, "input $/M": p.input_per_m, "output $/M": p.output_per_m}
        for p in default_prices()
    ],
)
prices_df = st.data_editor(
    pd.DataFrame(st.session_state.growth_prices),
    num_rows="dynamic",
    hide_index=True,
    key="price-editor",
    column_config={
        "input $/M": st.column_config.NumberColumn(min_value=0.0, format="%.3f"),
        "output $/M": st.column_config.NumberColumn(min_value=0.0, format="%.3f"),
    },
)
prices = [
    Price(str(r["model"]), float(r["input $/M"]), float(r["output $/M"]))
    for r in prices_df.to_dict("records")
    if str(r.get("model") or "").strip()
    and r.get("input $/M") == r.get("input $/M")  # not NaN
    and r.get("output $/M") == r.get("output $/M")
]
cost = pd.DataFrame(sim.cost_table(prices))
st.dataframe(cost, hide_index=True, key="cost-table")

d1, d2, d3, _ = st.columns([1, 1, 1, 3])
d1.download_button("Rows (CSV)", sim.to_csv(), "token_growth.csv", "text/csv", width="stretch")
d2.download_button(
    "Costs (CSV)", cost.to_csv(index=False), "token_growth_costs.csv", "text/csv", width="stretch"
)
d3.download_button(
    "All (JSON)", sim.to_json(), "token_growth.json", "application/json", width="stretch"
)
