"""The compositions a saved session carries (memory/compose.py): a session whose lanes run
compositions keeps their JSON under ``settings["compositions"]`` (storage/records.py writes
it), and `adopt` registers the ones this process lacks when the session is loaded or
imported, so it opens on another machine. Touches only the strategy registry."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from memory.compose import Composition
from memory.errors import InvalidParameter
from memory.registry import REGISTRY, register_composition


def register_missing(compositions: Iterable[Composition]) -> tuple[str, ...]:
    """Register the compositions whose names are free; one already registered under the same
    name is left as it is (same definition, or the running one wins)."""
    added = []
    for composition in compositions:
        if composition.name not in REGISTRY:
            register_composition(composition)
            added.append(composition.name)
    return tuple(added)


def carried(settings: Mapping[str, Any]) -> list[Composition]:
    """The compositions a saved session's settings carry; InvalidParameter naming the entry."""
    raw = settings.get("compositions") or []
    if not isinstance(raw, list):
        raise InvalidParameter("settings.compositions: a list of compositions is required")
    out = []
    for i, data in enumerate(raw):
        try:
            out.append(Composition.from_dict(data))
        except InvalidParameter as exc:
            raise InvalidParameter(f"settings.compositions[{i}]: {exc}") from None
    return out


def adopt(settings: Mapping[str, Any]) -> tuple[str, ...]:
    """Register the compositions a saved session carries that this process lacks."""
    return register_missing(carried(settings))


def lane_compositions(strategies: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The JSON of the compositions that lanes run (`strategies`: lane -> Strategy), for a
    saved session's settings."""
    out = []
    for strategy in strategies.values():
        composition = getattr(type(strategy), "composition", None)
        if isinstance(composition, Composition):
            out.append(json.loads(composition.to_json()))
    return out
