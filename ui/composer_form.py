"""The Composer page's editor as plain data: a composition to table rows and back, with each
problem attached to the field it belongs to.

No Streamlit here, so the page's parsing is tested like any function. The blocks table has
one row per block (its send order in `order`); a row only uses the columns of its kind
(memory/compose.py's KIND_FIELDS), the others are left blank and ignored.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from memory.compose import KIND_FIELDS, KINDS, Block, Composition
from memory.errors import InvalidParameter
from memory.registry import REGISTRY, builtin_composition

# the table's columns after order, kind and budget: every kind-specific field, in a fixed order
OPTION_COLUMNS: tuple[str, ...] = (
    "count",
    "turns",
    "first",
    "policy",
    "trigger",
    "fold_to",
    "placement",
    "note",
    "top_k",
    "share",
    "neighbours",
    "ranking",
)
COLUMNS: tuple[str, ...] = ("order", "kind", "budget", *OPTION_COLUMNS)
WHOLE = ("budget", "count", "first", "top_k")
NUMBER = ("trigger", "fold_to", "share", "neighbours")
FIELDS = ("name", "budget", "give_way", "blocks")  # where a problem is shown


@dataclass(frozen=True)
class Draft:
    """What the editor holds: the composition's own fields and its blocks table."""

    name: str
    title: str
    description: str
    budget: int | None
    give_way: tuple[str, ...]
    blocks: pd.DataFrame = field(compare=False)


@dataclass(frozen=True)
class Checked:
    """The composition built from a draft, or the problems by field (FIELDS)."""

    composition: Composition | None
    problems: Mapping[str, tuple[str, ...]]

    def at(self, where: str) -> tuple[str, ...]:
        return tuple(self.problems.get(where, ()))


def blocks_frame(composition: Composition) -> pd.DataFrame:
    """The blocks as editor rows, in send order; fields a kind does not take are blank."""
    rows = []
    for i, block in enumerate(composition.blocks, start=1):
        data = block.to_dict()
        row: dict[str, Any] = {c: None for c in COLUMNS}
        row.update(order=i, kind=block.kind, budget=data.get("budget"))
        for name in KIND_FIELDS[block.kind]:
            value = data[name]
            row[name] = ", ".join(map(str, value)) if name == "turns" else value
        rows.append(row)
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    text = ("turns", "policy", "placement", "ranking")
    return frame.astype(dict.fromkeys(text, "object"))


def _blank(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and not value.strip()


def _whole(value: Any, what: str) -> int:
    number = float(value)
    if not number.is_integer():
        raise InvalidParameter(f"{what} is a whole number, got {value}")
    return int(number)


def _turns(value: Any) -> tuple[int, ...]:
    parts = [p for p in str(value).replace(",", " ").split() if p]
    try:
        return tuple(int(p) for p in parts)
    except ValueError:
        raise InvalidParameter(f"turns are turn numbers like 1, 2; got {value!r}") from None


def block_of(row: Mapping[str, Any]) -> Block:
    """One editor row as a Block; InvalidParameter names the field that is wrong."""
    kind = row.get("kind")
    if _blank(kind):
        raise InvalidParameter(f"choose a kind ({', '.join(KINDS)})")
    kind = str(kind)
    if kind not in KINDS:
        raise InvalidParameter(f"unknown block kind {kind!r}; one of {', '.join(KINDS)}")
    options: dict[str, Any] = {}
    for name in ("budget", *KIND_FIELDS[kind]):
        value: Any = row.get(name)
        if _blank(value):
            continue
        if name in WHOLE:
            options[name] = _whole(value, name)
        elif name in NUMBER:
            options[name] = float(value)
        elif name == "turns":
            options[name] = _turns(value)
        elif name == "note":
            options[name] = bool(value)
        else:
            options[name] = str(value)
    return Block(kind, **options)


def where(message: str) -> str:
    """The field a composition-level message is about (FIELDS)."""
    lowered = message.lower()
    if "give_way" in lowered or "give way" in lowered:
        return "give_way"
    if "name" in lowered:
        return "name"
    if lowered.startswith("budget") or any(
        k in lowered for k in ("overall budget", ": budget", "composition's budget")
    ):
        return "budget"
    return "blocks"


def check(draft: Draft) -> Checked:
    """Build the composition a draft describes; every problem is attached to its field."""
    problems: dict[str, list[str]] = {}
    blocks: list[Block] = []
    rows = draft.blocks.to_dict("records")
    ordered = sorted(
        enumerate(rows), key=lambda p: (_blank(p[1].get("order")), p[1].get("order") or 0, p[0])
    )
    for position, (_, row) in enumerate(ordered, start=1):
        try:
            blocks.append(block_of(row))
        except (InvalidParameter, ValueError, TypeError) as exc:
            kind = "" if _blank(row.get("kind")) else f" ({row.get('kind')})"
            problems.setdefault("blocks", []).append(f"Block {position}{kind}: {exc}")
    if not rows:
        problems.setdefault("blocks", []).append("Add at least one block.")
    if problems:
        return Checked(None, {k: tuple(v) for k, v in problems.items()})
    try:
        composition = Composition(
            name=draft.name.strip(),
            blocks=tuple(blocks),
            budget=draft.budget,
            give_way=tuple(draft.give_way),
            title=draft.title.strip(),
            description=draft.description.strip(),
        )
    except InvalidParameter as exc:
        return Checked(None, {where(str(exc)): (str(exc),)})
    return Checked(composition, {})


def give_way_options(frame: pd.DataFrame) -> list[str]:
    """The kinds in the table that may give way (pinned never does), in send order."""
    kinds = [str(k) for k in frame.get("kind", pd.Series(dtype=object)).tolist() if not _blank(k)]
    return [k for k in dict.fromkeys(kinds) if k in KINDS and k != "pinned"]


def draft_of(composition: Composition) -> Draft:
    return Draft(
        composition.name,
        composition.title,
        composition.description,
        composition.budget,
        composition.give_way,
        blocks_frame(composition),
    )


def start_options() -> dict[str, tuple[str, Composition]]:
    """Every registered strategy that can be written as blocks, by a label: its name and
    its composition."""
    out: dict[str, tuple[str, Composition]] = {}
    for name, spec in REGISTRY.items():
        try:
            comp = spec.composition or builtin_composition(name)
        except InvalidParameter:
            continue  # a strategy of its own code (no blocks form): nothing to start from
        kind = "composition" if spec.composition else "built-in"
        out[f"{name} ({kind})"] = (name, comp)
    return out
