"""Every table of the app's database (SQLAlchemy Core, the same on SQLite and PostgreSQL),
and the two statements every writer shares (`now`, `upsert`). The bottom of storage/'s chain:
it imports no other storage module.

* ``ml_sessions``    one row per session: name, dates, settings (JSON, no key), strategies,
                     turn count and token totals (kept up to date by every write).
* ``ml_turns``       the user messages, one row per turn number.
* ``ml_lane_turns``  one row per lane per turn: the LaneTurn as JSON (its request body in a
                     column of its own, so lists and charts load without the bodies; packed
                     by storage/deltas.py where ``body_format`` says so).
* ``ml_messages``    each distinct request message of a session once, by hash.
* ``ml_lane_log``    each lane's message hashes in the order it first sent them (a packed
                     body is slices of its lane's log).
* ``ml_lane_states`` each lane's memory after its latest turn, to continue without any model
                     call (history pairs elided: they are the lane's recorded turns).
* ``ml_meta``        ``schema``: the schema version last written (kept for older readers).
* ``ml_sweeps``, ``ml_sweep_requests``, ``ml_sweep_batches``: batch sweeps (storage/sweeps.py).
* ``ml_compositions``: saved compositions (storage/compositions.py).
* ``ml_migrations``: the migrations run (storage/migrations.py).

Each group has its own `MetaData` because each is created by its own migration.
"""

from __future__ import annotations

from collections.abc import Mapping
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
    sa.Column("body_format", sa.Integer, nullable=True),  # NULL: whole; else storage/deltas.py
)

messages_t = sa.Table(
    "ml_messages",
    metadata,
    sa.Column("session_id", sa.String(ID_LIMIT), _session_fk(), primary_key=True),
    sa.Column("hash", sa.String(32), primary_key=True),
    sa.Column("message", sa.Text, nullable=False),  # one request message, JSON
)

lane_log_t = sa.Table(
    "ml_lane_log",
    metadata,
    sa.Column("session_id", sa.String(ID_LIMIT), _session_fk(), primary_key=True),
    sa.Column("lane", sa.String(64), primary_key=True),
    sa.Column("seq", sa.Integer, primary_key=True),
    sa.Column("hash", sa.String(32), nullable=False),
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


sweeps_metadata = sa.MetaData()

sweeps_t = sa.Table(
    "ml_sweeps",
    sweeps_metadata,
    sa.Column("id", sa.String(40), primary_key=True),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("created_at", TS, nullable=False),
    sa.Column("updated_at", TS, nullable=False),
    sa.Column("status", sa.String(20), nullable=False),  # planned/submitted/collected/...
    sa.Column("provider", sa.String(40), nullable=False),
    sa.Column("model", sa.Text, nullable=False),
    sa.Column("settings", sa.Text, nullable=False),  # ProviderSettings.public_dict(), JSON
    sa.Column("config", sa.Text, nullable=False),  # SurvivalConfig.as_dict(), JSON
    sa.Column("plan", sa.Text, nullable=False),  # the estimate and how upkeep is handled
    sa.Column("upkeep", sa.Text, nullable=False),  # recorded upkeep completions by body hash
    sa.Column("result", sa.Text, nullable=True),  # SurvivalResult.as_dict() once collected
    sa.Column("kind", sa.String(20), nullable=False, server_default="survival"),  # or recall
)


def _sweep_id() -> sa.Column[str]:
    """The key column naming the sweep a row belongs to (its rows go when the sweep does)."""
    return sa.Column(
        "sweep_id",
        sa.String(40),
        sa.ForeignKey("ml_sweeps.id", ondelete="CASCADE"),
        primary_key=True,
    )


sweep_requests_t = sa.Table(
    "ml_sweep_requests",
    sweeps_metadata,
    _sweep_id(),
    sa.Column("custom_id", sa.String(64), primary_key=True),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("body", sa.Text, nullable=False),
    sa.Column("prompt_tokens", sa.Integer, nullable=False),
    sa.Column("probes", sa.Integer, nullable=False),
    sa.Column("batch_id", sa.String(80), nullable=True),
    sa.Column("state", sa.String(20), nullable=False),
    sa.Column("reply", sa.Text, nullable=True),  # Reply.public_dict(), JSON
    sa.Column("error", sa.Text, nullable=True),
    sa.Column("attempts", sa.Integer, nullable=False, default=0),
    sa.Column("arm", sa.Integer, nullable=False, server_default="0"),  # index of its model
)

sweep_batches_t = sa.Table(
    "ml_sweep_batches",
    sweeps_metadata,
    _sweep_id(),
    sa.Column("batch_id", sa.String(80), primary_key=True),
    sa.Column("submitted_at", TS, nullable=False),
    sa.Column("updated_at", TS, nullable=False),
    sa.Column("state", sa.String(20), nullable=False),  # running / ended / failed
    sa.Column("raw_status", sa.String(40), nullable=False),
    sa.Column("requests", sa.Integer, nullable=False),
    sa.Column("status", sa.Text, nullable=True),  # the last BatchStatus, JSON
    sa.Column("collected", sa.Boolean, nullable=False, default=False),
    sa.Column("arm", sa.Integer, nullable=False, server_default="0"),
)

# (table, column, DDL) added by migration 5 to tables an older migration 3 created.
ADDED_COLUMNS = (
    ("ml_sweeps", "kind", "VARCHAR(20) NOT NULL DEFAULT 'survival'"),
    ("ml_sweep_requests", "arm", "INTEGER NOT NULL DEFAULT 0"),
    ("ml_sweep_batches", "arm", "INTEGER NOT NULL DEFAULT 0"),
)
# ... and by migration 6 to the lane turns an older migration 1 created.
PACKED_COLUMNS = (("ml_lane_turns", "body_format", "INTEGER"),)


compositions_metadata = sa.MetaData()
compositions_t = sa.Table(
    "ml_compositions",
    compositions_metadata,
    sa.Column("name", sa.String(64), primary_key=True),
    sa.Column("title", sa.Text, nullable=False),
    sa.Column("definition", sa.Text, nullable=False),  # Composition.to_json()
    sa.Column("created_at", TS, nullable=False),
    sa.Column("updated_at", TS, nullable=False),
)


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
