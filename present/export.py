"""Exports of a saved session for presentations: HTML report, Markdown, CSV and JSON.

* HTML: one self-contained file that opens offline (Plotly's JavaScript is embedded, never
  linked): settings, the comparison charts, each lane's chart, a table of tokens and cost per
  strategy, the fact-survival heat maps when a run is attached, the conversation, and
  optionally every turn's payloads.
* Markdown: a summary to paste into a document or a ticket.
* CSV: one row per lane per turn with the figures the charts draw.
* JSON: the whole session (`SavedSession.as_dict()`): the store and the importer restore it.

The figures come from present/lanes.py and present/survival.py — the same Plotly builders the
pages use (they import no streamlit), so a report shows what the app showed. Every export is
built from a scrubbed copy of the session: no key can reach a file.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio
from plotly.offline import get_plotlyjs

from present.anatomy import anatomy_html
from present.lanes import (
    LANE_LEGEND,
    charted,
    color,
    comparison_figure,
    cumulative,
    cumulative_figure,
    lane_figure,
)
from present.safe import html_text, md_cell
from providers import catalog
from providers.catalog import Price
from providers.redaction import env_key_values, redact, safe_url
from storage.store import SavedSession, decode_export, is_interrupted

CSV_COLUMNS = (
    "session_id",
    "turn",
    "lane",
    "strategy",
    "status",
    "error_kind",
    "messages_sent",
    "prompt_counted",
    "prompt_counted_with_overhead",
    "prompt_billed",
    "completion_billed",
    "upkeep_calls",
    "upkeep_tokens",
    "turn_tokens",
    "tokens_so_far",
    "cost_usd",
    "latency_s",
    "ttft_s",
    "kept_turns",
    "dropped_turns",
    "summarised_turns",
    "retrieved_turns",
)


# ---- figures shared by every export -----------------------------------------------------------


def price_of(saved: SavedSession) -> Price | None:
    """The Price of the session's model, if the catalog lists it."""

    settings = saved.settings
    return _price_for(settings.get("provider") or {}, (settings.get("app") or {}).get("provider"))


def lane_price(saved: SavedSession, lane: str, price: Price | None) -> Price | None:
    """A lane's price: its own model's when it ran on one (None: not in the catalog), else
    the session's `price`."""
    own = saved.lane_provider(lane)
    return price if own is None else _price_for(own, None)


def _price_for(provider: dict[str, Any], app: dict[str, Any] | None) -> Price | None:
    model = provider.get("model")
    app = app or {}
    candidates = []
    if app.get("preset") in catalog.PRESETS:
        candidates.append(catalog.PRESETS[app["preset"]])
    candidates += catalog.presets_at(provider.get("kind"), provider.get("base_url"))
    for preset in candidates:
        info = preset.model(model) if model else None
        if info and info.price is not None:
            return info.price
    return None


@dataclass(frozen=True)
class LaneSummary:
    """One strategy's totals over the session."""

    lane: str
    title: str
    turns_ok: int
    turns_failed: int
    turns_interrupted: int
    prompt_counted: int
    prompt_billed: int | None
    completion: int | None
    upkeep_calls: int
    upkeep_tokens: int
    total_tokens: int
    first_prompt: int
    last_prompt: int
    cost: float | None

    @property
    def growth(self) -> float | None:
        return self.last_prompt / self.first_prompt if self.first_prompt else None


def lane_summaries(saved: SavedSession, price: Price | None = None) -> list[LaneSummary]:
    titles = saved.titles()
    out = []
    for name in saved.strategies:
        records = saved.records.get(name, [])
        real = [r for r in records if not is_interrupted(r)]
        drawn = charted(real)
        billed = [r.billed_input for r in real if r.billed_input is not None]
        completions = [r.billed_output for r in real if r.billed_output is not None]
        own = lane_price(saved, name, price)
        costs = [r.cost(own) for r in real]
        out.append(
            LaneSummary(
                lane=name,
                title=titles[name],
                turns_ok=sum(1 for r in real if r.ok),
                turns_failed=sum(1 for r in real if not r.ok),
                turns_interrupted=len(records) - len(real),
                prompt_counted=sum(r.counted for r in real),
                prompt_billed=sum(billed) if billed else None,
                completion=sum(completions) if completions else None,
                upkeep_calls=sum(len(r.maintenance) for r in real),
                upkeep_tokens=sum(r.maintenance_tokens for r in real),
                total_tokens=sum(r.total_tokens for r in real),
                first_prompt=drawn[0].counted if drawn else 0,
                last_prompt=drawn[-1].counted if drawn else 0,
                cost=None if own is None else sum(c or 0.0 for c in costs),
            )
        )
    return out


