"""The database's migrations, run in order when a Store or SweepStore opens it.

Migrations work like simonw/llm's `migrations.py`: `MIGRATIONS` is an ordered list of
functions; each one that has run is recorded by name in ``ml_migrations``, and opening a
database runs the ones it lacks, each in its own transaction. `SCHEMA_VERSION` is the number of
migrations this code knows; a database recording a migration this code does not know was
written by a newer version, and is refused rather than misread.

Imports only storage/tables.py (every table is defined there).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from storage.tables import (
    ADDED_COLUMNS,
    PACKED_COLUMNS,
    compositions_metadata,
    meta_t,
    metadata,
    migrations_t,
    now,
    sweeps_metadata,
    upsert,
)

Migration = Callable[[Connection], None]


def m001_initial(conn: Connection) -> None:
    """The five tables of schema 1 (databases written before migrations existed have them
    already: `checkfirst` leaves those as they are)."""
    metadata.create_all(conn, checkfirst=True)


def m002_lane_turns_by_turn(conn: Connection) -> None:
    """An index to find a session's lane turns by turn number (repairing a missing user turn)."""
    conn.exec_driver_sql(
        "CREATE INDEX IF NOT EXISTS ml_lane_turns_turn ON ml_lane_turns (session_id, turn)"
    )


def m003_sweeps(conn: Connection) -> None:
    """The batch sweeps' tables (ml_sweeps, ml_sweep_requests, ml_sweep_batches);
    `checkfirst` keeps tables an earlier SweepStore created."""
    sweeps_metadata.create_all(conn, checkfirst=True)


def m004_compositions(conn: Connection) -> None:
    """Saved compositions (ml_compositions)."""
    compositions_metadata.create_all(conn, checkfirst=True)


def m005_sweep_kinds_and_arms(conn: Connection) -> None:
    """Sweeps of recall grids and of several models: `kind` on ml_sweeps, `arm` (which
    model) on its requests and batches, added where a database from before them lacks them
    (a database created since has them from migration 3, which builds today's tables)."""
    _add_columns(conn, ADDED_COLUMNS)


def m006_packed_bodies(conn: Connection) -> None:
    """Bodies stored as plans over each session's messages (storage/deltas.py):
    ``ml_messages``, ``ml_lane_log``, and ``body_format`` on ml_lane_turns where a database
    lacks it."""
    metadata.create_all(conn, checkfirst=True)
    _add_columns(conn, PACKED_COLUMNS)


def _add_columns(conn: Connection, columns: tuple[tuple[str, str, str], ...]) -> None:
    inspector = sa.inspect(conn)
    for table, column, ddl in columns:
        if column not in {c["name"] for c in inspector.get_columns(table)}:
            conn.exec_driver_sql(f"ALTER TABLE {table} ADD COLUMN {column} {ddl}")


MIGRATIONS: tuple[Migration, ...] = (
    m001_initial,
    m002_lane_turns_by_turn,
    m003_sweeps,
    m004_compositions,
    m005_sweep_kinds_and_arms,
    m006_packed_bodies,
)
SCHEMA_VERSION = len(MIGRATIONS)


class NewerSchema(RuntimeError):
    """The database was written by a newer version of the app."""


def migrate(begin: Callable[[], Any]) -> list[str]:
    """Run the migrations the database lacks, each in its own transaction (`begin()` yields
    a connection inside one); returns the names run. NewerSchema when the database knows
    migrations this code does not."""
    with begin() as conn:
        migrations_t.create(conn, checkfirst=True)
        done = set(conn.execute(sa.select(migrations_t.c.name)).scalars())
        recorded = conn.execute(
            sa.select(meta_t.c.value).where(meta_t.c.key == "schema")
        ).scalar_one_or_none() if sa.inspect(conn).has_table("ml_meta") else None  # fmt: skip
    known = {m.__name__ for m in MIGRATIONS}
    unknown = sorted(done - known)
    if unknown or (recorded is not None and recorded.isdigit() and int(recorded) > SCHEMA_VERSION):
        raise NewerSchema(
            f"the database has schema {recorded or '?'} (migrations {', '.join(unknown) or '-'}), "
            f"newer than this app's {SCHEMA_VERSION}: update the app to open it"
        )
    ran = []
    for migration in MIGRATIONS:
        if migration.__name__ in done:
            continue
        with begin() as conn:
            name = migration.__name__
            recorded_now = sa.select(migrations_t.c.name).where(migrations_t.c.name == name)
            if conn.execute(recorded_now).first():  # another process ran it meanwhile
                continue
            migration(conn)
            conn.execute(sa.insert(migrations_t).values(name=name, applied_at=now()))
            upsert(conn, meta_t, {"key": "schema", "value": str(SCHEMA_VERSION)}, True)
        ran.append(migration.__name__)
    return ran
