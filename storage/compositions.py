"""Saved compositions (memory/compose.py) in the session database, and in saved sessions.

* ``ml_compositions``: one row per composition by name: its JSON (`Composition.to_json`),
  title and dates. Created by migration 4 (storage/schema.py).
* `CompositionStore`: the Store's methods to save, list, load and delete them, and to
  register every saved one (the app and the CLI do, so a saved composition runs anywhere).
* A saved session whose lanes run compositions carries their JSON under
  ``settings["compositions"]`` (storage/records.py writes it); `adopt` registers the ones this
  process lacks when the session is loaded or imported, so it opens on another machine.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from memory.compose import Composition
from memory.errors import InvalidParameter
from memory.registry import REGISTRY, register_composition
from storage.errors import StoreError

metadata = sa.MetaData()
compositions_t = sa.Table(
    "ml_compositions",
    metadata,
    sa.Column("name", sa.String(64), primary_key=True),
    sa.Column("title", sa.Text, nullable=False),
    sa.Column("definition", sa.Text, nullable=False),  # Composition.to_json()
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
)
_C = compositions_t.c


def _read_row(name: str, definition: str) -> Composition:
    try:
        return Composition.from_json(definition)
    except InvalidParameter as exc:
        raise StoreError(f"the saved composition {name!r} cannot be read: {exc}") from None


class CompositionStore:
    """The Store's saved compositions (a mixin: it uses the Store's transactions)."""

    def _write(self) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    def _read(self) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    def save_composition(self, composition: Composition) -> None:
        """Save (or replace) a composition under its name; a built-in's name is refused."""
        from storage.schema import now

        found = REGISTRY.get(composition.name)
        if found is not None and found.composition is None:
            raise InvalidParameter(
                f"{composition.name!r} is a built-in strategy: give the composition another name"
            )
        at = now()
        with self._write() as conn:
            exists = conn.execute(sa.select(_C.name).where(_C.name == composition.name)).first()
            values = {
                "name": composition.name,
                "title": composition.title,
                "definition": composition.to_json(),
                "updated_at": at,
            }
            if exists:
                conn.execute(sa.update(compositions_t).where(_C.name == composition.name), values)
            else:
                conn.execute(sa.insert(compositions_t), {**values, "created_at": at})

    def list_compositions(self) -> list[Composition]:
        """Every saved composition, by name."""
        with self._read() as conn:
            rows = conn.execute(sa.select(_C.name, _C.definition).order_by(_C.name)).all()
        return [_read_row(r.name, r.definition) for r in rows]

    def load_composition(self, name: str) -> Composition:
        with self._read() as conn:
            row = conn.execute(sa.select(_C.definition).where(_C.name == name)).first()
        if row is None:
            raise KeyError(f"no saved composition named {name!r}")
        return _read_row(name, row.definition)

    def delete_composition(self, name: str) -> bool:
        """Delete a saved composition (it stays registered in running processes)."""
        with self._write() as conn:
            result = conn.execute(sa.delete(compositions_t).where(_C.name == name))
        return bool(result.rowcount)

    def register_saved_compositions(self) -> tuple[str, ...]:
        """Register every saved composition this process lacks; returns their names."""
        return register_missing(self.list_compositions())


def register_missing(compositions: Iterator[Composition] | list[Composition]) -> tuple[str, ...]:
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
