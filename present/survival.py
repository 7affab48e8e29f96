"""Plotly figures for the fact-survival lab (no streamlit here: exports reuse them).

Built for a projector: large fonts, cell labels on the heat maps ("3/4"), an orange-to-blue
scale that reads for colour-blind viewers, and one colour per strategy as on the main page.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from engines.survival import LEAK_FLAG, SurvivalResult
from present.safe import plotly
from present.style import color, projector
from present.text import table as text_grid

# lost (orange) -> half (light) -> kept (blue)
SCALE = [[0.0, "#d95f02"], [0.5, "#f5f5f5"], [1.0, "#2166ac"]]

TITLES = {
    "in_payload": "Fact in the payload at turn N",
    "recalled": "Fact recalled by the model at turn N",
}
STALE_KEY = {"in_payload": "stale_payload", "recalled": "stale_recall"}
STAND_IN_LABEL = "upkeep by rule-based stand-ins, not a model"
LEGEND = (
    "<b>How to read it.</b> <b>3/4</b>: of the 4 facts probed at turn N, 3 had their "
    "<b>current</b> value there (blue = all, orange = none).<br>"
    "<b>1 stale</b>: for 1 updated fact only the <b>old</b> value was there: the update was "
    f"lost. <b>{LEAK_FLAG}</b>: recalled although not in the payload. <b>—</b>: not probed."
)


def legend_lines(result: SurvivalResult) -> list[str]:
    """The legend in plain words (for text tables and captions), stand-in note included."""
    lines = [
        "a/b = facts whose current value is there, of the facts probed at turn N",
        "stale = only an old value of an updated fact is there (the update was lost)",
    ]
    if result.mode == "model":
        lines.append(f"! = {LEAK_FLAG}: recalled, but not in the payload")
    if result.stand_in_upkeep:
        lines.append(
            f"{STAND_IN_LABEL}: summary, entity and hybrid rows show the stand-ins' behaviour"
        )
    return lines


def _titled(title: str, result: SurvivalResult) -> str:
    if result.stand_in_upkeep:
        return f"{title}<br><sup>{STAND_IN_LABEL}</sup>"
    return title


def _base(fig: go.Figure, title: str, height: int) -> go.Figure:
    projector(fig, title=title, height=height, top=96)
    # plotly does not make room for long tick labels unless asked: strategy names are long
    fig.update_xaxes(automargin=True, title_standoff=12)
    fig.update_yaxes(automargin=True, title_standoff=12)
    return fig


def heatmap(result: SurvivalResult, verdict: str, *, title: str | None = None) -> go.Figure:
    """Strategies (rows) x probe turns N (columns); each cell the share of facts with the
    verdict, labelled 'kept/total'. Recall cells also count guesses (recalled, not in payload).

    `verdict` is 'in_payload' or 'recalled'."""
    if verdict not in TITLES:
        raise ValueError(f"verdict is 'in_payload' or 'recalled', got {verdict!r}")
    strategies = result.strategies()
    turns = result.probe_turns()
    cells = result.matrix(verdict)
    leaks = result.matrix("leak") if verdict == "recalled" else {}
    stale = result.matrix(STALE_KEY[verdict])
    z: list[list[float | None]] = []
    text: list[list[str]] = []
    for s in strategies:
        zrow: list[float | None] = []
        trow: list[str] = []
        for n in turns:
            hit, total = cells.get((s, n), (0, 0))
            if total == 0:
                zrow.append(None)
                trow.append("—")
                continue
            zrow.append(hit / total)
            label = f"{hit}/{total}"
            old = stale.get((s, n), (0, 0))[0]
            if old:
                label += f"<br>{old} stale"
            guesses = leaks.get((s, n), (0, 0))[0]
            if guesses:
                label += f"<br>{guesses} {LEAK_FLAG}"
            trow.append(label)
        z.append(zrow)
        text.append(trow)
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=[f"N={n}" for n in turns],
            y=[plotly(s) for s in strategies],
            text=text,
            texttemplate="%{text}",
            textfont={"size": 20},
            colorscale=SCALE,
            zmin=0,
            zmax=1,
            xgap=3,
            ygap=3,
            hovertemplate="%{y}<br>%{x}: %{text}<extra></extra>",
            colorbar={
                "title": {"text": "share of facts", "side": "right"},
                "tickvals": [0, 0.5, 1],
                "ticktext": ["none", "half", "all"],
            },
        )
    )
    fig.update_yaxes(autorange="reversed", tickfont={"size": 17})
    fig.update_xaxes(title_text="probe turn N", tickfont={"size": 17})
    height = 250 + 62 * max(1, len(strategies))
    fig = _base(fig, _titled(title or TITLES[verdict], result), height)
    _legend(fig)
    return fig


def _legend(fig: go.Figure) -> None:
    """The legend under the plot, in words a stakeholder can read."""
    fig.add_annotation(
        text=LEGEND,
        xref="paper",
        yref="paper",
        x=0,
        y=0,
        yshift=-72,
        xanchor="left",
        yanchor="top",
        showarrow=False,
        align="left",
        font={"size": 14, "color": "#374151"},
    )
    fig.update_layout(margin={"b": 130})
    fig.update_layout(height=fig.layout.height + 60)


def heatmaps(result: SurvivalResult, *, title: str | None = None) -> go.Figure:
    """Both verdicts side by side on one figure, sharing the strategy rows (the page's view):
    in the payload (left) and recalled (right); payload only when no model answered."""
    verdicts = ["in_payload"] + (["recalled"] if result.mode == "model" else [])
    singles = [heatmap(result, v) for v in verdicts]
    fig = make_subplots(
        rows=1,
        cols=len(verdicts),
        shared_yaxes=True,
        horizontal_spacing=0.03,
        subplot_titles=[
            "In the payload (deterministic)" if v == "in_payload" else "Recalled by the model"
            for v in verdicts
        ],
    )
    for i, single in enumerate(singles, start=1):
        trace = single.data[0]
        trace.update(showscale=(i == len(singles)))
        if i == len(singles):
            trace.colorbar.update(x=1.0, xanchor="left", len=0.9)
        fig.add_trace(trace, row=1, col=i)
        fig.update_xaxes(title_text="probe turn N", tickfont={"size": 17}, row=1, col=i)
    fig.update_yaxes(autorange="reversed", tickfont={"size": 17})
    fig.update_annotations(font={"size": 19})
    heading = title or "Does the fact survive to turn N? (facts kept / facts probed)"
    fig = _base(fig, _titled(heading, result), singles[0].layout.height + 30)
    _legend(fig)
    return fig


def tokens_chart(result: SurvivalResult, *, title: str | None = None) -> go.Figure:
    """Prompt tokens each strategy sent to reach each probe turn (the conversation so far
    plus the probe), grouped by N."""
    spent = result.tokens_spent()
    turns = result.probe_turns()
    names = {r.strategy: r.strategy_name for r in result.rows}
    fig = go.Figure()
    for s in result.strategies():
        ys = [spent.get((s, n)) for n in turns]
        fig.add_bar(
            x=[f"N={n}" for n in turns],
            y=ys,
            name=plotly(s),
            marker_color=color(names.get(s, s)),
            hovertemplate="%{x}: %{y:,} tokens<extra>%{fullData.name}</extra>",
        )
    fig.update_layout(
        barmode="group",
        legend={"orientation": "h", "y": -0.2, "x": 0, "font": {"size": 16}},
    )
    fig.update_yaxes(title_text="prompt tokens sent so far", gridcolor="#e5e7eb", tickformat=",")
    fig.update_xaxes(title_text="probe turn N")
    return _base(fig, title or "Prompt tokens spent to reach turn N", 480)


def text_table(result: SurvivalResult) -> str:
    """Both verdict grids (strategies x N), the legend and the prompt tokens spent, as text."""
    turns = result.probe_turns()
    header = ["strategy", *[f"N={n}" for n in turns]]
    out: list[str] = []
    if result.stand_in_upkeep:
        out += [f"({STAND_IN_LABEL})", ""]
    grids = [("in the payload", "in_payload")]
    if result.mode == "model":
        grids.append(("recalled by the model", "recalled"))
    leaks = result.matrix("leak")
    for title, key in grids:
        cells = result.matrix(key)
        stale = result.matrix(STALE_KEY[key])
        rows = []
        for s in result.strategies():
            row = [s]
            for n in turns:
                hit, total = cells.get((s, n), (0, 0))
                text = f"{hit}/{total}" if total else "-"
                if stale.get((s, n), (0, 0))[0]:
                    text += f" ({stale[(s, n)][0]} stale)"
                if key == "recalled" and leaks.get((s, n), (0, 0))[0]:
                    text += "!"
                row.append(text)
            rows.append(row)
        out.append(f"Facts {title} at turn N:")
        out.append(text_grid(header, rows))
        out.append("")
    out += [f"  {line}" for line in legend_lines(result)]
    out.append("")
    out += fact_states(result, turns, header)
    spent = result.tokens_spent()
    rows = [[s, *[f"{spent[(s, n)]:,}" if (s, n) in spent else "-" for n in turns]]
            for s in result.strategies()]  # fmt: skip
    out.append("Prompt tokens sent to reach turn N (conversation so far + the probe):")
    out.append(text_grid(header, rows))
    return "\n".join(out)


def fact_states(result: SurvivalResult, turns: Sequence[int], header: Sequence[str]) -> list[str]:
    """Per strategy and fact, the value state at each N: in the payload, and in the reply
    (payload/reply) when a model answered: current, both, stale or missing."""
    states: dict[tuple[str, str], dict[int, str]] = {}
    for r in result.rows:
        cell = r.payload_state or ("error" if r.error else "-")
        if r.recall_state:
            cell += f"/{r.recall_state}"
        states.setdefault((r.strategy, r.fact), {})[r.probe_turn] = cell
    if not states:
        return []
    rows = [
        [f"{s} · {fact}", *[cells.get(n, "-") for n in turns]]
        for (s, fact), cells in states.items()
    ]
    title = "Value state per fact at turn N"
    title += " (payload/reply)" if result.mode == "model" else " (in the payload)"
    return [f"{title}: current, both (current and old), stale (only old), missing:",
            text_grid(["strategy · fact", *header[1:]], rows), ""]  # fmt: skip


def heatmap_cells(fig: go.Figure) -> list[list[str]]:
    """The cell labels of a heat map (for tests and exports)."""
    trace = fig.data[0]
    return [list(row) for row in trace.text]


def strategies_of(fig: go.Figure) -> Sequence[str]:
    return list(fig.data[0].y)
