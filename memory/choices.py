"""A strategy as the lab's tools choose it: a registered name plus parameters, with a label.

`parse_choice("window:k=3")` reads the CLI form; values are typed after the parameter's
default (int, float, bool or text) and checked against the registry's limits.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from memory.errors import InvalidParameter, UnknownStrategy
from memory.maintenance import NO_UPKEEP, Upkeep
from memory.registry import REGISTRY, create, spec
from memory.strategies.base import Strategy
from memory.tokens import TokenCounter


@dataclass(frozen=True)
class StrategyChoice:
    """A strategy to run, by registry name, with the parameters that differ from defaults."""

    name: str
    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """'window (k=3)': the name, then the values of its label parameters (registry)."""
        return spec(self.name).label(self.params)

    @property
    def title(self) -> str:
        return spec(self.name).title

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "params": dict(self.params), "label": self.label}

    def create(
        self,
        system_prompt: str,
        *,
        counter: TokenCounter,
        upkeep: Upkeep = NO_UPKEEP,
    ) -> Strategy:
        """A fresh instance of this strategy with these parameters (the registry's `create`)."""
        return create(self.name, system_prompt, counter=counter, upkeep=upkeep, params=self.params)


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


def parse_choice(text: str) -> StrategyChoice:
    """'name' or 'name:key=value,key=value' -> a StrategyChoice (errors say what is wrong)."""
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
    return StrategyChoice(name, params)


def parse_variants(text: str) -> list[StrategyChoice]:
    """'window:k=10; summary_buffer:budget=1200' -> choices; an error names the bad part."""
    out: list[StrategyChoice] = []
    for part in filter(None, (p.strip() for p in text.split(";"))):
        try:
            out.append(parse_choice(part))
        except (InvalidParameter, UnknownStrategy) as exc:
            raise InvalidParameter(f"extra variant {part!r}: {exc}") from None
    return out
