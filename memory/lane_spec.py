"""A lane spec: which strategy a lane runs, with which parameters, on which model.

The one type every face uses for that: the sidebar and pages (with a `ProviderChoice` as the
lane's own provider), a running session (`ProviderSettings`), the sweeps, the tuner, the
recall benchmark (token budgets as shares of a conversation's full buffer) and saved files.
Its text form (`parse_spec("window:k=3")`), its saved forms (`as_dict` / `from_dict`) and the
lab's three label rules live here:

- `LaneSpec.label`: the registry's label, ``window (k=3)`` (tables, charts, CLI output);
- `LaneSpec.sized_label`: every parameter off its default and budgets as shares,
  ``token_window (budget=5.0% of full)`` (recall rows; benchmark checkpoints are keyed by it);
- `lane_labels`: what tells a session's lanes apart, the bare name when the strategy runs in
  one lane only (saved sessions of every age read the same), else the differing parameters
  and the lane's own model.

May import memory/ only; a lane's own provider is whatever the caller's layer uses, as long
as it can say which model it calls (`OwnModel`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic, Protocol

from typing_extensions import TypeVar

from memory.errors import InvalidParameter, UnknownStrategy
from memory.maintenance import NO_UPKEEP, Upkeep
from memory.registry import REGISTRY, create, spec
from memory.strategies.base import Strategy
from memory.tokens import TokenCounter

LABEL_LIMIT = 64  # the store's lane column holds this many characters
MIN_SIZED_BUDGET = 200  # a budget sized from a share never goes below this many tokens


class OwnModel(Protocol):
    """A lane's own provider, as far as its label cares."""

    def lane_model(self) -> tuple[str, str]:
        """The model it calls and where (a preset name or API kind)."""
        ...


P = TypeVar("P", bound=OwnModel, default=OwnModel)


@dataclass(frozen=True)
class LaneSpec(Generic[P]):
    """A strategy by registry `name` with the `params` that differ from its defaults.

    `shares` maps a token parameter to a share of a conversation's full buffer (`resolve`
    turns it into tokens); `provider` is the lane's own provider (None: the session's);
    `lane_label` is its label in a session once given (`labelled`)."""

    name: str
    params: Mapping[str, Any] = field(default_factory=dict)
    shares: Mapping[str, float] = field(default_factory=dict, kw_only=True)
    provider: P | None = field(default=None, kw_only=True)
    lane_label: str | None = field(default=None, kw_only=True)

    @property
    def label(self) -> str:
        """'window (k=3)': the name, then the values of its label parameters (registry)."""
        return spec(self.name).label(self.params)

    @property
    def sized_label(self) -> str:
        """The name, the parameters that differ from the defaults, budgets as % of full."""
        defaults = spec(self.name).defaults()
        extra = [f"{k}={v}" for k, v in self.params.items() if defaults.get(k) != v]
        extra += [f"{k}={p:.1%} of full" for k, p in self.shares.items()]
        return self.name + (f" ({', '.join(extra)})" if extra else "")

    @property
    def title(self) -> str:
        return spec(self.name).title

    def filled(self) -> dict[str, Any]:
        """Every parameter's value: the registry's defaults, then these."""
        defaults = REGISTRY[self.name].defaults() if self.name in REGISTRY else {}
        return {**defaults, **dict(self.params)}

    def model(self) -> tuple[str, str] | None:
        """The lane's own model and endpoint (None: the session's)."""
        return self.provider.lane_model() if self.provider is not None else None

    def same_lane(self, other: LaneSpec[Any]) -> bool:
        """Whether both run the same strategy, parameter values and model (keys aside)."""
        return (self.name, self.model(), self.filled()) == (
            other.name,
            other.model(),
            other.filled(),
        )

    def resolve(self, full: int) -> LaneSpec[P]:
        """The spec for a conversation whose full buffer is `full` tokens: shares sized."""
        sized = {k: max(MIN_SIZED_BUDGET, round(full * p)) for k, p in self.shares.items()}
        return replace(self, params={**self.params, **sized}, shares={})

    def create(
        self,
        system_prompt: str,
        *,
        counter: TokenCounter,
        upkeep: Upkeep = NO_UPKEEP,
    ) -> Strategy:
        """A fresh instance of this strategy with these parameters (the registry's `create`)."""
        return create(self.name, system_prompt, counter=counter, upkeep=upkeep, params=self.params)

    def as_dict(self) -> dict[str, Any]:
        """The saved form: name, params and label, and the shares when there are any."""
        data: dict[str, Any] = {"name": self.name, "params": dict(self.params)}
        if self.shares:
            return {**data, "shares": dict(self.shares)}
        return {**data, "label": self.label}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LaneSpec[Any]:
        """Any saved form: ``name`` or ``strategy`` (a session's lane), params, shares and a
        session's ``label``; the provider is never read from a file."""
        name = data.get("name") or data.get("strategy")
        if not isinstance(name, str) or not name:
            raise InvalidParameter(f"a saved lane names no strategy: {sorted(data)}")
        label = data.get("label") if "strategy" in data else None
        return LaneSpec(
            name,
            dict(data.get("params") or {}),
            shares={str(k): float(v) for k, v in (data.get("shares") or {}).items()},
            lane_label=str(label) if label else None,
        )


