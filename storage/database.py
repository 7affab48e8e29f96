"""One database connection for the repository: where the database is (a SQLite file under
data/ by default, PostgreSQL through $MEMORY_LAB_DB_URL), the engine set up for it, and its
two kinds of transaction (`read`, `write`). Opening it runs the migrations it lacks.

Imports storage/migrations.py and storage/errors.py only.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from providers.redaction import mask, remember, remember_url
from storage.errors import StoreError
from storage.migrations import NewerSchema, migrate

ENV_URL = "MEMORY_LAB_DB_URL"
ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PATH = ROOT / "data" / "memory_lab.sqlite3"
BUSY_TIMEOUT = 30.0  # seconds a SQLite write waits for another process's lock


def default_url() -> str:
    """$MEMORY_LAB_DB_URL, else a SQLite file under data/."""
    url = os.environ.get(ENV_URL, "").strip()
    return url or f"sqlite:///{DEFAULT_PATH}"


def normalise_url(url: str) -> sa.URL:
    """Accept postgres:// and postgresql:// (driven by psycopg 3) and sqlite paths. Its
    password (``user:pw@`` or ``?password=``) becomes a secret every output masks."""
    remember_url(url)
    try:
        parsed = sa.make_url(url)
    except Exception as exc:
        raise StoreError(f"{ENV_URL} is not a database URL: {exc}") from None
    remember(parsed.password if isinstance(parsed.password, str) else None)
    if parsed.drivername in ("postgres", "postgresql"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    if parsed.get_backend_name() not in ("sqlite", "postgresql"):
        raise StoreError(
            f"unsupported database {parsed.get_backend_name()!r}: use sqlite:///path or "
            "postgresql://user:password@host/db"
        )
    return parsed


class Database:
    """An open, migrated database. Thread-safe: SQLite writes are serialised in-process and
    taken with BEGIN IMMEDIATE across processes; PostgreSQL reads are REPEATABLE READ."""

    def __init__(self, url: str | None = None, *, busy_timeout: float = BUSY_TIMEOUT) -> None:
        self.url = normalise_url(url or default_url())
        self.kind = self.url.get_backend_name()
        self.busy_timeout = busy_timeout
        self.engine = self._engine()
        self._sqlite_lock = threading.Lock() if self.kind == "sqlite" else None
        try:
            migrate(self.write)
        except NewerSchema as exc:
            raise StoreError(
                f"cannot open the session store at {self.display_url}: {exc}"
            ) from None
        except sa.exc.SQLAlchemyError as exc:
            raise StoreError(f"cannot open the session store at {self.display_url}: {exc}") from exc

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
        return mask(self.url.render_as_string(hide_password=True))

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def write(self) -> Iterator[Connection]:
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
    def read(self) -> Iterator[Connection]:
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
