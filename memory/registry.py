"""The registry of strategies by name: each one's parameters, defaults, limits and colour.

A strategy describes itself here, once: its title and one-line description (class
attributes), the parameters it takes (and which of them name a variant in labels, e.g.
"window (k=3)"), and the colour every chart and export draws it in. Adding a strategy: one
module under memory/strategies/, one `register(...)` line below, tests. Every page, the CLI
and the exports read the registry; nothing else lists the strategies.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from memory.compose import Composition
from memory.errors import DuplicateStrategy, InvalidParameter, UnknownStrategy
from memory.maintenance import NO_UPKEEP, Upkeep
from memory.ranking import DEFAULT_RANKING, RANKINGS
from memory.strategies.base import Strategy
from memory.strategies.composed import Composed, composed_class
from memory.strategies.entity import EntityMemory
from memory.strategies.full import FullBuffer
from memory.strategies.hybrid import Hybrid
from memory.strategies.retrieval import Retrieval
from memory.strategies.summary import RunningSummary
from memory.strategies.summary_buffer import SummaryBuffer
from memory.strategies.token_window import TokenWindow
from memory.strategies.window import SlidingWindow
from memory.tokens import TokenCounter


@dataclass(frozen=True)
class Param:
    """One tunable parameter of a strategy, as the UI and the CLI show it."""

    name: str
    default: Any
    help: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[Any, ...] = ()
    in_label: bool = False  # part of a variant's label: "window (k=3)"


@dataclass(frozen=True)
class StrategySpec:
    """A registered strategy: its class and the parameters it accepts."""

    name: str
    cls: type[Strategy]
    params: tuple[Param, ...]
    color: str
    composition: Composition | None = None  # set for a strategy made of blocks

    @property
    def title(self) -> str:
        return self.cls.title

    @property
    def description(self) -> str:
        return self.cls.description

    @property
    def needs_model(self) -> bool:
        """True when the strategy makes maintenance calls (summaries or extraction)."""
        return self.cls.uses_summary or self.cls.uses_facts

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def label_values(self, params: Mapping[str, Any] | None = None) -> str:
        """'k=3, top_k=2': the values (defaults filled in) of the parameters that tell
        variants apart in a label; '' when the strategy has none."""
        values = {**self.defaults(), **dict(params or {})}
        return ", ".join(f"{p.name}={_show(values[p.name])}" for p in self.params if p.in_label)

    def label(self, params: Mapping[str, Any] | None = None) -> str:
        """'window (k=3)': the name, then the values of the parameters marked `in_label`."""
        shown = self.label_values(params)
        return f"{self.name} ({shown})" if shown else self.name


def _show(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


REGISTRY: dict[str, StrategySpec] = {}

# Colours for strategies registered without one, taken in turn (distinct from the built-ins).
SPARE_COLORS = ("#1565C0", "#AD1457", "#6D4C41", "#00838F", "#9E9D24", "#4527A0")


def register(cls: type[Strategy], *params: Param, color: str | None = None) -> StrategySpec:
    """Add a strategy class under its `name`, with its parameters and chart colour (a spare
    colour when none is given); a name can be registered once."""
    if cls.name in REGISTRY:
        raise DuplicateStrategy(f"a strategy named {cls.name!r} is already registered")
    shade = color or SPARE_COLORS[len(REGISTRY) % len(SPARE_COLORS)]
    spec = StrategySpec(cls.name, cls, params, shade)
    REGISTRY[cls.name] = spec
    return spec


def unregister(name: str) -> None:
    """Remove a registered strategy (for tests that register a throwaway one)."""
    REGISTRY.pop(name, None)


RANKING_HELP = (
    "how older turns are ranked: bridged (BM25 + names, query expansion, sessions, relative "
    "time) or bm25 (plain)"
)
# help text and limits of a composition's parameters (memory/compose.py names them)
_COMPOSED_PARAMS: dict[str, tuple[str, float | None, float | None]] = {
    "budget": ("token budget for the whole prompt", 1, 1_000_000),
    "pinned_first": ("the first N turns are always sent", 0, 1000),
    "pinned_budget": ("token budget for the pinned turns", 0, 1_000_000),
    "summary_budget": ("most tokens the summary may take", 1, 1_000_000),
    "summary_trigger": ("fold once the prompt passes this share of the budget", 0.05, 1.0),
    "summary_fold_to": ("fold down to this share of the budget", 0.05, 1.0),
    "summary_placement": ("where the summary goes", None, None),
    "summary_note": ("tell the model that earlier turns were summarised", None, None),
    "facts_budget": ("most tokens the known-facts block may take", 0, 1_000_000),
    "retrieved_top_k": ("most older turns retrieved by relevance", 0, 1000),
    "retrieved_budget": ("token budget for the retrieved turns", 0, 1_000_000),
    "retrieved_share": ("share of the overall budget for retrieved turns", 0.0, 0.9),
    "retrieved_neighbours": ("weight of neighbouring turns' scores", 0.0, 1.0),
    "retrieved_ranking": (RANKING_HELP, None, None),
    "recent_k": ("recent turns kept verbatim", 0, 1000),
    "recent_budget": ("token budget for the recent turns", 0, 1_000_000),
}
_CHOICES: dict[str, tuple[Any, ...]] = {
    "summary_placement": ("system", "message"),
    "summary_note": (False, True),
    "retrieved_ranking": tuple(RANKINGS),
}


def composition_params(composition: Composition) -> tuple[Param, ...]:
    """The Params of a composition: its overall `budget` first (the tuner's size), then each
    block's numbers and choices by clear names (`recent_k`, `summary_budget`, ...)."""
    out: list[Param] = []
    for name, value in composition.values().items():
        text, low, high = _COMPOSED_PARAMS[name]
        in_label = name in ("budget", "recent_k") or (name == "recent_budget" and not out)
        out.append(Param(name, value, text, low, high, _CHOICES.get(name, ()), in_label))
    return tuple(out)


def register_composition(composition: Composition, *, color: str | None = None) -> StrategySpec:
    """Register a composition as a strategy like any other (its own spare colour unless one is
    given); a name that is taken (a built-in, another composition) is refused."""
    cls = composed_class(composition)
    if cls.name in REGISTRY:
        raise DuplicateStrategy(
            f"a strategy named {cls.name!r} is already registered: rename the composition"
        )
    taken = {s.color for s in REGISTRY.values()}
    spare = [c for c in SPARE_COLORS if c not in taken] or list(SPARE_COLORS)
    shade = color or spare[0]
    params = composition_params(composition)
    spec_ = StrategySpec(cls.name, cls, params, shade, composition)
    REGISTRY[cls.name] = spec_
    return spec_


def unregister_composition(name: str) -> None:
    """Remove a registered composition; a built-in strategy cannot be removed this way."""
    found = REGISTRY.get(name)
    if found is not None and found.composition is None:
        raise InvalidParameter(f"{name!r} is a built-in strategy, not a composition")
    REGISTRY.pop(name, None)


def compositions() -> tuple[Composition, ...]:
    """The registered compositions, in registration order."""
    return tuple(s.composition for s in REGISTRY.values() if s.composition is not None)


K = Param("k", 3, "recent turns kept verbatim", minimum=0, maximum=100, in_label=True)
BUDGET = Param(
    "budget",
    600,
    "token budget for the whole prompt",
    minimum=1,
    maximum=1_000_000,
    in_label=True,
)
TRIGGER = Param(
    "trigger",
    0.8,
    "fold old turns when the prompt passes this share of the budget",
    minimum=0.05,
    maximum=1.0,
)
PLACEMENT = Param(
    "summary_placement", "system", "where the summary goes", choices=("system", "message")
)
NOTE = Param(
    "summary_note",
    False,
    "tell the model that earlier turns were summarised",
    choices=(False, True),
)

RANKING = Param("ranking", DEFAULT_RANKING, RANKING_HELP, choices=tuple(RANKINGS))

register(FullBuffer, color="#7B3FE4")
register(SlidingWindow, K, color="#E4572E")
register(TokenWindow, BUDGET, color="#F3A712")
register(RunningSummary, PLACEMENT, NOTE, color="#29B6F6")
FOLD_TO = Param(
    "fold_to",
    0.5,
    "once triggered, fold old turns until the prompt is at most this share of the budget",
    minimum=0.05,
    maximum=1.0,
)

register(SummaryBuffer, BUDGET, TRIGGER, FOLD_TO, PLACEMENT, NOTE, color="#0B7A75")
GROUNDED = Param(
    "grounded",
    True,
    "store only extracted values traced to their turn (a number in any form, a name as "
    "written, a phrase by its words); the others are dropped and shown",
    choices=(True, False),
)
register(EntityMemory, replace(K, default=2), GROUNDED, color="#D81B60")
register(
    Hybrid,
    replace(BUDGET, default=800),
    TRIGGER,
    FOLD_TO,
    PLACEMENT,
    NOTE,
    Param(
        "recall_share",
        0.5,
        "share of the budget for older turns retrieved by relevance (0: none)",
        minimum=0.0,
        maximum=0.9,
    ),
    RANKING,
    GROUNDED,
    color="#2E7D32",
)
register(
    Retrieval,
    replace(K, default=2),
    Param("top_k", 200, "most older turns retrieved by relevance", minimum=0, maximum=200),
    Param(
        "recall_budget",
        4000,
        "token budget for the retrieved turns (0: no cap, top_k alone)",
        minimum=0,
        maximum=1_000_000,
        in_label=True,
    ),
    Param(
        "neighbours",
        0.25,
        "weight of the neighbouring turns' scores in a turn's score",
        minimum=0.0,
        maximum=1.0,
    ),
    RANKING,
    color="#5D4037",
)

DEFAULT_LANES: tuple[str, ...] = (
    "full",
    "window",
    "token_window",
    "summary_buffer",
    "entity",
    "hybrid",
)


def builtin_composition(name: str, params: Mapping[str, Any] | None = None) -> Composition:
    """The blocks the built-in strategy `name` declares at `params` (registry defaults filled
    in), as a composition of its own (`composed_<name>`) to start the Composer from."""
    s = spec(name)
    # only a class that declares its own blocks is described by them: a subclass that
    # inherits `declare` and changes how it builds (or what it takes) is not
    if s.composition is not None or not issubclass(s.cls, Composed) or "declare" not in vars(s.cls):
        raise InvalidParameter(f"{name!r} is not a built-in strategy made of blocks")
    comp = s.cls.declare(**{**s.defaults(), **dict(params or {})})
    return replace(
        comp,
        name=f"composed_{name}",
        title=f"{s.title} (composed)",
        description=f"The {name} strategy, built from blocks.",
    )


def spec(name: str) -> StrategySpec:
    """The registered strategy `name`; UnknownStrategy lists the names that exist."""
    try:
        return REGISTRY[name]
    except KeyError:
        known = ", ".join(REGISTRY)
        raise UnknownStrategy(f"unknown strategy {name!r}; choose one of: {known}") from None


def create(
    name: str,
    system_prompt: str,
    *,
    counter: TokenCounter,
    upkeep: Upkeep = NO_UPKEEP,
    params: Mapping[str, Any] | None = None,
) -> Strategy:
    """A new strategy instance with `params` checked against the spec (unknown names refused)."""
    s = spec(name)
    given = dict(params or {})
    allowed = {p.name: p for p in s.params}
    unknown = sorted(set(given) - set(allowed))
    if unknown:
        raise InvalidParameter(
            f"{name} has no parameter {', '.join(unknown)}; it takes: {', '.join(allowed) or 'none'}"
        )
    for key, value in given.items():
        p = allowed[key]
        if p.choices and value not in p.choices:
            raise InvalidParameter(f"{name}.{key} must be one of {p.choices}, got {value!r}")
        if p.minimum is not None and isinstance(value, int | float) and value < p.minimum:
            raise InvalidParameter(f"{name}.{key} must be at least {p.minimum}, got {value!r}")
        if p.maximum is not None and isinstance(value, int | float) and value > p.maximum:
            raise InvalidParameter(f"{name}.{key} must be at most {p.maximum}, got {value!r}")
    options: dict[str, Any] = {**s.defaults(), **given}
    factory: Callable[..., Strategy] = s.cls
    return factory(system_prompt, counter=counter, upkeep=upkeep, **options)
