"""Saved sessions in a real database: SQLite by default, PostgreSQL through a database URL.

    store = Store()                      # data/memory_lab.sqlite3, or $MEMORY_LAB_DB_URL
    store.track(session, app={...})      # saves every turn of a live Session as it completes
    store.list(); store.load(id); store.continue_session(id); store.rename(id, n); store.delete(id)

Layout (SQLAlchemy Core, the same tables on both databases):

* ``ml_sessions``    one row per session: name, dates, settings (JSON, no key), strategies,
                     turn count and token totals (kept up to date by every write).
* ``ml_turns``       the user messages, one row per turn.
* ``ml_lane_turns``  one row per lane per turn: the LaneTurn as JSON (its request body in a
                     column of its own, so lists and charts load without the bodies).
* ``ml_lane_states`` each lane's memory after its latest turn, to continue without any model
                     call. The history pairs are not stored twice: they are the lane's own
                     recorded (user, reply) turns, rebuilt on load.

Every user turn and every lane turn is written in its own transaction as it happens, so a
process killed mid-turn loses nothing that completed; a turn whose lanes did not all answer
is shown as interrupted (its missing lanes get an `Interrupted` error record, which the main
page can retry) and is never half-written. A session continued in two windows at once is not
overwritten: the second writer's turn goes to a copy.

No API key is ever stored: settings are saved through `public_dict()` (no key field), and
every JSON text is scrubbed before it reaches the database — the session's own keys, key-like
environment values, key-shaped strings and any ``api_key``/``authorization`` field.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Engine

from lanes.lane import ERROR, OK, LaneTurn
from lanes.session import Session, Transport
from memory.registry import REGISTRY

log = logging.getLogger(__name__)

ENV_URL = "MEMORY_LAB_DB_URL"
ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PATH = ROOT / "data" / "memory_lab.sqlite3"
SCHEMA_VERSION = 1
FORMAT = "memory_lab_session"  # the marker key of a JSON export (value: format version)
INTERRUPTED = "Interrupted"  # error_kind of a lane that never answered its turn
INTERRUPTED_TEXT = "the app stopped before this lane answered (turn interrupted)"
REDACTED = "[redacted]"
NAME_LIMIT = 200

# ---- schema -------------------------------------------------------------------------------

metadata = sa.MetaData()
TS = sa.DateTime(timezone=True)

sessions_t = sa.Table(
    "ml_sessions",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
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

_SESSION_FK = sa.ForeignKey("ml_sessions.id", ondelete="CASCADE")

turns_t = sa.Table(
    "ml_turns",
    metadata,
    sa.Column("session_id", sa.String(64), _SESSION_FK, primary_key=True),
    sa.Column("turn", sa.Integer, primary_key=True),
    sa.Column("user_text", sa.Text, nullable=False),
    sa.Column("created_at", TS, nullable=False),
)

lane_turns_t = sa.Table(
    "ml_lane_turns",
    metadata,
    sa.Column(
        "session_id",
        sa.String(64),
        sa.ForeignKey("ml_sessions.id", ondelete="CASCADE"),
        primary_key=True,
    ),
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
    sa.Column(
        "session_id",
        sa.String(64),
        sa.ForeignKey("ml_sessions.id", ondelete="CASCADE"),
        primary_key=True,
    ),
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


class StoreError(RuntimeError):
    """The database cannot be used as asked; the message says what to do."""


class SessionNotFound(KeyError):
    """No saved session has this id (deleted, or never saved)."""

    def __str__(self) -> str:
        return f"no saved session with id {self.args[0]!r}"


class SessionFormatError(ValueError):
    """A JSON export that cannot be restored; the message names the problem."""


# ---- keys never reach the database ----------------------------------------------------------

_KEY_SHAPES = re.compile(
    r"sk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"
    r"|gsk_[A-Za-z0-9]{20,}"
    r"|xai-[A-Za-z0-9]{20,}"
    r"|hf_[A-Za-z0-9]{30,}"
    r"|AIza[0-9A-Za-z_\-]{35}"
    r"|(?i:bearer)\s+[A-Za-z0-9._~+/\-]{16,}=*"
)
_KEY_FIELDS = re.compile(
    r'("(?i:api[_-]?key|x-api-key|authorization|password|secret|client_secret|access_token)"'
    r'\s*:\s*)"(?:[^"\\]|\\.)*"'
)
_MARKERS = ("sk-", "gsk_", "xai-", "hf_", "AIza", "earer", "EARER")
_FIELD_MARKERS = ("key", "KEY", "Key", "uthorization", "UTHORIZATION", "assword", "ecret", "token")
_ENV_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD")


def env_secrets() -> set[str]:
    """Values of environment variables that look like credentials (long enough to matter)."""
    found = set()
    for name, value in os.environ.items():
        upper = name.upper()
        if any(w in upper for w in _ENV_WORDS) and len(value.strip()) >= 8:
            found.add(value.strip())
    return found


def secrets_of(*settings: Any) -> set[str]:
    """The keys held by provider settings objects (typed-in keys), plus env credentials."""
    found = env_secrets()
    for s in settings:
        key = getattr(s, "api_key", None)
        if isinstance(key, str) and len(key) >= 4:
            found.add(key)
    return found


def scrub_text(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with every known secret, key-shaped string and key field's value redacted."""
    for secret in secrets:
        if secret and secret in text:
            text = text.replace(secret, REDACTED)
    if any(m in text for m in _MARKERS):
        text = _KEY_SHAPES.sub(REDACTED, text)
    if any(m in text for m in _FIELD_MARKERS):
        text = _KEY_FIELDS.sub(lambda m: f'{m.group(1)}"{REDACTED}"', text)
    return text


