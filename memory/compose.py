"""Compositions: a memory strategy assembled from blocks, as plain frozen data (no code).

A block is one source of context, each with its own optional token `budget`:

- "pinned": given turns (`turns`, e.g. (1,)) and/or the first `first` turns, always sent
  verbatim; it never gives way (if it does not fit, the request overflows and says so).
- "summary": a running summary in the system text (or as a message pair). Fold policy
  "every_turn" folds every turn after it is answered (except the last `count` turns a recent
  block keeps by count), like the `summary` strategy; "threshold" folds the oldest turns once
  the resting prompt passes `trigger` x the overall budget, down to `fold_to` x budget, like
  `summary_buffer`. Its budget caps the summary's own tokens.
- "facts": the extracted fact store ("Known facts about the user: {...}") in the system text;
  over its budget it is left out of that request.
- "retrieved": older turns ranked against the new message by its `ranking` (memory/ranking.py:
  "bridged", BM25 with the vocabulary-bridging terms, or plain "bm25"; `neighbours` weight),
  packed best first into its budget and/or `share` of the overall budget, at most `top_k`.
- "recent": the newest turns not summarised, the last `count` of them and/or the newest that
  fit its budget in tokens.

The composition's overall `budget` (optional) bounds the whole prompt; when it is tight the
blocks in `give_way` give way in that order (the first named first), then any unnamed ones in
the order recent, retrieved, summary, facts. A summary or facts block gives way by being left
out of that request; a turn block by dropping its oldest (recent) or weakest (retrieved) turns,
as many as it must: the turn blocks take the room the others leave, the one that gives way last
first. The system prompt, the pinned turns and the new message never give way: if they do not
fit, ContextOverflow names them. The payload format is the built-in strategies' own
(memory/strategies/base.py): facts and summary in the system text, then the turns in
conversation order (so the order of `blocks` is the order they are listed and described in,
not a wire order), then the new message. memory/strategies/composed.py runs a composition;
every built-in strategy declares one (memory/strategies/*.py).

May import: memory/errors.py, memory/jsontext.py and memory/ranking.py (plain data: no
strategy, no registry).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, Literal

from memory.errors import InvalidParameter
from memory.jsontext import decoded, parse_json
from memory.ranking import DEFAULT_RANKING, RANKINGS

FORMAT = 1  # the version of the JSON form `Composition.to_dict` writes
KINDS: tuple[str, ...] = ("pinned", "summary", "facts", "retrieved", "recent")
# the order unnamed blocks give way in, after those the composition names
DEFAULT_GIVE_WAY: tuple[str, ...] = ("recent", "retrieved", "summary", "facts")
POLICIES: tuple[str, ...] = ("every_turn", "threshold")
PLACEMENTS: tuple[str, ...] = ("system", "message")
# the fields each kind of block takes besides `kind` and `budget`
KIND_FIELDS: dict[str, tuple[str, ...]] = {
    "pinned": ("turns", "first"),
    "summary": ("policy", "trigger", "fold_to", "placement", "note"),
    "facts": (),
    "retrieved": ("top_k", "share", "neighbours", "ranking"),
    "recent": ("count",),
}
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")

Kind = Literal["pinned", "summary", "facts", "retrieved", "recent"]


@dataclass(frozen=True)
class Block:
    """One block of a composition; fields that do not apply to its kind keep their defaults."""

    kind: str
    budget: int | None = None  # tokens this block may take (None: no cap of its own)
    turns: tuple[int, ...] = ()  # pinned: these turns
    first: int = 0  # pinned: and the first N turns
    policy: str = "every_turn"  # summary: fold policy
    trigger: float = 0.8  # summary (threshold): fold once resting tokens pass trigger x budget
    fold_to: float = 0.5  # summary (threshold): down to fold_to x budget
    placement: str = "system"  # summary: in the system text or as a message pair
    note: bool = False  # summary: tell the model that earlier turns were summarised
    top_k: int | None = None  # retrieved: most turns (None: no limit)
    share: float | None = None  # retrieved: share of the overall budget for this block
    neighbours: float = 0.25  # retrieved: weight of neighbouring turns' scores
    ranking: str = DEFAULT_RANKING  # retrieved: a name in memory/ranking.py's RANKINGS
    count: int | None = None  # recent: the last N turns (None: by tokens, or all)
    # facts: store only values traced to their turn (memory/grounding.py); kept apart from
    # KIND_FIELDS, which are the Composer's editable columns
    grounded: bool = True

    def __post_init__(self) -> None:
        where = f"the {self.kind!r} block"
        if self.kind not in KINDS:
            raise InvalidParameter(
                f"unknown block kind {self.kind!r}; a block is one of: {', '.join(KINDS)}"
            )
        _whole(self.budget, f"{where}: budget", minimum=0, optional=True)
        defaults = Block.__dataclass_fields__
        for name in _ALL_OPTIONS:
            if name not in KIND_FIELDS[self.kind] and getattr(self, name) != defaults[name].default:
                raise InvalidParameter(f"{where} takes no {name!r} (it takes: {_takes(self.kind)})")
        if self.kind == "pinned":
            if not isinstance(self.turns, tuple) or any(
                isinstance(t, bool) or not isinstance(t, int) or t < 1 for t in self.turns
            ):
                raise InvalidParameter(
                    f"{where}: turns are turn numbers from 1, got {self.turns!r}"
                )
            if len(set(self.turns)) != len(self.turns):
                raise InvalidParameter(f"{where}: turns {self.turns!r} name a turn twice")
            _whole(self.first, f"{where}: first", minimum=0)
            if not self.turns and not self.first:
                raise InvalidParameter(f"{where} pins nothing: give turns or first (1 or more)")
        elif self.kind == "summary":
            _pick(self.policy, POLICIES, f"{where}: policy")
            _pick(self.placement, PLACEMENTS, f"{where}: placement")
            if not isinstance(self.note, bool):
                raise InvalidParameter(f"{where}: note is true or false, got {self.note!r}")
            _fraction(self.trigger, f"{where}: trigger", low=0.0, closed_low=False)
            _fraction(self.fold_to, f"{where}: fold_to", low=0.0, closed_low=False)
            if self.fold_to > self.trigger:
                raise InvalidParameter(
                    f"{where}: fold_to ({self.fold_to}) must be at most the trigger ({self.trigger})"
                )
        elif self.kind == "retrieved":
            _whole(self.top_k, f"{where}: top_k", minimum=0, optional=True)
            if self.share is not None:
                _fraction(self.share, f"{where}: share", low=0.0, high=0.9)
            _fraction(self.neighbours, f"{where}: neighbours", low=0.0)
            if not isinstance(self.ranking, str) or self.ranking not in RANKINGS:
                raise InvalidParameter(
                    f"{where}: ranking is one of {', '.join(RANKINGS)}; got {self.ranking!r}"
                )
        elif self.kind == "recent":
            _whole(self.count, f"{where}: count", minimum=0, optional=True)
        if not isinstance(self.grounded, bool):
            raise InvalidParameter(f"{where}: grounded is true or false, got {self.grounded!r}")
        if self.kind != "facts" and not self.grounded:
            raise InvalidParameter(f"{where} takes no 'grounded' (only a facts block does)")

    def to_dict(self) -> dict[str, Any]:
        """The block as JSON-ready data: its kind, its budget if set, and the fields of its kind."""
        out: dict[str, Any] = {"kind": self.kind}
        if self.budget is not None:
            out["budget"] = self.budget
        for name in KIND_FIELDS[self.kind]:
            value = getattr(self, name)
            out[name] = list(value) if isinstance(value, tuple) else value
        if not self.grounded:  # only a facts block may say so; the default is left out
            out["grounded"] = False
        return out


_ALL_OPTIONS: tuple[str, ...] = tuple(n for names in KIND_FIELDS.values() for n in names)


def _takes(kind: str) -> str:
    return ", ".join(("budget", *KIND_FIELDS[kind]))


def _whole(value: Any, what: str, *, minimum: int, optional: bool = False) -> None:
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidParameter(f"{what} is a whole number, got {value!r}")
    if value < minimum:
        raise InvalidParameter(f"{what} cannot be below {minimum}, got {value}")


def _fraction(
    value: Any, what: str, *, low: float, high: float = 1.0, closed_low: bool = True
) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidParameter(f"{what} is a number, got {value!r}")
    if value > high or value < low or (value == low and not closed_low):
        bracket = "[" if closed_low else "("
        raise InvalidParameter(f"{what} is a number in {bracket}{low}, {high}], got {value!r}")


def _pick(value: Any, allowed: tuple[str, ...], what: str) -> None:
    if value not in allowed:
        raise InvalidParameter(f"{what} is one of {', '.join(allowed)}; got {value!r}")


@dataclass(frozen=True)
class Composition:
    """A named strategy made of blocks (send order), an overall budget and a give-way order."""

    name: str
    blocks: tuple[Block, ...]
    budget: int | None = None
    give_way: tuple[str, ...] = ()
    title: str = ""
    description: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise InvalidParameter(
                f"a composition's name is 1-40 lowercase letters, digits or _, starting with a "
                f"letter; got {self.name!r}"
            )
        for what in ("title", "description"):
            if not isinstance(getattr(self, what), str):
                raise InvalidParameter(f"composition {self.name}: {what} must be text")
        if not isinstance(self.blocks, tuple) or not self.blocks:
            raise InvalidParameter(f"composition {self.name} has no blocks: add at least one")
        seen: set[str] = set()
        for block in self.blocks:
            if not isinstance(block, Block):
                raise InvalidParameter(f"composition {self.name}: {block!r} is not a Block")
            if block.kind in seen:
                raise InvalidParameter(
                    f"composition {self.name} has two {block.kind!r} blocks: one of each kind"
                )
            seen.add(block.kind)
        _whole(self.budget, f"composition {self.name}: budget", minimum=1, optional=True)
        self._check_give_way(seen)
        summary, retrieved = self.block("summary"), self.block("retrieved")
        if self.budget is None and summary is not None and summary.policy == "threshold":
            raise InvalidParameter(
                f"composition {self.name}: a 'threshold' summary folds at a share of the overall "
                "budget: set the composition's budget (or use the 'every_turn' policy)"
            )
        if self.budget is None and retrieved is not None and retrieved.share is not None:
            raise InvalidParameter(
                f"composition {self.name}: the retrieved block's share is of the overall budget: "
                "set the composition's budget (or give the block a budget of its own instead)"
            )

    def _check_give_way(self, present: set[str]) -> None:
        if not isinstance(self.give_way, tuple):
            raise InvalidParameter(f"composition {self.name}: give_way is a list of block kinds")
        for kind in self.give_way:
            if kind == "pinned":
                raise InvalidParameter(
                    f"composition {self.name}: pinned turns never give way; take 'pinned' out "
                    "of give_way"
                )
            if kind not in present:
                raise InvalidParameter(
                    f"composition {self.name}: give_way names {kind!r}, which is not one of its "
                    f"blocks ({', '.join(b.kind for b in self.blocks)})"
                )
        if len(set(self.give_way)) != len(self.give_way):
            raise InvalidParameter(f"composition {self.name}: give_way names a block twice")

    @property
    def uses_summary(self) -> bool:
        """True when it keeps a running summary (it needs a summariser model function)."""
        return self.block("summary") is not None

    @property
    def uses_facts(self) -> bool:
        """True when it keeps a fact store (it needs an extractor model function)."""
        return self.block("facts") is not None

    def block(self, kind: str) -> Block | None:
        """The block of that kind, or None."""
        return next((b for b in self.blocks if b.kind == kind), None)

    def yield_order(self) -> tuple[str, ...]:
        """Every block that can give way, first to give way first (pinned never does)."""
        present = {b.kind for b in self.blocks}
        rest = tuple(k for k in DEFAULT_GIVE_WAY if k in present and k not in self.give_way)
        return self.give_way + rest

    def to_dict(self) -> dict[str, Any]:
        """The composition as JSON-ready data (with its `format` version)."""
        return {
            "format": FORMAT,
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "budget": self.budget,
            "give_way": list(self.give_way),
            "blocks": [b.to_dict() for b in self.blocks],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: Any) -> Composition:
        """A composition from `to_dict` data; InvalidParameter naming the field otherwise."""
        if not isinstance(data, Mapping):
            raise InvalidParameter(f"a composition is a JSON object, got {type(data).__name__}")
        version = data.get("format")
        if version != FORMAT:
            raise InvalidParameter(
                f"composition format: this version reads format {FORMAT}, got {version!r}"
            )
        known = {"format", "name", "title", "description", "budget", "give_way", "blocks"}
        _no_unknown(data, known, "composition")
        if "name" not in data:
            raise InvalidParameter("composition: the 'name' field is missing")
        raw_blocks = data.get("blocks")
        if not isinstance(raw_blocks, list):
            raise InvalidParameter("composition blocks: a list of blocks is required")
        give_way = data.get("give_way", [])
        if not isinstance(give_way, list):
            raise InvalidParameter("composition give_way: a list of block kinds is required")
        blocks = tuple(_block_from(raw, i) for i, raw in enumerate(raw_blocks))
        return cls(
            name=data["name"],
            title=data.get("title", ""),
            description=data.get("description", ""),
            budget=data.get("budget"),
            give_way=tuple(give_way),
            blocks=blocks,
        )

    @classmethod
    def from_json(cls, text: str) -> Composition:
        """A composition from JSON text; InvalidParameter says what is wrong and where."""
        return cls.from_dict(parse_json(text, "the composition", InvalidParameter))

    # --- parameters, as the registry shows them ----------------------------------------------

    def values(self) -> dict[str, Any]:
        """The composition's tunable numbers and choices by parameter name (`budget` first,
        then per block: `recent_k`, `summary_budget`, ...), for the registry's Params."""
        out: dict[str, Any] = {}
        if self.budget is not None:
            out["budget"] = self.budget
        for block in self.blocks:
            for name, attr in _PARAMS[block.kind]:
                value = getattr(block, attr)
                unused = attr in ("trigger", "fold_to") and block.policy != "threshold"
                if value is not None and not unused and not (attr == "first" and not value):
                    out[name] = value
        return out

    def with_values(self, values: Mapping[str, Any]) -> Composition:
        """This composition with some `values` (names as in `values()`) changed."""
        known = self.values()
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise InvalidParameter(
                f"{self.name} has no parameter {', '.join(unknown)}; it takes: "
                f"{', '.join(known) or 'none'}"
            )
        budget = values.get("budget", self.budget)
        blocks = []
        for block in self.blocks:
            changes = {attr: values[name] for name, attr in _PARAMS[block.kind] if name in values}
            blocks.append(replace(block, **changes) if changes else block)
        return replace(self, budget=budget, blocks=tuple(blocks))


