"""Saved compositions (memory/compose.py) in the app's database (``ml_compositions``, one row
per composition by name: its JSON, title and dates). `Compositions` is the repository's
collaborator for them: save, list, load, delete, and register every saved one (the app and
the CLI do, so a saved composition runs anywhere). Touches only that table."""

from __future__ import annotations

import sqlalchemy as sa

from memory.compose import Composition
from memory.errors import InvalidParameter
from memory.registry import REGISTRY
from storage.carried import register_missing
from storage.database import Database
from storage.errors import StoreError
from storage.tables import compositions_t, now

_C = compositions_t.c


def _read_row(name: str, definition: str) -> Composition:
    try:
        return Composition.from_json(definition)
    except InvalidParameter as exc:
        raise StoreError(f"the saved composition {name!r} cannot be read: {exc}") from None


class Compositions:
    """The saved compositions of one database."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def save(self, composition: Composition) -> None:
        """Save (or replace) a composition under its name; a built-in's name is refused."""
        found = REGISTRY.get(composition.name)
        if found is not None and found.composition is None:
            raise InvalidParameter(
                f"{composition.name!r} is a built-in strategy: give the composition another name"
            )
        at = now()
        with self.db.write() as conn:
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

    def list(self) -> list[Composition]:
        """Every saved composition, by name."""
        with self.db.read() as conn:
            rows = conn.execute(sa.select(_C.name, _C.definition).order_by(_C.name)).all()
        return [_read_row(r.name, r.definition) for r in rows]

    def load(self, name: str) -> Composition:
        with self.db.read() as conn:
            row = conn.execute(sa.select(_C.definition).where(_C.name == name)).first()
        if row is None:
            raise KeyError(f"no saved composition named {name!r}")
        return _read_row(name, row.definition)

    def delete(self, name: str) -> bool:
        """Delete a saved composition (it stays registered in running processes)."""
        with self.db.write() as conn:
            result = conn.execute(sa.delete(compositions_t).where(_C.name == name))
        return bool(result.rowcount)

    def register_saved(self) -> tuple[str, ...]:
        """Register every saved composition this process lacks; returns their names."""
        return register_missing(self.list())
