"""The anatomy of one lane turn's request, as plain values: its parts (the memory core's own
account, read from `TurnAccount.parts`), the window and reply reserve it had to fit, its upkeep
calls, what each part holds (for hover labels) and warnings. present/anatomy.py draws them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lanes.lane import LaneTurn
from memory.types import Part

# one colour per part (Okabe–Ito, readable for colour-blind viewers), the same on every lane
PART_LABELS: dict[str, str] = {
    "system": "System prompt",
    "facts": "Known facts",
    "summary": "Summary",
    "pinned": "Pinned turns",
    "retrieved": "Retrieved turns",
    "recent": "Recent turns",
    "new_message": "New message",
    "framing": "Chat framing",
}
PART_COLORS: dict[str, str] = {
    "system": "#3F4B5B",
    "facts": "#E69F00",
    "summary": "#56B4E9",
    "pinned": "#8C6BB1",
    "retrieved": "#CC79A7",
    "recent": "#0072B2",
    "new_message": "#D55E00",
    "framing": "#B8C0CC",
}
RESERVE_LABEL, RESERVE_COLOR = "Reply reserve", "#F0E442"
FREE_LABEL, FREE_COLOR = "Free space", "#EEF2F6"
UPKEEP_LABEL, UPKEEP_COLOR = "Upkeep calls (outside the request)", "#009E73"
NEAR_FULL = 0.8  # share of the window (request + reply reserve) that earns a warning
CROWDING = 0.5  # share of the request one memory part may take before it is called out
OFF_SCALE = 8.0  # a window this many times the largest bar is noted, not drawn


@dataclass(frozen=True)
class Anatomy:
    """One lane's request at one turn, by part, with the window it had to fit."""

    lane: str
    turn: int
    parts: tuple[Part, ...]
    upkeep: tuple[tuple[str, int], ...]  # (kind, tokens) of this turn's upkeep calls
    facts: tuple[str, ...]  # the known-facts keys the facts block holds
    budget: int | None
    window: int | None
    reserve: int

    @property
    def total(self) -> int:
        return sum(p.tokens for p in self.parts)

    @property
    def upkeep_tokens(self) -> int:
        return sum(t for _, t in self.upkeep)

    @property
    def free(self) -> int | None:
        """Tokens of the window left after the request and the reply's reserve."""
        if not self.window:
            return None
        return max(0, self.window - self.total - self.reserve)

    def tokens(self, part: str) -> int:
        return next((p.tokens for p in self.parts if p.name == part), 0)


def anatomy_of(record: LaneTurn, *, window: int | None, reserve: int) -> Anatomy | None:
    """The anatomy of a lane turn that sent a request (None: nothing sent, or saved before
    requests carried their parts)."""
    if not drawable(record):
        return None
    parts = record.account.parts
    upkeep: dict[str, int] = {}
    for call in record.maintenance:
        upkeep[call.kind] = upkeep.get(call.kind, 0) + call.tokens
    return Anatomy(
        lane=record.lane,
        turn=record.turn,
        parts=tuple(parts),
        upkeep=tuple(upkeep.items()),
        facts=tuple(sorted(record.account.facts or {})),
        budget=record.account.budget,
        window=window,
        reserve=max(0, reserve),
    )


def drawable(record: LaneTurn) -> bool:
    """Whether a lane turn has an anatomy: it sent a request that carried its parts."""
    return bool(record.account.parts and record.counted)


def has_anatomy(records: Mapping[str, Sequence[LaneTurn]], *, turn: int | None = None) -> bool:
    """Whether any lane's turn (`turn`'s, or any) has an anatomy: turns saved before requests
    carried their parts have none, and draw as empty axes."""
    return any(drawable(r) for rs in records.values() for r in rs if turn is None or r.turn == turn)


def turn_ranges(turns: Sequence[int]) -> str:
    """[1, 2, 3, 5] -> '1–3, 5'."""
    out: list[str] = []
    start = prev = None
    for t in [*turns, None]:
        if start is not None and t == prev + 1:  # type: ignore[operator]
            prev = t
            continue
        if start is not None:
            out.append(f"{start}" if start == prev else f"{start}–{prev}")
        start = prev = t
    return ", ".join(out)


def holds(anatomy: Anatomy, part: Part) -> str:
    """What a part holds, for its hover label: the turns, or what it is."""
    turns = turn_ranges(part.turns)
    if part.name == "system":
        return "the system prompt, unchanged"
    if part.name == "facts":
        keys = ", ".join(anatomy.facts[:8]) + (" …" if len(anatomy.facts) > 8 else "")
        return f"facts: {keys}" if keys else "no facts yet"
    if part.name == "summary":
        return f"summarises turns {turns}" if turns else "no summary yet"
    if part.name in ("pinned", "retrieved", "recent"):
        return f"turns {turns}" if turns else "no turns"
    if part.name == "new_message":
        return f"turn {anatomy.turn}'s message"
    return "role markers per message (an estimate)"


def warnings(anatomy: Anatomy, title: str) -> list[str]:
    """Plain-language warnings: the window nearly full, or one memory part crowding the rest."""
    out = []
    if anatomy.window:
        share = (anatomy.total + anatomy.reserve) / anatomy.window
        if share >= NEAR_FULL:
            out.append(f"{title}: request and reply reserve fill {share:.0%} of the context window")
    for part in ("facts", "summary", "retrieved"):
        share = anatomy.tokens(part) / anatomy.total if anatomy.total else 0.0
        if share >= CROWDING:
            out.append(f"{title}: {PART_LABELS[part].lower()} take {share:.0%} of the request")
    return out


def turn_warnings(
    records: Mapping[str, Sequence[LaneTurn]],
    titles: Mapping[str, str],
    *,
    turn: int,
    window: int | None,
    reserve: int,
) -> list[str]:
    """Every lane's warnings at `turn` (see `warnings`)."""
    out: list[str] = []
    for name, recs in records.items():
        record = next((r for r in recs if r.turn == turn), None)
        anatomy = anatomy_of(record, window=window, reserve=reserve) if record else None
        if anatomy is not None:
            out += warnings(anatomy, titles.get(name, name))
    return out


def ungrounded_lines(
    records: Mapping[str, Sequence[LaneTurn]], titles: Mapping[str, str], *, turn: int
) -> list[str]:
    """One line per lane whose fact extraction, up to `turn`, returned values that could not
    be traced to their turn (and so were not stored): how many, and which."""
    out: list[str] = []
    for name, recs in records.items():
        dropped = [
            f"turn {r.turn}: {value}"
            for r in recs
            if r.turn <= turn
            for call in r.maintenance
            for value in call.ungrounded
        ]
        if dropped:
            shown = "; ".join(dropped[:6]) + (
                f"; … {len(dropped) - 6} more" if len(dropped) > 6 else ""
            )
            out.append(
                f"{titles.get(name, name)}: {len(dropped)} extracted "
                f"value{'s' if len(dropped) != 1 else ''} not stored, not in their turn ({shown})"
            )
    return out
