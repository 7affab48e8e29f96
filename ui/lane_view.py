"""How one lane is drawn in its column: header, conversation, streamed reply, figures, payload."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from lanes.lane import ERROR, INCOMPLETE, OVERFLOW, Lane, LaneTurn, MaintenanceRecord
from present.lanes import LANE_LEGEND, lane_figure
from providers.catalog import Price
from ui.safe import md, plain


def turn_ranges(turns: Sequence[int]) -> str:
    """[1,2,3,5] -> '1–3, 5'; empty -> '—'."""
    if not turns:
        return "—"
    parts: list[str] = []
    start = prev = turns[0]
    for t in [*turns[1:], None]:
        if t is not None and t == prev + 1:
            prev = t
            continue
        parts.append(f"{start}" if start == prev else f"{start}–{prev}")
        if t is not None:
            start = prev = t
    return ", ".join(parts)


HEADER_HEIGHT = 200


def header(lane: Lane) -> None:
    params = lane.spec.label_values(lane.params)
    # one height for every lane's header, so descriptions of any length keep the boxes in line
    with st.container(height=HEADER_HEIGHT, border=False):
        st.markdown(md("#### {}", lane.title))
        st.caption(plain(lane.spec.description) + (md("  \n{}", params) if params else ""))


SHOWN_TURNS = 30


def conversation(lane: Lane, *, upto: int) -> None:
    """Earlier turns as this lane saw them (failed turns marked), collapsed; one markdown block,
    the latest SHOWN_TURNS turns (older ones are in the Sessions page and the exports)."""
    earlier = [r for r in lane.turns if r.turn < upto]
    if not earlier:
        return
    lines = []
    if len(earlier) > SHOWN_TURNS:
        lines.append(f"*… {len(earlier) - SHOWN_TURNS} older turns not shown here*")
    for r in earlier[-SHOWN_TURNS:]:
        lines.append(f"**You · {r.turn}:** {plain(r.user)}")
        if r.ok:
            lines.append(md("**{}:** ", lane.title) + plain(r.reply))
        else:
            lines.append(f":red[**turn {r.turn} {r.status}** — not in this lane's memory]")
    with st.expander(f"Conversation ({len(earlier)} earlier turns)", expanded=False):
        st.markdown("\n\n".join(lines))


def status_line(record: LaneTurn) -> None:
    if record.status == OVERFLOW:
        st.warning(md("Not sent: {}", record.error))
    elif record.status == ERROR:
        st.error(md("{}: {}", record.error_kind, record.error))
    elif record.status == INCOMPLETE:
        st.warning(
            md("Reply cut off ({}: {}); not kept in memory.", record.error_kind, record.error)
        )


def reply_box(text: str, box: DeltaGenerator) -> Callable[[str], None]:
    """The lane's fixed-height reply `box`, showing `text` as text (never as Markdown: a reply
    is untrusted); returns a function that appends streamed text."""
    slot = box.empty()
    slot.markdown(plain(text) or "…")
    shown = [text]

    def append(delta: str) -> None:
        shown[0] += delta
        slot.markdown(plain(shown[0]) + " ▌")

    return append


# below a lane that has answered while others still answer or keep their memory
DETAILS_LATER = "Figures, payload and chart when every lane has answered."


def figures(lane: Lane, record: LaneTurn, *, price: Price | None, window: int | None) -> None:
    """This turn's numbers, small enough for a narrow column."""
    billed = record.billed_input
    diff = f" (+{billed - record.counted})" if billed is not None else ""
    # short labels: six columns share a 1600-pixel screen
    rows = [
        ("counted", f"{record.counted:,}" + (" est." if record.estimate else "")),
        ("billed", f"{billed:,}{diff}" if billed is not None else "n/a"),
        *cache_rows(record),
        ("reply", f"{record.billed_output:,}" if record.billed_output is not None else "n/a"),
        ("upkeep", upkeep_cell(record)),
        ("messages", f"{record.n_messages}"),
    ]
    cost = record.cost(price)
    if cost is not None:
        rows.append(("cost", f"${cost:.5f}" if cost else "free"))
    if record.latency_s is not None:
        ttft = f" ({record.ttft_s:.1f})" if record.ttft_s is not None else ""
        rows.append(("secs", f"{record.latency_s:.1f}{ttft}"))
    table = [f"| turn {record.turn} | tokens |", "|:--|--:|", *(f"| {k} | {v} |" for k, v in rows)]
    st.markdown("\n".join(table))
    per_turn = " → ".join(str(r.n_messages) if r.counted else "–" for r in lane.turns)
    st.caption(f"messages per turn: {per_turn}")
    st.caption(
        "billed − counted: the provider's chat template · upkeep: summary/extraction calls · "
        "tokens · secs (to first token)"
    )


def upkeep_cell(record: LaneTurn) -> str:
    """Upkeep calls · tokens spent, with the calls that failed (and so cost nothing) named."""
    failed = sum(not m.ok for m in record.maintenance)
    mark = f" ({failed} failed)" if failed else ""
    return f"{len(record.maintenance)}{mark} · {record.maintenance_tokens:,}"


