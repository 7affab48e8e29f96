"""Context anatomy figures: one trace per part, values straight from the core's account."""

from __future__ import annotations

import json

import pytest

from lanes.lane import LaneTurn
from lanes.session import Session
from memory.lane_spec import LaneSpec
from memory.registry import REGISTRY
from memory.types import PARTS, Completion, Request
from present import export
from present.anatomy import (
    FREE_LABEL,
    PART_COLORS,
    PART_LABELS,
    RESERVE_LABEL,
    UPKEEP_LABEL,
    anatomy_grid_figure,
    anatomy_of,
    comparison_anatomy_figure,
    lane_anatomy_figure,
    turn_warnings,
)
from providers.fake import FakeTransport
from scenarios import fincoach
from storage.store import SavedSession
from tests.storage.store_support import openai_settings

LABELS = [PART_LABELS[p] for p in PARTS]


class FactsTransport(FakeTransport):
    """Upkeep calls that do something: the extractor sets a fact, the summariser summarises."""

    def as_model_fn(self, settings):
        def model(request: Request) -> Completion:
            if "JSON" in request.system:
                return Completion('{"set": {"name": "Chiru", "salary": "120000"}, "delete": []}')
            return Completion("Chiru earns 1,20,000 a month and wants to save for a house.")

        return model


@pytest.fixture(scope="module")
def session() -> Session:
    """Every registered strategy; the full buffer's second turn fails (a gap in its memory)."""
    transport = FactsTransport(
        fail_when=lambda r: r.account.strategy == "full" and r.messages[-1].content == "second",
        reply_fn=lambda r: "A reply of a few words, to give the history some weight. " * 3,
    )
    lanes = [
        LaneSpec(n, {"budget": 300} if "budget" in REGISTRY[n].defaults() else {}) for n in REGISTRY
    ]
    s = Session(
        system_prompt=fincoach.SYSTEM_PROMPT,
        lanes=lanes,
        provider=openai_settings().with_(max_tokens=150),
        transport=transport,
    )
    for text in ["I'm Chiru, salary 1,20,000", "second", *fincoach.DEMO_TURNS[1:], "and my rent?"]:
        s.run_turn(text)
    return s


def titles(session):
    return {n: lane.title for n, lane in session.lanes.items()}


def traces(fig, name):
    return [t for t in fig.data if t.name == name]


def test_the_comparison_has_one_trace_per_part_and_the_bars_add_up(session):
    records = session.records()
    turn = session.turn
    fig = comparison_anatomy_figure(records, titles(session), turn=turn, window=2000, reserve=150)
    for label in LABELS:
        assert len(traces(fig, label)) == 1, label
    for label in (RESERVE_LABEL, FREE_LABEL, UPKEEP_LABEL):
        assert len(traces(fig, label)) == 1, label
    for part, label in zip(PARTS, LABELS, strict=True):
        assert traces(fig, label)[0].marker.color == PART_COLORS[part]
    for i, (name, recs) in enumerate(records.items()):
        record = recs[-1]
        assert record.turn == turn and record.ok
        assert list(traces(fig, LABELS[0])[0].y)[i] == titles(session)[name]
        total = sum(traces(fig, label)[0].x[i] for label in LABELS)
        assert total == record.counted_overhead  # the parts are the request, to the token
        assert total - traces(fig, PART_LABELS["framing"])[0].x[i] == record.counted
        assert traces(fig, RESERVE_LABEL)[0].x[i] == 150
        assert traces(fig, FREE_LABEL)[0].x[i] == 2000 - record.counted_overhead - 150
        assert traces(fig, UPKEEP_LABEL)[0].x[i] == record.maintenance_tokens


def test_hovering_a_part_names_the_turns_it_holds_in_conversation_numbers(session):
    records = session.records()
    full = records["full"]
    assert full[1].status != "ok"  # turn 2 failed for the full buffer: not in its memory
    fig = comparison_anatomy_figure(
        {"full": full}, titles(session), turn=session.turn, window=None, reserve=0
    )
    recent = traces(fig, PART_LABELS["recent"])[0].hovertext[0]
    kept = [t for t in range(1, session.turn) if t != 2]
    assert f"turns 1, 3–{session.turn - 1}" in recent and kept == list(full[-1].account.kept)
    summary_lane = records["summary"][-1]
    fig = comparison_anatomy_figure(
        {"summary": records["summary"]}, titles(session), turn=session.turn, window=None, reserve=0
    )
    hover = traces(fig, PART_LABELS["summary"])[0].hovertext[0]
    assert f"summarises turns 1–{session.turn - 1}" in hover
    assert summary_lane.account.summarised == tuple(range(1, session.turn))
    retrieval = records["retrieval"][-1]
    parts = {p.name: p for p in retrieval.account.parts}
    assert set(parts["retrieved"].turns) == set(retrieval.account.retrieved)
    facts = records["entity"][-1]
    fig = comparison_anatomy_figure(
        {"entity": records["entity"]}, titles(session), turn=session.turn, window=None, reserve=0
    )
    assert "name, salary" in traces(fig, PART_LABELS["facts"])[0].hovertext[0]
    # turn 1 states both; later turns, where the fake reply holds nothing grounded, add the
    # facts the rules read in them
    assert {"name": "Chiru", "salary": "120000"}.items() <= facts.account.facts.items()