def turn_rows(saved: SavedSession, price: Price | None = None) -> list[dict[str, Any]]:
    """One row per lane per turn (turn order, then lane order), as the CSV has them."""
    titles = saved.titles()
    so_far: dict[tuple[str, int], int] = {}
    for name in saved.strategies:
        drawn = charted(saved.records.get(name, []))
        for record, total in zip(drawn, cumulative(drawn), strict=True):
            so_far[(name, record.turn)] = total
    rows = []
    for turn in range(1, len(saved.user_turns) + 1):
        for name in saved.strategies:
            r = saved.records[name][turn - 1]
            acc = r.account
            cost = r.cost(lane_price(saved, name, price)) if not is_interrupted(r) else None
            rows.append(
                {
                    "session_id": saved.id,
                    "turn": turn,
                    "lane": name,
                    "strategy": titles[name],
                    "status": r.status,
                    "error_kind": r.error_kind or "",
                    "messages_sent": r.n_messages,
                    "prompt_counted": r.counted,
                    "prompt_counted_with_overhead": r.counted_overhead,
                    "prompt_billed": r.billed_input,
                    "completion_billed": r.billed_output,
                    "upkeep_calls": len(r.maintenance),
                    "upkeep_tokens": r.maintenance_tokens,
                    "turn_tokens": r.total_tokens,
                    "tokens_so_far": so_far.get((name, turn)),
                    "cost_usd": None if cost is None else round(cost, 8),
                    "latency_s": r.latency_s,
                    "ttft_s": r.ttft_s,
                    "kept_turns": _turns(acc.kept),
                    "dropped_turns": _turns(acc.dropped),
                    "summarised_turns": _turns(acc.summarised),
                    "retrieved_turns": _turns(acc.retrieved),
                }
            )
    return rows


def _turns(values: Sequence[int] | None) -> str:
    return " ".join(str(v) for v in values or ())


def scrubbed(saved: SavedSession, *, bodies: bool = True) -> SavedSession:
    """A copy with every key-like string redacted (and the request bodies dropped if asked)."""
    data = saved.as_dict()
    if not bodies:
        for lane in data["lanes"].values():
            for turn in lane["turns"]:
                turn["body"] = None
    text = redact(json.dumps(data, ensure_ascii=False, default=str), env_key_values())
    return decode_export(json.loads(text))


# ---- JSON, CSV, Markdown ------------------------------------------------------------------------


def to_json(saved: SavedSession) -> str:
    """The whole session; `Store.import_json` and `transcripts.parse` read it back."""
    data = scrubbed(saved).as_dict()
    data["exported_at"] = _now_iso()
    return redact(json.dumps(data, ensure_ascii=False, indent=1, default=str), env_key_values())


def to_csv(saved: SavedSession, price: Price | None = None) -> str:
    """Per-turn figures: one row per lane per turn."""
    clean = scrubbed(saved, bodies=False)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in turn_rows(clean, price if price is not None else price_of(clean)):
        writer.writerow({k: _cell(v) for k, v in row.items()})
    return out.getvalue()


def _cell(value: Any) -> Any:
    """A CSV cell a spreadsheet shows as text: a string starting like a formula (an imported
    id such as `=HYPERLINK(...)`) gets a leading apostrophe; numbers are left as they are."""
    if value is None:
        return ""
    if isinstance(value, str) and value[:1] in _FORMULA_STARTS:
        return "'" + value
    return value


