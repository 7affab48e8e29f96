"""The repository: saved sessions in a real database, SQLite by default, PostgreSQL through a
database URL. Rows are read by column name; the tables are in storage/schema.py.

    store = Store()                      # data/memory_lab.sqlite3, or $MEMORY_LAB_DB_URL
    store.track(session, app={...})      # saves every turn of a live Session as it completes
    store.list(); store.load(id); store.continue_session(id); store.rename(id, n); store.delete(id)

Every user turn and every lane turn is written in its own transaction as it happens, so a
process killed mid-turn loses nothing that completed. A lane turn whose user-turn row is
missing (its write failed) writes that row too, from the lane record; loading keys user texts
by turn number and shows whatever is there. A session continued in two windows at once is
not overwritten: the second writer's turn goes to a copy. No key is ever stored: settings
go through `public_settings`, and every text through `records.dumps` (known secrets masked).

The writes are in storage/writes.py (a mixin of Store).

About 420 lines: the connection setup and every read of a saved session (list, info,
load) share the row-to-record helpers here; the writes are already apart.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from lanes.lane import LaneTurn
from lanes.session import Session, Transport
from providers.redaction import env_key_values, secrets_of
from storage import export_check
from storage.compositions import CompositionStore, adopt
from storage.errors import SessionNotFound, StoreError
from storage.records import (
    NAME_LIMIT,
    dumps,
    expand_state,
    fresh_state,
    provider_from,
)
from storage.saved import SavedSession, SessionInfo, complete, now, valid_id
from storage.schema import (
    NewerSchema,
    lane_states_t,
    lane_turns_t,
    migrate,
    sessions_t,
    turns_t,
)
from storage.tracker import Tracker
from storage.writes import Writes, clean

ENV_URL = "MEMORY_LAB_DB_URL"
ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PATH = ROOT / "data" / "memory_lab.sqlite3"
BUSY_TIMEOUT = 30.0  # seconds a SQLite write waits for another process's lock


def default_url() -> str:
    """$MEMORY_LAB_DB_URL, else a SQLite file under data/."""
    url = os.environ.get(ENV_URL, "").strip()
    return url or f"sqlite:///{DEFAULT_PATH}"


def normalise_url(url: str) -> sa.URL:
    """Accept postgres:// and postgresql:// (driven by psycopg 3) and sqlite paths."""
    try:
        parsed = sa.make_url(url)
    except Exception as exc:
        raise StoreError(f"{ENV_URL} is not a database URL: {exc}") from None
    if parsed.drivername in ("postgres", "postgresql"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    if parsed.get_backend_name() not in ("sqlite", "postgresql"):
        raise StoreError(
            f"unsupported database {parsed.get_backend_name()!r}: use sqlite:///path or "
            "postgresql://user:password@host/db"
        )
    return parsed


_S = sessions_t.c
_INFO_COLUMNS = (
    _S.id, _S.name, _S.source, _S.created_at, _S.updated_at, _S.strategies, _S.turn_count,
    _S.lane_turn_count, _S.prompt_tokens, _S.total_tokens,
    _S.survival.is_not(None).label("has_survival"),
)  # fmt: skip


def _info(row: Any) -> SessionInfo:
    return SessionInfo(
        id=row.id,
        name=row.name,
        source=row.source,
        created=_utc(row.created_at),
        updated=_utc(row.updated_at),
        strategies=tuple(json.loads(row.strategies)),
        turns=int(row.turn_count),
        lane_turns=int(row.lane_turn_count),
        prompt_tokens=int(row.prompt_tokens),
        total_tokens=int(row.total_tokens),
        has_survival=bool(row.has_survival),
    )


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


class Store(Writes, CompositionStore):
    """Saved sessions in one database. Thread-safe; holds no conversation in memory (two
    browser sessions share the store object, never each other's state)."""

    def __init__(self, url: str | None = None, *, busy_timeout: float = BUSY_TIMEOUT) -> None:
        self.url = normalise_url(url or default_url())
        self.kind = self.url.get_backend_name()
        self.busy_timeout = busy_timeout
        self.engine = self._engine()
        self._sqlite_lock = threading.Lock() if self.kind == "sqlite" else None
        try:
            migrate(self._write)
        except NewerSchema as exc:
            raise StoreError(
                f"cannot open the session store at {self.display_url}: {exc}"
            ) from None
        except sa.exc.SQLAlchemyError as exc:
            raise StoreError(f"cannot open the session store at {self.display_url}: {exc}") from exc

    # -- set-up --

    def _engine(self) -> Engine:
        if self.kind != "sqlite":
            return sa.create_engine(self.url, pool_pre_ping=True)
        database = self.url.database or ""
        if database and database != ":memory:":
            _create_private_file(Path(database).expanduser())
        engine = sa.create_engine(self.url, connect_args={"timeout": self.busy_timeout})
        busy_ms = int(self.busy_timeout * 1000)

        @sa.event.listens_for(engine, "connect")
        def _on_connect(dbapi_conn: Any, _record: Any) -> None:
            dbapi_conn.isolation_level = None  # transactions are begun below, explicitly
            cursor = dbapi_conn.cursor()
            cursor.execute(f"PRAGMA busy_timeout={busy_ms}")
            _wal_mode(cursor, self.busy_timeout)
            for pragma in (
                "PRAGMA synchronous=NORMAL",  # with WAL: a committed turn survives a crash
                "PRAGMA foreign_keys=ON",
            ):
                cursor.execute(pragma)
            cursor.close()

        @sa.event.listens_for(engine, "begin")
        def _on_begin(conn: Connection) -> None:
            mode = conn.get_execution_options().get("sqlite_begin", "DEFERRED")
            conn.exec_driver_sql(f"BEGIN {mode}")

        return engine

    @property
    def display_url(self) -> str:
        """The URL with any password hidden."""
        return self.url.render_as_string(hide_password=True)

    def close(self) -> None:
        self.engine.dispose()

    def track(
        self, session: Session, *, app: Mapping[str, Any] | None = None, source: str = "main"
    ) -> Tracker:
        """Save `session` as it runs: each user turn when it begins, each lane turn when it
        is recorded. Returns the tracker (its `error` says if saving failed)."""
        for listener in session.listeners:
            if isinstance(listener, Tracker) and listener.store is self:
                return listener
        tracker = Tracker(self, session, app=dict(app) if app else None, source=source)
        session.turn_listeners.append(tracker.on_turn)
        session.listeners.append(tracker)
        return tracker

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        """One write transaction (SQLite: serialised in-process, BEGIN IMMEDIATE across)."""
        if self._sqlite_lock is None:
            with self.engine.begin() as conn:
                yield conn
            return
        with self._sqlite_lock, self.engine.connect() as raw:
            conn = raw.execution_options(sqlite_begin="IMMEDIATE")
            with conn.begin():
                yield conn

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        """One consistent read; a damaged database file is a StoreError that says so."""
        try:
            with self.engine.connect() as raw:
                conn = (
                    raw.execution_options(isolation_level="REPEATABLE READ")
                    if self.kind == "postgresql"
                    else raw
                )
                with conn.begin():
                    yield conn
        except sa.exc.DatabaseError as exc:
            raise StoreError(
                f"the session store at {self.display_url} cannot be read ({exc.orig}): "
                "if the file is damaged, move it away (the app starts a new one) and restore "
                "a backup"
            ) from exc

    # -- live sessions (the Tracker's side) --

    # -- whole sessions --

    def save(
        self,
        saved: SavedSession | Session,
        *,
        app: Mapping[str, Any] | None = None,
        source: str | None = None,
        new_id: bool = False,
        secrets: Iterable[str] = (),
    ) -> str:
        """Save a whole session in one transaction (an import, a replay, a copy); returns its
        id. An id already in the store (or not usable as one) gets a fresh one, so nothing is
        overwritten."""
        if isinstance(saved, Session):
            found = secrets_of(saved.provider, saved.maintenance)
            saved = SavedSession.from_session(saved, app=app, source=source or "replay")
            secrets = set(secrets) | found
        elif source:
            saved = saved.with_info(source=source)
        secrets = set(secrets) | env_key_values()
        with self._write() as conn:
            taken = (
                valid_id(saved.id)
                and conn.execute(sa.select(_S.id).where(_S.id == saved.id)).first()
            )
            if taken or new_id or not valid_id(saved.id):
                saved = saved.with_info(id=uuid.uuid4().hex[:12])
            self._insert_all(conn, saved, writer=None, secrets=secrets)
        return saved.id

    def import_json(self, text: str | bytes) -> str:
        """Restore a JSON export as a new saved session; SessionFormatError says what is wrong
        and nothing is written."""
        return self.save(SavedSession.from_dict(export_check.loads(text)), source="import")

    # -- reading --

    def list(self, *, limit: int = 500) -> list[SessionInfo]:
        """Saved sessions, most recently updated first."""
        query = (
            sa.select(*_INFO_COLUMNS)
            .where(_S.turn_count > 0)
            .order_by(_S.updated_at.desc(), _S.id)
            .limit(limit)
        )
        with self._read() as conn:
            rows = conn.execute(query).all()
        return [_info(row) for row in rows]

    def info(self, session_id: str) -> SessionInfo:
        with self._read() as conn:
            row = conn.execute(sa.select(*_INFO_COLUMNS).where(_S.id == session_id)).first()
        if row is None:
            raise SessionNotFound(session_id)
        return _info(row)

    def load(self, session_id: str, *, bodies: bool = True) -> SavedSession:
        """A saved session, read-only (bodies=False skips the request bodies: faster). User
        texts are keyed by turn number; a turn whose row is missing takes its text from a
        lane record of that turn, so a session with a lost write still opens whole."""
        t, lt, ls = turns_t.c, lane_turns_t.c, lane_states_t.c
        body_column = lt.body if bodies else sa.null().label("body")
        with self._read() as conn:
            query = sa.select(*_INFO_COLUMNS, _S.settings, _S.survival).where(_S.id == session_id)
            row = conn.execute(query).first()
            if row is None:
                raise SessionNotFound(session_id)
            user_rows = conn.execute(
                sa.select(t.turn, t.user_text).where(t.session_id == session_id)
            ).all()
            lane_rows = conn.execute(
                sa.select(lt.lane, lt.record, body_column)
                .where(lt.session_id == session_id)
                .order_by(lt.lane, lt.turn)
            ).all()
            state_rows = conn.execute(
                sa.select(ls.lane, ls.state).where(ls.session_id == session_id)
            ).all()
        info = _info(row)
        records: dict[str, list[LaneTurn]] = {name: [] for name in info.strategies}
        for lane_row in lane_rows:
            data = json.loads(lane_row.record)
            data["body"] = json.loads(lane_row.body) if lane_row.body is not None else None
            if lane_row.lane in records:
                records[lane_row.lane].append(LaneTurn.from_dict(data))
        texts = {r.turn: r.user_text for r in user_rows}
        from_lanes = {r.turn: r.user for rs in records.values() for r in rs}
        last = max([info.turns, *texts, *from_lanes], default=0)
        user_turns = tuple(texts.get(n, from_lanes.get(n, "")) for n in range(1, last + 1))
        memory = {}
        for state_row in state_rows:
            state = json.loads(state_row.state)
            memory[state_row.lane] = expand_state(state, records.get(state_row.lane, []))
        settings = json.loads(row.settings)
        adopt(settings)  # the compositions its lanes ran, registered if this process lacks them
        for name in info.strategies:
            if name not in memory:  # a lane that has not answered yet: fresh memory
                memory[name] = fresh_state(name, settings)
        return complete(
            SavedSession(
                info=replace(info, turns=last),
                settings=settings,
                user_turns=user_turns,
                records=records,
                memory=memory,
                survival=json.loads(row.survival) if row.survival else None,
            )
        )

    def continue_session(
        self,
        session_id: str,
        *,
        provider: Any | None = None,
        maintenance: Any | None = None,
        transport: Transport | None = None,
    ) -> Session:
        """A live Session restored from a saved one (no model call), to add turns to it.
        `provider` defaults to the saved provider settings, with the endpoint and key source
        taken from the catalog, never from the data. Not tracked yet: call `track` on it."""
        saved = self.load(session_id)
        if provider is None:
            provider = provider_from(saved.settings.get("provider"))
            if maintenance is None and saved.settings.get("maintenance"):
                maintenance = provider_from(saved.settings["maintenance"])
        public = {n: saved.lane_provider(n) for n in saved.strategies}
        return Session.from_snapshot(
            saved.snapshot(),
            provider=provider,
            maintenance=maintenance,
            transport=transport,
            lane_providers={n: provider_from(p) for n, p in public.items() if p},
        )

    # -- editing --

    def rename(self, session_id: str, name: str) -> None:
        name = " ".join(name.split())
        if not name:
            raise ValueError("a session needs a name: type one")
        if len(name) > NAME_LIMIT:
            raise ValueError(f"a name is at most {NAME_LIMIT} characters")
        with self._write() as conn:
            done = conn.execute(
                sa.update(sessions_t)
                .where(_S.id == session_id)
                .values(name=clean(name, env_key_values()))
            )
        if done.rowcount != 1:
            raise SessionNotFound(session_id)

    def delete(self, session_id: str) -> bool:
        """Delete a session and everything saved with it; False if it did not exist."""
        with self._write() as conn:
            for table in (lane_states_t, lane_turns_t, turns_t):
                conn.execute(sa.delete(table).where(table.c.session_id == session_id))
            done = conn.execute(sa.delete(sessions_t).where(_S.id == session_id))
        return done.rowcount == 1

    def attach_survival(self, session_id: str, result: Mapping[str, Any] | None) -> None:
        """Keep a fact-survival run (`SurvivalResult.as_dict()`) with a session (None: drop)."""
        value = dumps(dict(result), env_key_values()) if result else None
        with self._write() as conn:
            done = conn.execute(
                sa.update(sessions_t)
                .where(_S.id == session_id)
                .values(survival=value, updated_at=now())
            )
        if done.rowcount != 1:
            raise SessionNotFound(session_id)


def _create_private_file(path: Path) -> None:
    """Make sure the database file exists, readable by its owner only (0600), and say what
    to do when its folder cannot be written."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    except OSError as exc:
        raise StoreError(
            f"cannot create the session store at {path}: {exc.strerror or exc}. Pick a "
            f"writable place with {ENV_URL}=sqlite:////a/writable/folder/memory_lab.sqlite3"
        ) from None


def _wal_mode(cursor: Any, timeout: float) -> None:
    """Switch the database to WAL. The switch takes the file's exclusive lock, and SQLite
    answers "database is locked" at once, without waiting out the busy timeout, when
    another process holds a lock then (two processes opening a new file together): so it
    is tried again, every 50 ms, for at most `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.05)
