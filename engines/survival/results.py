"""The survival lab's records: one row per probe, a run's result, progress and estimates.

Rows and results are plain data that save to JSON and CSV and load back (a saved run from
before facts could change loads too: its new fields take their defaults).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import pydantic

from engines.survival.facts import SurvivalConfigError
from engines.survival.verdicts import LEAK_FLAG, STALE

LIST_FIELDS = ("answers", "found_in", "kept_turns", "summarised_turns", "stale_answers")


@dataclass(frozen=True)
class ProbeRow:
    """One probe: a fact, a strategy, a turn N, and both verdicts (plain data)."""

    strategy: str
    strategy_name: str
    params: Mapping[str, Any]
    fact: str
    fact_label: str
    plant_turn: int
    probe_turn: int
    probe: str
    answers: tuple[str, ...]
    in_payload: bool | None
    found_in: tuple[str, ...]
    recalled: bool | None
    matched: str | None
    verdict: str
    flag: str
    reply: str
    probe_prompt_tokens: int
    prompt_tokens_spent: int
    maintenance_tokens: int
    maintenance_calls: int
    billed_input: int | None
    billed_output: int | None
    kept_turns: tuple[int, ...]
    summarised_turns: tuple[int, ...]
    error: str | None = None
    latency_s: float | None = None
    speaker: str = "user"  # who stated the fact
    stale_answers: tuple[str, ...] = ()  # values the fact had before its latest update
    payload_state: str = ""  # current / both / stale / missing (verdicts.py)
    recall_state: str = ""  # the same for the reply ("" with no model)
    upkeep: str = ""  # who did the summaries/extraction: "model", "stand-in" or "none"

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for key in LIST_FIELDS:
            data[key] = list(data[key])
        data["params"] = dict(self.params)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ProbeRow:
        values: dict[str, Any] = {f.name: data.get(f.name) for f in fields(cls) if f.name in data}
        for key in LIST_FIELDS:
            values[key] = tuple(values.get(key) or ())
        values["params"] = dict(values.get("params") or {})
        return cls(**values)


@dataclass(frozen=True)
class Progress:
    """How far a run is: calls made and calls still expected (an estimate for upkeep calls)."""

    done: int
    total: int
    rows: int
    rows_total: int

    @property
    def to_go(self) -> int:
        return max(0, self.total - self.done)

    @property
    def fraction(self) -> float:
        if self.total <= 0:  # payload only: no calls, count rows
            return min(1.0, self.rows / self.rows_total) if self.rows_total else 1.0
        return min(1.0, self.done / self.total)


@dataclass(frozen=True)
class Estimate:
    """Calls and tokens a run is expected to take, from a model-free dry run of the script."""

    probe_calls: int
    reply_calls: int
    maintenance_calls: int
    prompt_tokens: int
    maintenance_tokens: int
    output_tokens: int
    rows: int
    exact: bool

    @property
    def calls(self) -> int:
        return self.probe_calls + self.reply_calls + self.maintenance_calls

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.maintenance_tokens + self.output_tokens

    def rough_seconds(
        self, *, prompt_tps: float = 400.0, output_tps: float = 60.0, parallel: int = 1
    ) -> float:
        """A rough wall time for a local model reading `prompt_tps` and writing `output_tps`."""
        work = (self.prompt_tokens + self.maintenance_tokens) / prompt_tps
        work += self.output_tokens / output_tps
        return work / max(1, min(parallel, 4) ** 0.5)

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "calls": self.calls, "tokens": self.tokens}


@dataclass
class SurvivalResult:
    """A finished (or cancelled) run: config, rows and what it took."""

    config: dict[str, Any]
    rows: list[ProbeRow]
    mode: str  # "model" or "payload-only"
    maintenance: str  # "model" or "stand-in"
    cancelled: bool = False
    provider_calls: int = 0
    maintenance_calls: int = 0
    elapsed_s: float = 0.0
    notes: list[str] = field(default_factory=list)
    model: str | None = None

    @property
    def calls(self) -> int:
        return self.provider_calls + self.maintenance_calls

    @property
    def stand_in_upkeep(self) -> bool:
        """True when summaries/extraction were done by rule-based stand-ins, not a model:
        every figure of such a run must say so."""
        return self.maintenance == "stand-in" and any(r.upkeep == "stand-in" for r in self.rows)

    def strategies(self) -> list[str]:
        seen: dict[str, None] = {}
        for s in self.config.get("strategies", []):
            seen[s.get("label") or s["name"]] = None
        for r in self.rows:
            seen.setdefault(r.strategy, None)
        return list(seen)

    def probe_turns(self) -> list[int]:
        return list(self.config.get("probe_turns") or sorted({r.probe_turn for r in self.rows}))

    def matrix(self, verdict: str) -> dict[tuple[str, int], tuple[int, int]]:
        """(strategy, N) -> (facts with the verdict true, facts with a verdict at all).

        `verdict` is 'in_payload', 'recalled', 'leak', 'stale_payload' (only an old value in
        the payload) or 'stale_recall' (the reply gave only an old value)."""
        cells: dict[tuple[str, int], tuple[int, int]] = {}
        for r in self.rows:
            value: bool | None
            if verdict == "leak":
                value = None if r.recalled is None else (r.flag == LEAK_FLAG)
            elif verdict == "stale_payload":
                value = None if r.in_payload is None else r.payload_state == STALE
            elif verdict == "stale_recall":
                value = None if r.recalled is None else r.recall_state == STALE
            else:
                value = getattr(r, verdict)
            hit, total = cells.get((r.strategy, r.probe_turn), (0, 0))
            if value is not None:
                cells[(r.strategy, r.probe_turn)] = (hit + int(bool(value)), total + 1)
            else:
                cells.setdefault((r.strategy, r.probe_turn), (hit, total))
        return cells

    def tokens_spent(self) -> dict[tuple[str, int], int]:
        """(strategy, N) -> conversation prompt tokens sent up to and including the probe."""
        spent: dict[tuple[str, int], int] = {}
        for r in self.rows:
            if r.error is None or r.prompt_tokens_spent:
                key = (r.strategy, r.probe_turn)
                spent[key] = max(spent.get(key, 0), r.prompt_tokens_spent)
        return spent

    def as_dict(self) -> dict[str, Any]:
        return {
            "config": self.config,
            "mode": self.mode,
            "maintenance": self.maintenance,
            "model": self.model,
            "cancelled": self.cancelled,
            "provider_calls": self.provider_calls,
            "maintenance_calls": self.maintenance_calls,
            "elapsed_s": round(self.elapsed_s, 3),
            "notes": list(self.notes),
            "rows": [r.as_dict() for r in self.rows],
        }

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), ensure_ascii=False, indent=2)

    def to_csv(self) -> str:
        return rows_to_csv(self.rows)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SurvivalResult:
        """A result `as_dict` wrote; SurvivalConfigError names a field of the wrong type."""
        check_saved(data)
        return cls(
            config=dict(data.get("config") or {}),
            rows=[ProbeRow.from_dict(r) for r in data.get("rows") or []],
            mode=str(data.get("mode", "model")),
            maintenance=str(data.get("maintenance", "model")),
            cancelled=bool(data.get("cancelled")),
            provider_calls=int(data.get("provider_calls") or 0),
            maintenance_calls=int(data.get("maintenance_calls") or 0),
            elapsed_s=float(data.get("elapsed_s") or 0.0),
            notes=list(data.get("notes") or []),
            model=data.get("model"),
        )


_ROWS = pydantic.TypeAdapter(list[ProbeRow])
_TOP: dict[str, type | tuple[type, ...]] = {
    "config": dict,
    "mode": str,
    "maintenance": str,
    "model": (str, type(None)),
    "cancelled": bool,
    "provider_calls": int,
    "maintenance_calls": int,
    "elapsed_s": (int, float),
    "notes": list,
    "rows": list,
}


def check_saved(data: Any, path: str = "survival") -> None:
    """A saved result's own fields checked before anything reads them: the top fields' types
    and every row strictly against ProbeRow (its config: engines/survival/saved.py).
    SurvivalConfigError names the field by its path."""
    if not isinstance(data, Mapping):
        raise SurvivalConfigError(f"{path} must be an object, not {type(data).__name__}")
    for key, kind in _TOP.items():
        value = data.get(key)
        if value is not None and (
            isinstance(value, bool) and kind is not bool or not isinstance(value, kind)
        ):
            raise SurvivalConfigError(f"{path}.{key} has the wrong type ({type(value).__name__})")
    if not all(isinstance(n, str) for n in data.get("notes") or ()):
        raise SurvivalConfigError(f"{path}.notes must be a list of text")
    try:
        _ROWS.validate_json(json.dumps(data.get("rows") or [], allow_nan=False), strict=True)
    except ValueError as exc:  # pydantic's ValidationError is one
        if not isinstance(exc, pydantic.ValidationError):
            raise SurvivalConfigError(f"{path}.rows: {exc}") from None
        error = exc.errors(include_url=False)[0]
        where = "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in error["loc"])
        raise SurvivalConfigError(f"{path}.rows{where}: {error['msg']}") from None


CSV_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(ProbeRow))


def rows_to_csv(rows: Sequence[ProbeRow]) -> str:
    """Rows as CSV (lists joined with '; ', parameters as JSON)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        data = row.as_dict()
        for key in LIST_FIELDS:
            data[key] = "; ".join(str(x) for x in data[key])
        data["params"] = json.dumps(data["params"], sort_keys=True)
        writer.writerow(data)
    return out.getvalue()


def _sort_key(order: Mapping[str, int], facts: Mapping[str, int]) -> Callable[[ProbeRow], Any]:
    return lambda r: (order.get(r.strategy, 99), r.probe_turn, facts.get(r.fact, 99))
