"""The tables (SQLAlchemy Core, the same on SQLite and PostgreSQL) and their migrations.

Migrations work like simonw/llm's `migrations.py`: `MIGRATIONS` is an ordered list of
functions; each one that has run is recorded by name in ``ml_migrations``, and opening a
database runs the ones it lacks, each in its own transaction. `SCHEMA_VERSION` is the number of
migrations this code knows; a database recording a migration this code does not know was
written by a newer version, and is refused rather than misread.

* ``ml_sessions``    one row per session: name, dates, settings (JSON, no key), strategies,
                     turn count and token totals (kept up to date by every write).
* ``ml_turns``       the user messages, one row per turn number.
* ``ml_lane_turns``  one row per lane per turn: the LaneTurn as JSON (its request body in a
                     column of its own, so lists and charts load without the bodies).
* ``ml_lane_states`` each lane's memory after its latest turn, to continue without any model
                     call (history pairs elided: they are the lane's recorded turns).
* ``ml_meta``        ``schema``: the schema version last written (kept for older readers).
* ``ml_sweep*``      batch sweeps: their tables live in storage/sweeps.py (migration 3).
* ``ml_compositions`` saved compositions: storage/compositions.py (migration 4).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

metadata = sa.MetaData()
TS = sa.DateTime(timezone=True)
ID_LIMIT = 64  # characters of a session id (the column width)

sessions_t = sa.Table(
    "ml_sessions",
    metadata,
    sa.Column("id", sa.String(ID_LIMIT), primary_key=True),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("source", sa.String(32), nullable=False),
    sa.Column("created_at", TS, nullable=False),
    sa.Column("updated_at", TS, nullable=False),
    sa.Column("settings", sa.Text, nullable=False),  # JSON, scrubbed
    sa.Column("strategies", sa.Text, nullable=False),  # JSON list, lane order
    sa.Column("lane_count", sa.Integer, nullable=False),
    sa.Column("turn_count", sa.Integer, nullable=False),
    sa.Column("lane_turn_count", sa.Integer, nullable=False),
    sa.Column("prompt_tokens", sa.BigInteger, nullable=False),
    sa.Column("total_tokens", sa.BigInteger, nullable=False),
    sa.Column("survival", sa.Text, nullable=True),  # a SurvivalResult.as_dict(), JSON
    sa.Column("writer", sa.String(64), nullable=True),  # the tracker allowed to add turns
)
sa.Index("ml_sessions_updated", sessions_t.c.updated_at)


def _session_fk() -> sa.ForeignKey:
    return sa.ForeignKey("ml_sessions.id", ondelete="CASCADE")


turns_t = sa.Table(
    "ml_turns",
    metadata,
    sa.Column("session_id", sa.String(ID_LIMIT), _session_fk(), primary_key=True),
    sa.Column("turn", sa.Integer, primary_key=True),
    sa.Column("user_text", sa.Text, nullable=False),
    sa.Column("created_at", TS, nullable=False),
)

lane_turns_t = sa.Table(
    "ml_lane_turns",
    metadata,
    sa.Column("session_id", sa.String(ID_LIMIT), _session_fk(), primary_key=True),
    sa.Column("turn", sa.Integer, primary_key=True),
    sa.Column("lane", sa.String(64), primary_key=True),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("prompt_tokens", sa.BigInteger, nullable=False),
    sa.Column("total_tokens", sa.BigInteger, nullable=False),
    sa.Column("created_at", TS, nullable=False),
    sa.Column("record", sa.Text, nullable=False),  # LaneTurn JSON without its body
    sa.Column("body", sa.Text, nullable=True),  # the request body sent, JSON
)

lane_states_t = sa.Table(
    "ml_lane_states",
    metadata,
    sa.Column("session_id", sa.String(ID_LIMIT), _session_fk(), primary_key=True),
    sa.Column("lane", sa.String(64), primary_key=True),
    sa.Column("turn", sa.Integer, nullable=False),
    sa.Column("state", sa.Text, nullable=False),  # Lane.memory_state(), history pairs elided
)

meta_t = sa.Table(
    "ml_meta",
    metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
)

# Kept apart from `metadata`: it is created before any migration runs.
migrations_t = sa.Table(
    "ml_migrations",
    sa.MetaData(),
    sa.Column("name", sa.String(128), primary_key=True),
    sa.Column("applied_at", TS, nullable=False),
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
    """The batch sweeps' tables (ml_sweeps, ml_sweep_requests, ml_sweep_batches), defined in
    storage/sweeps.py; `checkfirst` keeps tables an earlier SweepStore created."""
    from storage.sweeps import metadata as sweeps_metadata  # here: sweeps imports this module

    sweeps_metadata.create_all(conn, checkfirst=True)


def m004_compositions(conn: Connection) -> None:
    """Saved compositions (ml_compositions), defined in storage/compositions.py."""
    from storage.compositions import metadata as compositions_metadata

    compositions_metadata.create_all(conn, checkfirst=True)


def m005_sweep_kinds_and_arms(conn: Connection) -> None:
    """Sweeps of recall grids and of several models: `kind` on ml_sweeps, `arm` (which
    model) on its requests and batches (storage/sweeps.py adds the columns it lacks)."""
    from storage.sweeps import add_kind_and_arm_columns

    add_kind_and_arm_columns(conn)


MIGRATIONS: tuple[Migration, ...] = (
    m001_initial,
    m002_lane_turns_by_turn,
    m003_sweeps,
    m004_compositions,
    m005_sweep_kinds_and_arms,
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


def now() -> datetime:
    return datetime.now(UTC)


_UPSERTS: dict[tuple[str, str, bool, tuple[str, ...]], Any] = {}


def upsert(conn: Connection, table: sa.Table, values: Mapping[str, Any], update: bool) -> None:
    """INSERT, and on a primary-key clash update (or keep) the row: SQLite and PostgreSQL.
    The statement is built once per table and shape, then only executed."""
    key = (conn.dialect.name, table.name, update, tuple(values))
    stmt = _UPSERTS.get(key)
    if stmt is None:
        dialect = sqlite if conn.dialect.name == "sqlite" else postgresql
        stmt = dialect.insert(table)
        keys = [c.name for c in table.primary_key.columns]
        if update:
            changed = {k: stmt.excluded[k] for k in values if k not in keys}
            stmt = stmt.on_conflict_do_update(index_elements=keys, set_=changed)
        else:
            stmt = stmt.on_conflict_do_nothing(index_elements=keys)
        _UPSERTS[key] = stmt
    conn.execute(stmt, dict(values))