def dumps(data: Any, secrets: Iterable[str] = ()) -> str:
    """Compact JSON, scrubbed."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=_default)
    return scrub_text(text, secrets)


def _default(value: Any) -> Any:
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if hasattr(value, "as_dict"):  # typed records (TurnAccount, MaintenanceRecord)
        return value.as_dict()
    return str(value)


def public_settings(settings: Any) -> dict[str, Any] | None:
    """Provider settings as data without any key field."""
    if settings is None:
        return None
    if hasattr(settings, "public_dict"):
        data = dict(settings.public_dict())
    elif isinstance(settings, Mapping):
        data = dict(settings)
    else:
        data = dict(vars(settings))
    return {k: v for k, v in data.items() if "key" not in k.lower() or k == "key_set"}


# ---- plain records -------------------------------------------------------------------------


def prompt_tokens(record: LaneTurn) -> int:
    """Prompt tokens of a lane turn: billed where known, else counted (as the charts do)."""
    return record.billed_input if record.billed_input is not None else record.counted


def total_tokens(record: LaneTurn) -> int:
    """Everything a lane turn sent and received: prompt, reply and upkeep calls."""
    return prompt_tokens(record) + (record.billed_output or 0) + record.maintenance_tokens


def interrupted_record(lane: str, turn: int, user: str) -> LaneTurn:
    """The record shown for a lane that never answered `turn` (retryable on the main page)."""
    return LaneTurn(lane, turn, user, ERROR, error=INTERRUPTED_TEXT, error_kind=INTERRUPTED)


def is_interrupted(record: LaneTurn) -> bool:
    return record.error_kind == INTERRUPTED and record.counted == 0 and record.body is None


@dataclass(frozen=True)
class SessionInfo:
    """A saved session as the list shows it."""

    id: str
    name: str
    source: str
    created: datetime
    updated: datetime
    strategies: tuple[str, ...]
    turns: int
    lane_turns: int
    prompt_tokens: int
    total_tokens: int
    has_survival: bool = False

    @property
    def interrupted(self) -> bool:
        """Some lane of some turn never answered."""
        return self.lane_turns < self.turns * len(self.strategies)

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "source": self.source,
            "created": self.created.isoformat(),
            "updated": self.updated.isoformat(),
            "strategies": list(self.strategies),
            "turns": self.turns,
            "lane_turns": self.lane_turns,
            "prompt_tokens": self.prompt_tokens,
            "total_tokens": self.total_tokens,
            "has_survival": self.has_survival,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SessionInfo:
        return cls(
            id=str(data["id"]),
            name=str(data.get("name") or ""),
            source=str(data.get("source") or "import"),
            created=_parse_time(data.get("created")),
            updated=_parse_time(data.get("updated")),
            strategies=tuple(data.get("strategies") or ()),
            turns=int(data.get("turns") or 0),
            lane_turns=int(data.get("lane_turns") or 0),
            prompt_tokens=int(data.get("prompt_tokens") or 0),
            total_tokens=int(data.get("total_tokens") or 0),
            has_survival=bool(data.get("has_survival")),
        )


def _parse_time(value: Any) -> datetime:
    if isinstance(value, datetime):
        return _utc(value)
    if isinstance(value, str) and value:
        return _utc(datetime.fromisoformat(value))
    return datetime.now(UTC)


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class SavedSession:
    """A whole session as plain data: what the sessions page shows and every export draws.

    `records` holds each lane's turn records in turn order; a lane that never answered a
    turn has an `Interrupted` error record there (see `interrupted`)."""

    info: SessionInfo
    settings: dict[str, Any]
    user_turns: tuple[str, ...]
    records: dict[str, list[LaneTurn]]
    memory: dict[str, dict[str, Any]]  # lane -> Lane.memory_state()
    interrupted: tuple[int, ...] = ()
    survival: dict[str, Any] | None = None

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def strategies(self) -> tuple[str, ...]:
        return self.info.strategies

    @property
    def system_prompt(self) -> str:
        return str(self.settings.get("system_prompt", ""))

    def titles(self) -> dict[str, str]:
        """Lane name -> the strategy's title."""
        return {n: REGISTRY[n].title if n in REGISTRY else n for n in self.strategies}

    def params(self, lane: str) -> dict[str, Any]:
        return dict(self.memory.get(lane, {}).get("params") or {})

    def snapshot(self) -> dict[str, Any]:
        """The session in `Session.snapshot()` form, ready for `Session.from_snapshot`."""
        return {
            "id": self.id,
            "name": self.name,
            "system_prompt": self.system_prompt,
            "provider": self.settings.get("provider"),
            "maintenance": self.settings.get("maintenance"),
            "user_turns": list(self.user_turns),
            "lanes": {
                name: {
                    **self.memory[name],
                    "turns": [_plain(r) for r in self.records.get(name, [])],
                }
                for name in self.strategies
            },
        }

    def as_dict(self) -> dict[str, Any]:
        """The whole session as JSON-ready data (the JSON export; `from_dict` reads it back)."""
        return {
            FORMAT: SCHEMA_VERSION,
            **self.snapshot(),
            "info": self.info.as_dict(),
            "settings": self.settings,
            "interrupted": list(self.interrupted),
            "survival": self.survival,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SavedSession:
        """Read a JSON export back; SessionFormatError names the first missing or wrong part."""
        if not isinstance(data, Mapping) or FORMAT not in data:
            raise SessionFormatError(f"not a Memory Lab session export (no {FORMAT!r} key)")
        version = data[FORMAT]
        if not isinstance(version, int) or version > SCHEMA_VERSION:
            raise SessionFormatError(
                f"export format {version!r} is newer than this app understands"
            )
        for key in ("id", "user_turns", "lanes", "settings"):
            if key not in data:
                raise SessionFormatError(f"the export has no {key!r}")
        user_turns = data["user_turns"]
        if not isinstance(user_turns, list) or not all(isinstance(u, str) for u in user_turns):
            raise SessionFormatError("'user_turns' must be a list of strings")
        lanes = data["lanes"]
        if not isinstance(lanes, Mapping) or not lanes:
            raise SessionFormatError("'lanes' must map each strategy to its lane")
        records: dict[str, list[LaneTurn]] = {}
        memory: dict[str, dict[str, Any]] = {}
        for name, lane in lanes.items():
            if name not in REGISTRY:
                raise SessionFormatError(f"lane {name!r}: unknown strategy")
            try:
                records[name] = [LaneTurn.from_dict(t) for t in lane["turns"]]
                memory[name] = {
                    "strategy": lane.get("strategy", name),
                    "params": dict(lane.get("params") or {}),
                    "memory": dict(lane["memory"]),
                    "turn_numbers": [int(t) for t in lane["turn_numbers"]],
                }
            except (KeyError, TypeError, ValueError) as exc:
                raise SessionFormatError(f"lane {name!r}: {type(exc).__name__}: {exc}") from exc
            bad = [r.turn for r in records[name] if not 1 <= r.turn <= len(user_turns)]
            if bad:
                raise SessionFormatError(
                    f"lane {name!r}: turn {bad[0]} is outside 1..{len(user_turns)}"
                )
        info_data = dict(data.get("info") or {})
        info_data.setdefault("id", data["id"])
        info_data.setdefault("name", data.get("name", ""))
        strategies = tuple(lanes)
        saved_records = [r for rs in records.values() for r in rs if not is_interrupted(r)]
        info = SessionInfo.from_dict(
            {
                **info_data,
                "strategies": list(strategies),
                "turns": len(user_turns),
                "lane_turns": len(saved_records),
                "prompt_tokens": sum(prompt_tokens(r) for r in saved_records),
                "total_tokens": sum(total_tokens(r) for r in saved_records),
                "has_survival": bool(data.get("survival")),
            }
        )
        settings = dict(data["settings"])
        settings.setdefault("system_prompt", data.get("system_prompt", ""))
        return _complete(
            cls(
                info=info,
                settings=settings,
                user_turns=tuple(user_turns),
                records=records,
                memory=memory,
                survival=dict(data["survival"]) if data.get("survival") else None,
            )
        )

    @classmethod
    def from_session(
        cls,
        session: Session,
        *,
        app: Mapping[str, Any] | None = None,
        source: str = "main",
        survival: Mapping[str, Any] | None = None,
        created: datetime | None = None,
    ) -> SavedSession:
        """A live Session as plain data (to save it whole, or export it without a database)."""
        records = session.records()
        saved = [r for rs in records.values() for r in rs if not is_interrupted(r)]
        now = _now()
        info = SessionInfo(
            id=session.id,
            name=session.name or default_name(session.user_turns),
            source=source,
            created=created or now,
            updated=now,
            strategies=tuple(session.lanes),
            turns=session.turn,
            lane_turns=len(saved),
            prompt_tokens=sum(prompt_tokens(r) for r in saved),
            total_tokens=sum(total_tokens(r) for r in saved),
            has_survival=survival is not None,
        )
        return _complete(
            cls(
                info=info,
                settings=session_settings(session, app=app),
                user_turns=tuple(session.user_turns),
                records=records,
                memory={name: lane.memory_state() for name, lane in session.lanes.items()},
                survival=dict(survival) if survival else None,
            )
        )


def _complete(saved: SavedSession) -> SavedSession:
    """Fill each lane's missing turns with `Interrupted` records; list the turns affected."""
    interrupted: set[int] = set()
    records: dict[str, list[LaneTurn]] = {}
    for name in saved.strategies:
        have = {r.turn: r for r in saved.records.get(name, [])}
        rows = []
        for turn, user in enumerate(saved.user_turns, start=1):
            record = have.get(turn)
            if record is None or is_interrupted(record):
                interrupted.add(turn)
                record = record or interrupted_record(name, turn, user)
            rows.append(record)
        records[name] = rows
    return SavedSession(
        info=saved.info,
        settings=saved.settings,
        user_turns=saved.user_turns,
        records=records,
        memory=saved.memory,
        interrupted=tuple(sorted(interrupted)),
        survival=saved.survival,
    )


def default_name(user_turns: Sequence[str]) -> str:
    """A session's name before anyone renames it: its first message, shortened."""
    if not user_turns:
        return "Empty conversation"
    first = " ".join(user_turns[0].split())
    return first if len(first) <= 60 else first[:59].rstrip() + "…"


def session_settings(session: Session, *, app: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What a session was run with, as data with no key: prompt, providers, lanes, counter."""
    provider = public_settings(session.provider)
    maintenance = (
        None if session.maintenance is session.provider else public_settings(session.maintenance)
    )
    return {
        "system_prompt": session.system_prompt,
        "provider": provider,
        "maintenance": maintenance,
        "lanes": [
            {"strategy": n, "params": dict(lane.params)} for n, lane in session.lanes.items()
        ],
        "counter": {
            "encoding": session.counter.encoding_name,
            "estimate": session.counter.estimate,
        },
        "app": dict(app) if app else None,
    }


def _compact_state(state: Mapping[str, Any], records: Sequence[LaneTurn]) -> dict[str, Any]:
    """A lane's memory state without its history pairs when they equal its recorded turns."""
    memory = dict(state["memory"])
    numbers = state["turn_numbers"]
    by_turn = {r.turn: r for r in records}
    pairs = memory.get("turns")
    try:
        derived = [[by_turn[t].user, by_turn[t].reply] for t in numbers]
    except KeyError:
        derived = None
    if pairs is not None and derived is not None and [list(p) for p in pairs] == derived:
        memory["turns"] = None
        memory["turns_from_records"] = True
    return {**state, "memory": memory}


def _expand_state(state: Mapping[str, Any], records: Sequence[LaneTurn]) -> dict[str, Any]:
    memory = dict(state["memory"])
    if memory.pop("turns_from_records", False):
        by_turn = {r.turn: r for r in records}
        memory["turns"] = [[by_turn[t].user, by_turn[t].reply] for t in state["turn_numbers"]]
    return {**state, "memory": memory}


def provider_from(public: Mapping[str, Any] | None) -> Any:
    """ProviderSettings rebuilt from their saved public form (the key is read from the
    environment when a call needs it); ValueError when the saved form is not one."""
    from providers import ProviderSettings

    if not public or "kind" not in public or "model" not in public:
        raise ValueError("the saved session does not say which provider it used")
    names = {f.name for f in fields(ProviderSettings)} - {"api_key", "kind", "model"}
    values = {k: v for k, v in public.items() if k in names}
    return ProviderSettings(public["kind"], public["model"], **values)


# ---- the store -----------------------------------------------------------------------------


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


_UPSERTS: dict[tuple[str, str, bool, tuple[str, ...]], Any] = {}


def _upsert(conn: Connection, table: sa.Table, values: Mapping[str, Any], update: bool) -> None:
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


def _account_statement() -> Any:
    """The first statement of a lane-turn write: add this row's figures to the session's
    totals, minus those of the row it replaces (a retry), if the writer still owns it."""
    lt, s = lane_turns_t.c, sessions_t.c
    same = sa.and_(
        lt.session_id == sa.bindparam("b_sid"),
        lt.turn == sa.bindparam("b_turn"),
        lt.lane == sa.bindparam("b_lane"),
    )
    old_prompt = sa.select(lt.prompt_tokens).where(same).scalar_subquery()
    old_total = sa.select(lt.total_tokens).where(same).scalar_subquery()
    exists = sa.exists(sa.select(lt.turn).where(same))
    return (
        sa.update(sessions_t)
        .where(s.id == sa.bindparam("b_sid"), s.writer == sa.bindparam("b_writer"))
        .values(
            updated_at=sa.bindparam("b_now", type_=TS),
            prompt_tokens=s.prompt_tokens
            + sa.bindparam("b_prompt", type_=sa.BigInteger)
            - sa.func.coalesce(old_prompt, 0),
            total_tokens=s.total_tokens
            + sa.bindparam("b_total", type_=sa.BigInteger)
            - sa.func.coalesce(old_total, 0),
            lane_turn_count=s.lane_turn_count + sa.case((exists, 0), else_=1),
        )
    )


_ACCOUNT = _account_statement()


def _plain(record: LaneTurn) -> dict[str, Any]:
    """A LaneTurn's fields as a dict, sharing its (never mutated) values: `as_dict` deep-copies
    every body, which is slow for a long session."""
    data = {f.name: getattr(record, f.name) for f in _LANE_FIELDS}
    data["account"] = record.account.as_dict()
    data["maintenance"] = [m.as_dict() for m in record.maintenance]
    return data


_LANE_FIELDS = fields(LaneTurn)


def _record_data(record: LaneTurn) -> tuple[dict[str, Any], Any]:
    """A LaneTurn as (its fields without the body, the body): no deep copy, JSON does that."""
    data = _plain(record)
    return data, data.pop("body")


class Store:
    """Saved sessions in one database. Thread-safe; holds no conversation in memory (two
    browser sessions share the store object, never each other's state)."""

    def __init__(self, url: str | None = None) -> None:
        self.url = normalise_url(url or default_url())
        self.kind = self.url.get_backend_name()
        self.engine = self._engine()
        self._sqlite_lock = threading.Lock() if self.kind == "sqlite" else None
        self._create()

    # -- set-up --

    def _engine(self) -> Engine:
        if self.kind != "sqlite":
            return sa.create_engine(self.url, pool_pre_ping=True)
        database = self.url.database or ""
        if database and database != ":memory:":
            Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = sa.create_engine(self.url, connect_args={"timeout": 30})

        @sa.event.listens_for(engine, "connect")
        def _on_connect(dbapi_conn: Any, _record: Any) -> None:
            dbapi_conn.isolation_level = None  # transactions are begun below, explicitly
            cursor = dbapi_conn.cursor()
            for pragma in (
                "PRAGMA journal_mode=WAL",
                "PRAGMA synchronous=NORMAL",  # with WAL: a committed turn survives a crash
                "PRAGMA foreign_keys=ON",
                "PRAGMA busy_timeout=30000",
            ):
                cursor.execute(pragma)
            cursor.close()

        @sa.event.listens_for(engine, "begin")
        def _on_begin(conn: Connection) -> None:
            mode = conn.get_execution_options().get("sqlite_begin", "DEFERRED")
            conn.exec_driver_sql(f"BEGIN {mode}")

        return engine

    def _create(self) -> None:
        try:
            metadata.create_all(self.engine, checkfirst=True)
            with self._write() as conn:
                _upsert(conn, meta_t, {"key": "schema", "value": str(SCHEMA_VERSION)}, False)
        except sa.exc.SQLAlchemyError as exc:
            raise StoreError(f"cannot open the session store at {self.display_url}: {exc}") from exc

    @property
    def display_url(self) -> str:
        """The URL with any password hidden."""
        return self.url.render_as_string(hide_password=True)

    def close(self) -> None:
        self.engine.dispose()

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
        """One consistent read (a snapshot of the database while several reads run)."""
        with self.engine.connect() as raw:
            conn = (
                raw.execution_options(isolation_level="REPEATABLE READ")
                if self.kind == "postgresql"
                else raw
            )
            with conn.begin():
                yield conn

    # -- live sessions --

    def track(
        self, session: Session, *, app: Mapping[str, Any] | None = None, source: str = "main"
    ) -> Tracker:
        """Save `session` as it runs: each user turn when it begins, each lane turn when it
        is recorded. Returns the tracker (its `error` says if saving failed)."""
        for listener in session.listeners:
            if isinstance(listener, Tracker) and listener.store is self:
                return listener
        tracker = Tracker(self, session, app=app, source=source)
        session.turn_listeners.append(tracker.on_turn)
        session.listeners.append(tracker)
        return tracker

    def _begin_turn(self, tracker: Tracker, session: Session, turn: int, text: str) -> None:
        now = _now()
        with self._write() as conn:
            if not tracker.claimed:
                _upsert(conn, sessions_t, self._session_row(session, tracker, now, 0), False)
            claimed = self._claim(conn, session.id, tracker, turn - 1, turn, now)
            if claimed:
                conn.execute(
                    sa.insert(turns_t).values(
                        session_id=session.id,
                        turn=turn,
                        user_text=scrub_text(text, tracker.secrets),
                        created_at=now,
                    )
                )
        if claimed:
            tracker.claimed = True
            return
        # continued in another window (or deleted there): keep this conversation as a copy
        old = session.id
        session.id = uuid.uuid4().hex[:12]
        session.name = f"{session.name or default_name(session.user_turns)} (copy)"
        saved = SavedSession.from_session(session, app=tracker.app, source=tracker.source)
        with self._write() as conn:
            self._insert_all(conn, saved, writer=tracker.token, secrets=tracker.secrets)
        tracker.claimed = True
        tracker.notes.append(
            f"session {old} was changed in another window: this conversation is saved as a "
            f"copy ({session.id})"
        )

    def _claim(
        self, conn: Connection, sid: str, tracker: Tracker, before: int, after: int, now: datetime
    ) -> bool:
        """Stay the session's writer, or become it if the saved session still has `before`
        turns (nobody added any since this tracker's session was loaded); set the turn count
        to `after`. False when another writer got there first (or the session is gone)."""
        mine = sessions_t.c.writer == tracker.token
        cond = mine if tracker.claimed else sa.or_(mine, sessions_t.c.turn_count == before)
        result = conn.execute(
            sa.update(sessions_t)
            .where(sessions_t.c.id == sid, cond)
            .values(writer=tracker.token, turn_count=after, updated_at=now)
        )
        return result.rowcount == 1

    def _save_lane_turn(self, tracker: Tracker, session: Session, record: LaneTurn) -> None:
        lane = session.lanes[record.lane]
        state = _compact_state(lane.memory_state(), lane.turns)
        data, body = _record_data(record)
        values = {
            "session_id": session.id,
            "turn": record.turn,
            "lane": record.lane,
            "status": record.status,
            "prompt_tokens": prompt_tokens(record),
            "total_tokens": total_tokens(record),
            "created_at": _now(),
            "record": dumps(data, tracker.secrets),
            "body": None if body is None else dumps(body, tracker.secrets),
        }
        state_json = dumps(state, tracker.secrets)
        with self._write() as conn:
            if not tracker.claimed:  # a retry right after continuing: no turn began here yet
                now = values["created_at"]
                if not self._claim(conn, session.id, tracker, session.turn, session.turn, now):
                    raise StoreError(
                        f"session {session.id} was deleted or continued in another window; "
                        f"turn {record.turn} of {record.lane} is not saved"
                    )
            if not self._account(conn, values, tracker.token):
                raise StoreError(
                    f"session {session.id} was deleted or continued in another window; "
                    f"turn {record.turn} of {record.lane} is not saved"
                )
            _upsert(conn, lane_turns_t, values, True)
            _upsert(
                conn,
                lane_states_t,
                {"session_id": session.id, "lane": record.lane, "turn": record.turn,
                 "state": state_json},
                True,
            )  # fmt: skip

    def _account(self, conn: Connection, values: Mapping[str, Any], writer: str) -> bool:
        """Update the session's totals for a lane-turn row (see `_ACCOUNT`); False if
        `writer` no longer owns the session."""
        params = {
            "b_sid": values["session_id"],
            "b_turn": values["turn"],
            "b_lane": values["lane"],
            "b_writer": writer,
            "b_now": values["created_at"],
            "b_prompt": values["prompt_tokens"],
            "b_total": values["total_tokens"],
        }
        return conn.execute(_ACCOUNT, params).rowcount == 1

    def _session_row(
        self, session: Session, tracker: Tracker, now: datetime, turns: int
    ) -> dict[str, Any]:
        return {
            "id": session.id,
            "name": scrub_text(session.name or default_name(session.user_turns), tracker.secrets)[
                :NAME_LIMIT
            ],
            "source": tracker.source,
            "created_at": now,
            "updated_at": now,
            "settings": dumps(session_settings(session, app=tracker.app), tracker.secrets),
            "strategies": json.dumps(list(session.lanes)),
            "lane_count": len(session.lanes),
            "turn_count": turns,
            "lane_turn_count": 0,
            "prompt_tokens": 0,
            "total_tokens": 0,
            "survival": None,
            "writer": tracker.token,
        }

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
        id. An id already in the store gets a fresh one, so nothing is overwritten."""
        if isinstance(saved, Session):
            found = secrets_of(saved.provider, saved.maintenance)
            saved = SavedSession.from_session(saved, app=app, source=source or "replay")
            secrets = set(secrets) | found
        elif source:
            saved = replace(saved, info=_with(saved.info, source=source))
        secrets = set(secrets) | env_secrets()
        with self._write() as conn:
            taken = conn.execute(
                sa.select(sessions_t.c.id).where(sessions_t.c.id == saved.id)
            ).first()
            if taken or new_id:
                saved = _renumbered(saved, uuid.uuid4().hex[:12])
            self._insert_all(conn, saved, writer=None, secrets=secrets)
        return saved.id

    def import_json(self, text: str | bytes) -> str:
        """Restore a JSON export as a new saved session; SessionFormatError says what is wrong and
        nothing is written."""
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            where = f" (line {exc.lineno}, column {exc.colno})" if hasattr(exc, "lineno") else ""
            raise SessionFormatError(f"not valid JSON{where}: {getattr(exc, 'msg', exc)}") from exc
        return self.save(SavedSession.from_dict(data), source="import")

    def _insert_all(
        self, conn: Connection, saved: SavedSession, *, writer: str | None, secrets: Iterable[str]
    ) -> None:
        now = _now()
        secrets = set(secrets)
        kept = {n: [r for r in rs if not is_interrupted(r)] for n, rs in saved.records.items()}
        flat = [r for rs in kept.values() for r in rs]
        conn.execute(
            sa.insert(sessions_t).values(
                id=saved.id,
                name=scrub_text(saved.name or default_name(saved.user_turns), secrets)[:NAME_LIMIT],
                source=saved.info.source,
                created_at=saved.info.created,
                updated_at=now,
                settings=dumps(saved.settings, secrets),
                strategies=json.dumps(list(saved.strategies)),
                lane_count=len(saved.strategies),
                turn_count=len(saved.user_turns),
                lane_turn_count=len(flat),
                prompt_tokens=sum(prompt_tokens(r) for r in flat),
                total_tokens=sum(total_tokens(r) for r in flat),
                survival=dumps(saved.survival, secrets) if saved.survival else None,
                writer=writer,
            )
        )
        if saved.user_turns:
            conn.execute(
                sa.insert(turns_t),
                [
                    {
                        "session_id": saved.id,
                        "turn": i,
                        "user_text": scrub_text(u, secrets),
                        "created_at": now,
                    }
                    for i, u in enumerate(saved.user_turns, start=1)
                ],
            )
        rows = []
        for r in flat:
            data, body = _record_data(r)
            rows.append(
                {
                    "session_id": saved.id,
                    "turn": r.turn,
                    "lane": r.lane,
                    "status": r.status,
                    "prompt_tokens": prompt_tokens(r),
                    "total_tokens": total_tokens(r),
                    "created_at": now,
                    "record": dumps(data, secrets),
                    "body": None if body is None else dumps(body, secrets),
                }
            )
        if rows:
            conn.execute(sa.insert(lane_turns_t), rows)
        states = [
            {
                "session_id": saved.id,
                "lane": name,
                "turn": max((r.turn for r in kept.get(name, [])), default=0),
                "state": dumps(_compact_state(saved.memory[name], kept.get(name, [])), secrets),
            }
            for name in saved.strategies
        ]
        conn.execute(sa.insert(lane_states_t), states)

    # -- reading --

    def list(self, *, limit: int = 500) -> list[SessionInfo]:
        """Saved sessions, most recently updated first."""
        s = sessions_t.c
        query = (
            sa.select(
                s.id, s.name, s.source, s.created_at, s.updated_at, s.strategies, s.turn_count,
                s.lane_turn_count, s.prompt_tokens, s.total_tokens, s.survival.is_not(None),
            )
            .where(s.turn_count > 0)
            .order_by(s.updated_at.desc(), s.id)
            .limit(limit)
        )  # fmt: skip
        with self._read() as conn:
            rows = conn.execute(query).all()
        return [self._info(row) for row in rows]

    @staticmethod
    def _info(row: Any) -> SessionInfo:
        return SessionInfo(
            id=row[0],
            name=row[1],
            source=row[2],
            created=_utc(row[3]),
            updated=_utc(row[4]),
            strategies=tuple(json.loads(row[5])),
            turns=int(row[6]),
            lane_turns=int(row[7]),
            prompt_tokens=int(row[8]),
            total_tokens=int(row[9]),
            has_survival=bool(row[10]),
        )

    def info(self, session_id: str) -> SessionInfo:
        s = sessions_t.c
        with self._read() as conn:
            row = conn.execute(
                sa.select(
                    s.id, s.name, s.source, s.created_at, s.updated_at, s.strategies,
                    s.turn_count, s.lane_turn_count, s.prompt_tokens, s.total_tokens,
                    s.survival.is_not(None),
                ).where(s.id == session_id)
            ).first()  # fmt: skip
        if row is None:
            raise SessionNotFound(session_id)
        return self._info(row)

    def load(self, session_id: str, *, bodies: bool = True) -> SavedSession:
        """A saved session, read-only (bodies=False skips the request bodies: faster)."""
        s, t, lt, ls = sessions_t.c, turns_t.c, lane_turns_t.c, lane_states_t.c
        columns = [lt.lane, lt.record, lt.body if bodies else sa.null()]
        with self._read() as conn:
            row = conn.execute(
                sa.select(
                    s.id, s.name, s.source, s.created_at, s.updated_at, s.strategies,
                    s.turn_count, s.lane_turn_count, s.prompt_tokens, s.total_tokens,
                    s.survival.is_not(None), s.settings, s.survival,
                ).where(s.id == session_id)
            ).first()  # fmt: skip
            if row is None:
                raise SessionNotFound(session_id)
            user_turns = conn.execute(
                sa.select(t.turn, t.user_text).where(t.session_id == session_id).order_by(t.turn)
            ).all()
            lane_rows = conn.execute(
                sa.select(*columns).where(lt.session_id == session_id).order_by(lt.lane, lt.turn)
            ).all()
            state_rows = conn.execute(
                sa.select(ls.lane, ls.state).where(ls.session_id == session_id)
            ).all()
        info = self._info(row)
        texts = [u for _, u in user_turns][: info.turns]
        records: dict[str, list[LaneTurn]] = {name: [] for name in info.strategies}
        for lane, record, body in lane_rows:
            data = json.loads(record)
            data["body"] = json.loads(body) if body is not None else None
            if lane in records and data["turn"] <= len(texts):
                records[lane].append(LaneTurn.from_dict(data))
        memory = {}
        for lane, state in state_rows:
            memory[lane] = _expand_state(json.loads(state), records.get(lane, []))
        settings = json.loads(row[11])
        for name in info.strategies:
            if name not in memory:  # a lane that has not answered yet: fresh memory
                memory[name] = _fresh_state(name, settings)
        return _complete(
            SavedSession(
                info=_with(info, turns=len(texts)),
                settings=settings,
                user_turns=tuple(texts),
                records=records,
                memory=memory,
                survival=json.loads(row[12]) if row[12] else None,
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
        `provider` defaults to the saved provider settings (key from the environment).
        Not tracked yet: call `track` on it (the UI does)."""
        saved = self.load(session_id)
        if provider is None:
            provider = provider_from(saved.settings.get("provider"))
            if maintenance is None and saved.settings.get("maintenance"):
                maintenance = provider_from(saved.settings["maintenance"])
        return Session.from_snapshot(
            saved.snapshot(), provider=provider, maintenance=maintenance, transport=transport
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
                .where(sessions_t.c.id == session_id)
                .values(name=scrub_text(name, env_secrets()))
            )
        if done.rowcount != 1:
            raise SessionNotFound(session_id)

    def delete(self, session_id: str) -> bool:
        """Delete a session and everything saved with it; False if it did not exist."""
        with self._write() as conn:
            for table in (lane_states_t, lane_turns_t, turns_t):
                conn.execute(sa.delete(table).where(table.c.session_id == session_id))
            done = conn.execute(sa.delete(sessions_t).where(sessions_t.c.id == session_id))
        return done.rowcount == 1

    def attach_survival(self, session_id: str, result: Mapping[str, Any] | None) -> None:
        """Keep a fact-survival run (`SurvivalResult.as_dict()`) with a session (None: drop)."""
        value = dumps(dict(result), env_secrets()) if result else None
        with self._write() as conn:
            done = conn.execute(
                sa.update(sessions_t)
                .where(sessions_t.c.id == session_id)
                .values(survival=value, updated_at=_now())
            )
        if done.rowcount != 1:
            raise SessionNotFound(session_id)


def _fresh_state(name: str, settings: Mapping[str, Any]) -> dict[str, Any]:
    params = {}
    for lane in settings.get("lanes") or []:
        if lane.get("strategy") == name:
            params = dict(lane.get("params") or {})
    memory = {
        "strategy": name,
        "turns": [],
        "summary": None,
        "summarised": 0,
        "facts": {},
        "summary_truncated": None,
    }
    return {"strategy": name, "params": params, "memory": memory, "turn_numbers": []}


def _with(info: SessionInfo, **changes: Any) -> SessionInfo:
    return replace(info, **changes)


def _renumbered(saved: SavedSession, new: str) -> SavedSession:
    return replace(saved, info=_with(saved.info, id=new))


@dataclass(eq=False)
class Tracker:
    """Saves one live Session as it runs (a session listener). Never raises into a lane:
    a failed write is logged and kept in `error`, and the conversation goes on."""

    store: Store
    session: Session = field(repr=False)
    app: dict[str, Any] | None = None
    source: str = "main"
    token: str = field(default_factory=lambda: uuid.uuid4().hex)
    claimed: bool = False
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    saved: int = 0

    def __post_init__(self) -> None:
        self.app = dict(self.app) if self.app else None
        self.secrets = secrets_of(self.session.provider, self.session.maintenance)

    def on_turn(self, session: Session, turn: int, text: str) -> None:
        self._guard(lambda: self.store._begin_turn(self, session, turn, text))

    def __call__(self, session: Session, record: LaneTurn) -> None:
        self._guard(lambda: self.store._save_lane_turn(self, session, record))
        if self.error is None:
            self.claimed = True
            self.saved += 1

    def _guard(self, write: Callable[[], None]) -> None:
        try:
            write()
            self.error = None
        except Exception as exc:  # saving must never take a lane (or the page) down
            log.exception("saving session %s failed", self.session.id)
            self.error = f"{type(exc).__name__}: {exc}"


__all__ = [
    "ENV_URL",
    "FORMAT",
    "INTERRUPTED",
    "OK",
    "SessionFormatError",
    "SavedSession",
    "SessionInfo",
    "SessionNotFound",
    "Store",
    "StoreError",
    "Tracker",
    "default_url",
    "provider_from",
    "scrub_text",
]