def payload(record: LaneTurn) -> None:
    """The exact body sent this turn, what the strategy kept/dropped, and its upkeep calls."""
    acc = record.account
    label = f"Payload · turn {record.turn}"
    with st.expander(label, expanded=False):
        st.markdown(
            f"kept verbatim: **{turn_ranges(acc.kept)}** · "
            f"dropped: **{turn_ranges(acc.dropped)}** · "
            f"summarised: **{turn_ranges(acc.summarised)}**"
            + (f" · retrieved: **{turn_ranges(acc.retrieved)}**" if acc.retrieved else "")
        )
        for note in acc.notes:
            st.caption(note)
        if record.shared:
            st.caption(plain(shared_note(record.shared)))
        if record.body is not None:
            st.code(
                json.dumps(record.body, indent=2, ensure_ascii=False),
                language="json",
                wrap_lines=True,
            )
        else:
            st.caption("nothing was sent this turn")
        for i, call in enumerate(record.maintenance, 1):
            outcome = "ok" if call.ok else f"failed: {call.error}"
            st.markdown(
                md(
                    "**upkeep {}: {}** — {} · in {:,} / out {:,} tokens",
                    i,
                    call.kind,
                    outcome,
                    call.input,
                    call.output,
                )
            )
            if call.shared:
                st.caption(plain(shared_note(call.shared)))
            extraction_notes(call)
            st.code(
                json.dumps(call.body, indent=2, ensure_ascii=False),
                language="json",
                wrap_lines=True,
            )
            if call.reply:
                st.caption(f"reply: {plain(call.reply[:400])}")


def facts_panel(lane: Lane, record: LaneTurn) -> None:
    """What a fact-keeping lane's store holds now, one fact a line, and what this turn's
    extraction did to it: values not stored (ungrounded) and values the rules filled in."""
    if not lane.spec.cls.uses_facts:
        return
    facts = lane.strategy.facts
    with st.expander(f"Facts held · {len(facts)}", expanded=True):
        if not facts:
            st.caption("none yet")
        for key, value in facts.items():
            shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            st.markdown(md("**{}**: {}", key, shown))
        for call in record.maintenance:
            extraction_notes(call)


def extraction_notes(call: MaintenanceRecord) -> None:
    """What an extraction did beside its reply: values not stored, values the rules filled."""
    if call.ungrounded:
        st.caption(plain(ungrounded_note(call.ungrounded)))
    if call.filled_by_rules:
        st.caption(plain(FILLED_NOTE + ", ".join(call.filled_by_rules)))


FILLED_NOTE = "Filled in by the rule extractor (stated in the turn, missing from the reply): "


def ungrounded_note(values: tuple[str, ...]) -> str:
    """Says which extracted values were not stored: nothing in their turn states them."""
    return (
        f"Not stored (ungrounded: the turn does not state {'it' if len(values) == 1 else 'them'}"
        f"): {', '.join(values)}"
    )


def shared_note(lanes: tuple[str, ...]) -> str:
    """Says that one call answered `lanes` (its sender first): identical requests sent once."""
    return (
        f"One call answered {', '.join(lanes)}: their requests were identical, so "
        f"{lanes[0]}'s went out once (the body below, as sent) and the others followed its "
        "reply. Each lane counts its tokens and cost as its own."
    )


def chart(lane: Lane, *, key: str, height: int = 280) -> None:
    """The lane's chart; the figure is rebuilt only when the lane's records change (the rerun
    that follows every turn would otherwise build each lane's figure a second time)."""
    cache: dict[str, tuple[tuple[Any, ...], Any]] = st.session_state.setdefault("lane_figures", {})
    version = (id(lane), len(lane.turns), id(lane.turns[-1]) if lane.turns else None, height)
    cached = cache.get(lane.name)
    if cached is None or cached[0] != version:
        cached = (version, lane_figure(lane.name, lane.turns, height=height))
        cache[lane.name] = cached
    st.plotly_chart(cached[1], width="stretch", key=key, config={"displayModeBar": False})
    st.caption(LANE_LEGEND)


def cache_rows(record: LaneTurn) -> list[tuple[str, str]]:
    """The prompt cache's share of the billed input: cached vs uncached (and written)."""
    if record.billed_input is None or not (record.cached_input or record.cache_write_input):
        return []
    cached, written = record.cached_input or 0, record.cache_write_input or 0
    rows = [("cached", f"{cached:,}"), ("uncached", f"{record.billed_input - cached - written:,}")]
    return rows + ([("cache write", f"{written:,}")] if written else [])


def gauge(lane: Lane, *, window: int | None, sample: str, price: Price | None) -> None:
    """How full the context window is, a warning past 80%, and what the next turn would cost."""
    st.markdown(md("**{}**", lane.title))
    sent = lane.turns[-1].counted_overhead if lane.turns else 0
    if window:
        share = min(1.0, sent / window)
        st.progress(share, text=f"{sent:,} / {window:,} tokens ({share:.0%})")
        if share >= 0.8:
            st.warning(f"{share:.0%} of the context window: the next turns may not fit")
    else:
        st.caption(f"{sent:,} tokens sent last turn (context window unknown for this model)")
    nxt = lane.next_turn_tokens(sample)
    if nxt is None:
        st.caption("next turn: a message like the last one would overflow the budget")
    else:
        cost = f" · ≈${price.cost(nxt, 0):.5f}" if price and price.input_per_m else ""
        st.caption(f"next turn ≈ {nxt:,} prompt tokens{cost}")
    if price is not None and (price.input_per_m or price.output_per_m) and lane.turns:
        spent = sum(r.cost(price) or 0.0 for r in lane.turns)
        st.caption(f"conversation so far ≈ ${spent:.4f}")
    elif price is not None and lane.turns:
        st.caption("local model: no cost per token")