def read_composition(data: str | bytes, *, source: str = "the file") -> Composition:
    """A composition from an uploaded or saved JSON file (text or bytes); InvalidParameter
    says what is wrong with `source` (not UTF-8, not JSON, which field) and nothing is kept."""
    text = decoded(data, source, InvalidParameter).removeprefix("\ufeff")
    if not text.strip():
        raise InvalidParameter(f"{source} is empty: it should hold one composition as JSON")
    try:
        return Composition.from_json(text)
    except InvalidParameter as exc:
        raise InvalidParameter(f"{source}: {exc}") from None


# parameter name -> Block attribute, per kind (the names the registry and CLI show)
_PARAMS: dict[str, tuple[tuple[str, str], ...]] = {
    "pinned": (("pinned_first", "first"), ("pinned_budget", "budget")),
    "summary": (
        ("summary_budget", "budget"),
        ("summary_trigger", "trigger"),
        ("summary_fold_to", "fold_to"),
        ("summary_placement", "placement"),
        ("summary_note", "note"),
    ),
    "facts": (("facts_budget", "budget"),),
    "retrieved": (
        ("retrieved_top_k", "top_k"),
        ("retrieved_budget", "budget"),
        ("retrieved_share", "share"),
        ("retrieved_neighbours", "neighbours"),
        ("retrieved_ranking", "ranking"),
    ),
    "recent": (("recent_k", "count"), ("recent_budget", "budget")),
}