def test_the_grid_shares_one_legend_and_one_colour_per_part(session):
    fig = anatomy_grid_figure(session.records(), titles(session), window=2000, reserve=150)
    lanes = len(session.lanes)
    for part, label in zip(PARTS, LABELS, strict=True):
        group = [t for t in fig.data if t.legendgroup == part]
        assert len(group) == lanes  # one trace per part in each lane's panel
        assert {t.marker.color for t in group} == {PART_COLORS[part]}
        shown = sum(bool(t.showlegend) for t in group)  # once in the shared legend
        assert shown == (part != "pinned")  # no built-in lane pins turns: no "pinned" entry
        assert {t.name for t in group} == {label}


def test_one_lane_over_the_turns_has_one_trace_per_part(session):
    recs = session.records()["hybrid"]
    fig = lane_anatomy_figure("hybrid", "Hybrid", recs, window=2000, reserve=150)
    names = [t.name for t in fig.data]
    assert names == [*LABELS, RESERVE_LABEL, FREE_LABEL, UPKEEP_LABEL]
    drawn = [r for r in recs if r.counted]
    for i, record in enumerate(drawn):
        stack = sum(t.y[i] for t in fig.data if t.name in LABELS)
        assert stack == record.counted_overhead
        # each part starts where the one below it ends
        bases = [t.base[i] for t in fig.data if t.name in LABELS]
        sizes = [t.y[i] for t in fig.data if t.name in LABELS]
        assert bases == [sum(sizes[:k]) for k in range(len(sizes))]
    assert list(fig.data[0].x) == [r.turn for r in drawn]


def test_a_window_far_larger_than_the_requests_is_noted_not_drawn(session):
    records = session.records()
    big = comparison_anatomy_figure(records, titles(session), turn=1, window=128_000, reserve=150)
    assert not traces(big, FREE_LABEL) and "off the scale" in big.layout.title.text
    unknown = anatomy_grid_figure(records, titles(session), window=None, reserve=150)
    assert not traces(unknown, FREE_LABEL) and "unknown" in unknown.layout.title.text


def test_a_nearly_full_window_and_a_crowding_part_are_called_out(session):
    records = session.records()
    last = records["full"][-1]
    window = last.counted_overhead + 160
    lines = turn_warnings(
        {"full": records["full"]}, titles(session), turn=session.turn, window=window, reserve=150
    )
    assert any("Full buffer" in line and "of the context window" in line for line in lines)
    roomy = turn_warnings(
        {"full": records["full"]}, titles(session), turn=session.turn, window=10**6, reserve=150
    )
    assert roomy == []
    summary = turn_warnings(
        {"summary": records["summary"]}, titles(session), turn=session.turn, window=None, reserve=0
    )
    anatomy = anatomy_of(records["summary"][-1], window=None, reserve=0)
    share = anatomy.tokens("summary") / anatomy.total
    assert bool(summary) == (share >= 0.5)


def test_the_parts_survive_a_save_and_an_old_record_without_parts_draws_nothing(session):
    record = session.records()["retrieval"][-1]
    again = LaneTurn.from_dict(json.loads(json.dumps(record.as_dict())))
    assert again.account.parts == record.account.parts
    old = record.as_dict()
    del old["account"]["parts"]
    assert anatomy_of(LaneTurn.from_dict(old), window=None, reserve=0) is None


def test_the_html_report_carries_the_anatomy(session):
    page = export.to_html(SavedSession.from_session(session))
    assert "id='anatomy'" in page
    assert 'id="fig-anatomy-turn"' in page and 'id="fig-anatomy-grid"' in page
    assert "Recent turns" in page and "Upkeep calls (outside the request)" in page


HOSTILE = "<img src=x onerror=alert(1)><b>bold</b> \ud800"


def _hostile(record: LaneTurn) -> LaneTurn:
    """`record` as an imported file may have it: its part names, fact keys and upkeep kinds
    are markup and a lone surrogate (the store keeps them byte for byte)."""
    data = record.as_dict()
    account = data["account"]
    account["parts"] = [[HOSTILE + str(i), *p[1:]] for i, p in enumerate(account["parts"])]
    account["facts"] = {HOSTILE: "x"}
    for call in data["maintenance"]:
        call["kind"] = HOSTILE
    return LaneTurn.from_dict(data)


def test_imported_part_names_fact_keys_and_upkeep_kinds_are_drawn_as_text(session):
    """Everything a record names is drawn as text in every anatomy figure, and each figure
    serialises (as the HTML report does) with a lone surrogate in it."""
    records = {n: [_hostile(r) if r.account.parts else r for r in rs]
               for n, rs in session.records().items()}  # fmt: skip
    assert any(r.maintenance for rs in records.values() for r in rs)
    names = titles(session)
    figures = [
        comparison_anatomy_figure(records, names, turn=session.turn, window=2000, reserve=150),
        anatomy_grid_figure(records, names, window=2000, reserve=150),
        lane_anatomy_figure("hybrid", HOSTILE, records["hybrid"], window=2000, reserve=150),
    ]
    for fig in figures:
        drawn = json.dumps(fig.to_plotly_json(), default=str)
        assert "<img" not in drawn and "<b>bold" not in drawn
        assert "&lt;img src=x" in drawn
        fig.to_html(include_plotlyjs=False)  # raised on a lone surrogate before