# ---- the text form ----------------------------------------------------------------------


def _coerce(name: str, key: str, raw: str) -> Any:
    params = {p.name: p for p in spec(name).params}
    if key not in params:
        allowed = ", ".join(params) or "none"
        raise InvalidParameter(f"{name} has no parameter {key!r}; it takes: {allowed}")
    default = params[key].default
    try:
        if isinstance(default, bool):
            lowered = raw.strip().lower()
            if lowered not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError(raw)
            value: Any = lowered in ("true", "1", "yes")
        elif isinstance(default, int):
            value = int(raw)
        elif isinstance(default, float):
            value = float(raw)
        else:
            value = raw.strip()
    except ValueError:
        kind = {bool: "true or false", int: "whole number", float: "number"}.get(
            type(default), "text"
        )
        raise InvalidParameter(f"{name}.{key} must be a {kind}, got {raw!r}") from None
    p = params[key]
    if p.choices and value not in p.choices:
        raise InvalidParameter(f"{name}.{key} must be one of {p.choices}, got {value!r}")
    if p.minimum is not None and value < p.minimum:
        raise InvalidParameter(f"{name}.{key} must be at least {p.minimum}, got {value!r}")
    if p.maximum is not None and value > p.maximum:
        raise InvalidParameter(f"{name}.{key} must be at most {p.maximum}, got {value!r}")
    return value


def parse_spec(text: str) -> LaneSpec:
    """'name' or 'name:key=value,key=value' -> a LaneSpec (errors say what is wrong).

    Values are typed after the parameter's default (int, float, bool or text) and checked
    against the registry's limits."""
    name, _, rest = text.strip().partition(":")
    name = name.strip()
    if name not in REGISTRY:
        raise UnknownStrategy(f"unknown strategy {name!r}; choose one of: {', '.join(REGISTRY)}")
    params: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, eq, raw = item.partition("=")
        if not eq:
            raise InvalidParameter(f"write parameters as key=value, got {item!r} in {text!r}")
        params[key.strip()] = _coerce(name, key.strip(), raw)
    return LaneSpec(name, params)


def parse_variants(text: str) -> list[LaneSpec]:
    """'window:k=10; summary_buffer:budget=1200' -> specs; an error names the bad part."""
    out: list[LaneSpec] = []
    for part in filter(None, (p.strip() for p in text.split(";"))):
        try:
            out.append(parse_spec(part))
        except (InvalidParameter, UnknownStrategy) as exc:
            raise InvalidParameter(f"extra variant {part!r}: {exc}") from None
    return out


# ---- a session's lane labels ------------------------------------------------------------


def _differing(group: Sequence[LaneSpec[Any]]) -> list[str]:
    """The parameter names whose values (defaults filled in) are not the same in every lane."""
    filled = [g.filled() for g in group]
    names = [p.name for p in spec(group[0].name).params]
    return [n for n in names if len({repr(f.get(n)) for f in filled}) > 1]


def _fit(label: str) -> str:
    return label if len(label) <= LABEL_LIMIT else label[: LABEL_LIMIT - 1].rstrip() + "…"


def lane_labels(lanes: Sequence[LaneSpec[Any]]) -> list[str]:
    """One label per lane, in order; ValueError when two lanes would be identical."""
    groups: dict[str, list[LaneSpec[Any]]] = {}
    for lane in lanes:
        groups.setdefault(lane.name, []).append(lane)
    labels = []
    for lane in lanes:
        group = groups[lane.name]
        label = lane.name
        differing = _differing(group) if len(group) > 1 else []
        if differing:
            values = lane.filled()
            label += " (" + ", ".join(f"{n}={values[n]}" for n in differing) + ")"
        own = lane.model()
        if own is not None and own[0]:
            model, endpoint = own
            models = [m[0] for g in group if g.filled() == lane.filled() and (m := g.model())]
            tie = endpoint and models.count(model) > 1
            label += f" · {model}" + (f" ({endpoint})" if tie else "")
        labels.append(_fit(label))
    seen: set[str] = set()
    for label in labels:
        if label in seen:
            raise ValueError(
                f"two lanes would be identical ({label}): give one other parameters or a model"
            )
        seen.add(label)
    return labels


def labelled(specs: Sequence[LaneSpec[P]]) -> list[LaneSpec[P]]:
    """The specs with every lane label filled in (given ones kept); ValueError on a repeat."""
    made = lane_labels(specs)
    out = [replace(s, lane_label=s.lane_label or made[i]) for i, s in enumerate(specs)]
    labels = [s.lane_label for s in out]
    wrong = [s.lane_label for s in out if str(s.lane_label).split(" ", 1)[0] != s.name]
    if wrong:
        raise ValueError(f"a lane's label starts with its strategy's name; got {wrong}")
    if len(set(labels)) != len(labels):
        raise ValueError(f"each lane needs its own label; got {labels}")
    return out


def strategy_of(label: str, known: Mapping[str, Any]) -> str:
    """The strategy a label starts with (the label itself when it names none in `known`)."""
    head = label.split(" ", 1)[0]
    return head if head in known else label