_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def to_markdown(saved: SavedSession, price: Price | None = None) -> str:
    """A summary: settings, a table of tokens and cost per strategy, notes."""
    clean = scrubbed(saved, bodies=False)
    price = price if price is not None else price_of(clean)
    info = clean.info
    lines = [
        f"# {md_cell(clean.name)}",
        "",
        f"Memory Lab session `{clean.id}` · {_date(info.created)} · {info.turns} turns · "
        f"{len(clean.strategies)} strategies · {md_cell(_provider_line(clean))}",
        "",
        "## Settings",
        "",
        *[f"- **{md_cell(k)}:** {md_cell(v)}" for k, v in settings_rows(clean)],
        "",
        "## Tokens and cost per strategy",
        "",
        "| Strategy | Turns ok | Prompt tokens (counted) | First → last prompt | Growth | "
        "Upkeep calls · tokens | All tokens | Cost (USD) |",
        "|:--|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for s in lane_summaries(clean, price):
        growth = f"{s.growth:.1f}×" if s.growth else "–"
        lines.append(
            f"| {md_cell(s.title)} | {s.turns_ok}/{info.turns} | {s.prompt_counted:,} | "
            f"{s.first_prompt:,} → {s.last_prompt:,} | {growth} | "
            f"{s.upkeep_calls} · {s.upkeep_tokens:,} | {s.total_tokens:,} | {_money(s.cost)} |"
        )
    lines += ["", _price_note(price, clean)]
    if clean.interrupted:
        lines += [
            "",
            f"**Interrupted turns:** {', '.join(map(str, clean.interrupted))} — the app stopped "
            "before every lane answered; those lanes have no record for the turn.",
        ]
    survival = _survival(clean)
    if survival is not None:
        lines += ["", "## Fact survival", ""]
        if getattr(survival, "stand_in_upkeep", False):
            lines += ["*Upkeep by rule-based stand-ins, not a model.*", ""]
        for strategy, cells in _survival_table(survival).items():
            lines.append(f"- **{md_cell(strategy)}:** " + ", ".join(cells))
    lines += ["", "## Conversation (user turns)", ""]
    for i, text in enumerate(clean.user_turns, start=1):
        lines.append(f"{i}. {md_cell(_short(text, 160))}")
    lines.append("")
    return redact("\n".join(lines), env_key_values())


def settings_rows(saved: SavedSession) -> list[tuple[str, str]]:
    """The settings as (label, value) pairs, for the report and the summary."""
    s = saved.settings
    provider = s.get("provider") or {}
    rows = [("Provider", _provider_line(saved))]
    for key, label in (
        ("temperature", "Temperature"),
        ("max_tokens", "Max reply tokens"),
        ("context_window", "Context window"),
    ):
        if provider.get(key) is not None:
            rows.append((label, str(provider[key])))
    maintenance = s.get("maintenance")
    if maintenance:
        rows.append(("Upkeep model", f"{maintenance.get('kind')} · {maintenance.get('model')}"))
    titles = saved.titles()
    for name in saved.strategies:
        params = saved.params(name)
        shown = ", ".join(f"{k}={v}" for k, v in params.items())
        rows.append((f"Lane: {titles[name]}", shown or "defaults"))
    counter = s.get("counter") or {}
    if counter:
        estimate = " (an estimate for this model)" if counter.get("estimate") else ""
        rows.append(("Token counting", f"{counter.get('encoding')}{estimate}"))
    rows.append(("Source", saved.info.source))
    return rows


def _provider_line(saved: SavedSession) -> str:
    provider = saved.settings.get("provider") or {}
    where = f" at {safe_url(str(provider['base_url']))}" if provider.get("base_url") else ""
    return f"{provider.get('kind', '?')} · {provider.get('model', '?')}{where}"


def _price_note(price: Price | None, saved: SavedSession) -> str:
    if price is None:
        return "_Cost: the catalog has no price for this model._"
    return (
        f"_Cost at ${price.input_per_m:g} / ${price.output_per_m:g} per million input / output tokens "
        "(approximate list prices); billed counts where the provider gave them, else counted._"
    )


def _money(value: float | None) -> str:
    return "–" if value is None else f"${value:.4f}"


def _short(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _date(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


# ---- survival ---------------------------------------------------------------------------------


def _survival(saved: SavedSession) -> Any:
    if not saved.survival:
        return None
    from engines.survival import SurvivalResult

    try:
        return SurvivalResult.from_dict(saved.survival)
    except Exception:  # an unreadable run is left out of the export, not fatal
        return None


def _survival_table(result: Any) -> dict[str, list[str]]:
    cells = result.matrix("in_payload")
    out: dict[str, list[str]] = {}
    for strategy in result.strategies():
        row = []
        for n in result.probe_turns():
            hit, total = cells.get((strategy, n), (0, 0))
            row.append(f"N={n}: {hit}/{total} in payload")
        out[strategy] = row
    return out


def survival_figures(saved: SavedSession) -> list[go.Figure]:
    """The heat maps of an attached survival run (in payload; recalled when a model answered)."""
    result = _survival(saved)
    if result is None or not result.rows:
        return []
    from present.survival import heatmap

    figures = [heatmap(result, "in_payload")]
    if any(r.recalled is not None for r in result.rows):
        figures.append(heatmap(result, "recalled"))
    return figures


# ---- HTML ------------------------------------------------------------------------------------

_CSS = """
body{font-family:Inter,Segoe UI,Helvetica,Arial,sans-serif;color:#1f2937;margin:0;background:#f8fafc}
main{max-width:1280px;margin:0 auto;padding:24px 32px 64px}
h1{font-size:2.1rem;margin:.2rem 0} h2{margin-top:2.4rem;border-bottom:2px solid #e5e7eb;
padding-bottom:.3rem} .meta{color:#4b5563;font-size:1.05rem}
table{border-collapse:collapse;width:100%;background:white;font-size:.98rem}
th,td{border:1px solid #e5e7eb;padding:6px 10px;text-align:left;vertical-align:top}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(520px,1fr));gap:18px}
#settings th{width:28%}
.card{background:white;border:1px solid #e5e7eb;border-radius:10px;padding:10px 12px}
.card h3{margin:.2rem 0 .4rem;display:flex;align-items:center;gap:8px}
.dot{width:14px;height:14px;border-radius:50%;display:inline-block}
pre{white-space:pre-wrap;word-break:break-word;background:#f3f4f6;padding:10px;border-radius:6px;
font-size:.85rem} details{margin:.4rem 0} summary{cursor:pointer;font-weight:600}
.turn{background:white;border:1px solid #e5e7eb;border-radius:10px;padding:8px 14px;margin:10px 0}
.user{font-size:1.05rem;margin:.3rem 0 .6rem} .bad{color:#b91c1c} .note{color:#6b7280}
.replies{display:grid;grid-template-columns:repeat(auto-fit,minmax(260px,1fr));gap:10px}
.reply{border-left:4px solid #ccc;padding:2px 10px}
"""


def _fig_html(fig: go.Figure, div_id: str) -> str:
    return pio.to_html(
        fig,
        full_html=False,
        include_plotlyjs=False,
        div_id=div_id,
        config={"displaylogo": False, "responsive": True},
        default_height=f"{fig.layout.height or 420}px",
    )


def to_html(
    saved: SavedSession,
    *,
    payloads: bool = False,
    price: Price | None = None,
    title: str | None = None,
) -> str:
    """The self-contained report (Plotly's JavaScript inline: it opens with no network)."""
    clean = scrubbed(saved, bodies=payloads)
    price = price if price is not None else price_of(clean)
    info = clean.info
    titles = clean.titles()
    e = html_text
    parts: list[str] = []
    parts.append(
        f"<header><h1>{e(title or clean.name)}</h1><p class='meta'>Memory Lab session "
        f"<code>{e(clean.id)}</code> · {e(_date(info.created))} · {info.turns} turns · "
        f"{len(clean.strategies)} strategies · {e(_provider_line(clean))}</p></header>"
    )
    if clean.interrupted:
        parts.append(
            f"<p class='bad'><b>Interrupted turns: {e(', '.join(map(str, clean.interrupted)))}"
            "</b> — the app stopped before every lane answered.</p>"
        )
    # settings
    rows = "".join(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in settings_rows(clean))
    parts.append(
        f"<section id='settings'><h2>Settings</h2><table>{rows}</table>"
        f"<details><summary>System prompt</summary><pre>{e(clean.system_prompt)}</pre>"
        "</details></section>"
    )
    # comparison
    parts.append("<section id='comparison'><h2>Comparison</h2><div class='grid'>")
    if any(charted(rs) for rs in clean.records.values()):
        parts.append(
            "<div class='card'>"
            + _fig_html(comparison_figure(clean.records, titles, height=470), "fig-comparison")
            + "</div><div class='card'>"
            + _fig_html(cumulative_figure(clean.records, titles, height=470), "fig-cumulative")
            + "</div>"
        )
    else:
        parts.append("<p class='note'>No lane sent a request: nothing to chart.</p>")
    parts.append("</div></section>")
    parts.append(anatomy_html(clean, titles, _fig_html))
    # table
    head = (
        "<tr><th>Strategy</th><th class='n'>Turns ok</th><th class='n'>Prompt tokens "
        "(counted)</th><th class='n'>Prompt (billed)</th><th class='n'>Replies (billed)</th>"
        "<th class='n'>First → last prompt</th><th class='n'>Upkeep calls · tokens</th>"
        "<th class='n'>All tokens</th><th class='n'>Cost (USD)</th></tr>"
    )
    body = "".join(
        f"<tr><td><span class='dot' style='background:{color(s.lane)}'></span> {e(s.title)}</td>"
        f"<td class='n'>{s.turns_ok}/{info.turns}</td><td class='n'>{s.prompt_counted:,}</td>"
        f"<td class='n'>{_num(s.prompt_billed)}</td><td class='n'>{_num(s.completion)}</td>"
        f"<td class='n'>{s.first_prompt:,} → {s.last_prompt:,}</td>"
        f"<td class='n'>{s.upkeep_calls} · {s.upkeep_tokens:,}</td>"
        f"<td class='n'>{s.total_tokens:,}</td><td class='n'>{_money(s.cost)}</td></tr>"
        for s in lane_summaries(clean, price)
    )
    parts.append(
        f"<section id='tokens'><h2>Tokens and cost per strategy</h2><table>{head}{body}</table>"
        f"<p class='note'>{e(_price_note(price, clean).strip('_'))}</p></section>"
    )
    # lanes
    parts.append("<section id='lanes'><h2>Each lane</h2><div class='grid'>")
    for i, name in enumerate(clean.strategies):
        parts.append(
            f"<div class='card'><h3><span class='dot' style='background:{color(name)}'></span>"
            f"{e(titles[name])}</h3>"
            + _fig_html(lane_figure(name, clean.records[name], height=340), f"fig-lane-{i}")
            + f"<p class='note'>{e(LANE_LEGEND)}</p></div>"
        )
    parts.append("</div></section>")
    # survival
    heatmaps = survival_figures(clean)
    if heatmaps:
        parts.append("<section id='survival'><h2>Fact survival</h2>")
        for i, fig in enumerate(heatmaps):
            parts.append("<div class='card'>" + _fig_html(fig, f"fig-survival-{i}") + "</div>")
        parts.append("</section>")
    # conversation
    parts.append("<section id='conversation'><h2>Conversation</h2>")
    for turn, user in enumerate(clean.user_turns, start=1):
        parts.append(_turn_html(clean, turn, user, titles, payloads))
    parts.append("</section>")
    parts.append(
        f"<footer class='note'><p>Generated by Memory Lab on {e(_now_iso())}. Token counts are "
        "the app's own (counted) and the provider's (billed) where it reported them.</p></footer>"
    )
    document = (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{e(title or clean.name)} · Memory Lab</title><style>{_CSS}</style>"
        "<script type='text/javascript'>window.PlotlyConfig = {MathJaxConfig: 'local'};</script>"
        f"<script type='text/javascript'>{get_plotlyjs()}</script></head><body><main>"
        + redact("".join(parts), env_key_values())
        + "</main><script>window.addEventListener('load', () => document"
        ".querySelectorAll('.js-plotly-plot').forEach(p => Plotly.Plots.resize(p)));</script>"
        "</body></html>"
    )
    return document


def _num(value: int | None) -> str:
    return "–" if value is None else f"{value:,}"


def _turn_html(
    saved: SavedSession, turn: int, user: str, titles: Mapping[str, str], payloads: bool
) -> str:
    e = html_text
    replies = []
    for name in saved.strategies:
        r = saved.records[name][turn - 1]
        if r.ok:
            text = f"<div>{e(r.reply)}</div>"
        else:
            text = (
                f"<div class='bad'>{e(r.status)}: {e(r.error_kind or '')} {e(r.error or '')}</div>"
            )
        detail = ""
        if payloads and r.body is not None:
            acc = r.account
            kept = _turns(acc.kept) or "–"
            dropped = _turns(acc.dropped) or "–"
            summarised = _turns(acc.summarised) or "–"
            upkeep = "".join(
                f"<details><summary>upkeep {i}: {e(m.kind)}</summary>"
                f"<pre>{e(json.dumps(m.body, indent=1, ensure_ascii=False))}</pre></details>"
                for i, m in enumerate(r.maintenance, start=1)
            )
            detail = (
                f"<details><summary>Payload · {r.counted:,} tokens</summary>"
                f"<p class='note'>kept {e(kept)} · dropped {e(dropped)} · summarised "
                f"{e(summarised)}</p><pre>{e(json.dumps(r.body, indent=1, ensure_ascii=False))}"
                f"</pre>{upkeep}</details>"
            )
        replies.append(
            f"<div class='reply' style='border-color:{color(name)}'><b>{e(titles[name])}</b>"
            f"<span class='note'> · {r.counted:,} prompt tokens</span>{text}{detail}</div>"
        )
    mark = " <span class='bad'>(interrupted)</span>" if turn in saved.interrupted else ""
    return (
        f"<details class='turn'{' open' if turn <= 3 else ''}><summary>Turn {turn}{mark}: "
        f"{e(_short(user, 90))}</summary><p class='user'><b>You:</b> {e(user)}</p>"
        f"<div class='replies'>{''.join(replies)}</div></details>"
    )