def _no_unknown(data: Mapping[str, Any], known: set[str], where: str) -> None:
    unknown = sorted(str(k) for k in data if k not in known)
    if unknown:
        raise InvalidParameter(
            f"{where}: unknown field {', '.join(repr(u) for u in unknown)} "
            f"(it takes: {', '.join(sorted(known))})"
        )


def _block_from(raw: Any, index: int) -> Block:
    where = f"composition blocks[{index}]"
    if not isinstance(raw, Mapping):
        raise InvalidParameter(f"{where}: a block is a JSON object, got {type(raw).__name__}")
    kind = raw.get("kind")
    if kind not in KINDS:
        raise InvalidParameter(f"{where}.kind: unknown block kind {kind!r}; one of {KINDS}")
    grounding = ("grounded",) if kind == "facts" else ()
    _no_unknown(raw, {"kind", "budget", *KIND_FIELDS[kind], *grounding}, f"{where} ({kind})")
    options = {k: v for k, v in raw.items() if k != "kind"}
    if "turns" in options:
        if not isinstance(options["turns"], list):
            raise InvalidParameter(f"{where}.turns: a list of turn numbers is required")
        options["turns"] = tuple(options["turns"])
    try:
        return Block(kind, **options)
    except InvalidParameter as error:
        raise InvalidParameter(f"{where}: {error}") from None


BLOCK_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Block))
