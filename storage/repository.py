"""The repository: saved sessions in a real database, SQLite by default, PostgreSQL through a
database URL. The top of storage/'s chain (tables -> migrations -> record codec -> here).

    store = Store()                      # data/memory_lab.sqlite3, or $MEMORY_LAB_DB_URL
    store.track(session, app={...})      # saves every turn of a live Session as it completes
    store.list(); store.load(id); store.rename(id, n); store.delete(id)
    engines.sessions: a saved session as a live one (storage hands back records only)
    store.compositions.save(c)           # saved compositions (storage/compositions.py)

Every user turn and every lane turn is written in its own transaction as it happens, so a
process killed mid-turn loses nothing that completed. A lane turn whose user-turn row is
missing (its write failed) writes that row too, from the lane record; loading keys user texts
by turn number and shows whatever is there. A session continued in two windows at once is
not overwritten: the second writer's turn goes to a copy. No key is ever stored: settings
go through `public_settings`, and every text through `records.dumps` (known secrets masked).

`Store` holds its collaborators as attributes: `db` (storage/database.py: the connection and
its transactions), `writes` (storage/writes.py) and `compositions` (storage/compositions.py).
Rows are read here by column name.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from lanes.lane import LaneTurn
from lanes.session import Session
from providers.redaction import env_key_values, secrets_of
from storage.carried import adopt
from storage.codec import decode_turn, read_export
from storage.compositions import Compositions
from storage.database import BUSY_TIMEOUT, Database
from storage.deltas import LaneUnpacker, unpack_record
from storage.errors import SessionNotFound
from storage.records import (
    NAME_LIMIT,
    dumps,
    expand_state,
    fresh_state,
)
from storage.saved import SavedSession, SessionInfo, complete
from storage.tables import (
    lane_log_t,
    lane_states_t,
    lane_turns_t,
    messages_t,
    now,
    sessions_t,
    turns_t,
)
from storage.tracker import Tracker
from storage.writes import SessionWrites, clean

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


class Store:
    """Saved sessions in one database. Thread-safe; holds no conversation in memory (two
    browser sessions share the store object, never each other's state)."""

    def __init__(self, url: str | None = None, *, busy_timeout: float = BUSY_TIMEOUT) -> None:
        self.db = Database(url, busy_timeout=busy_timeout)
        self.writes = SessionWrites(self.db)
        self.compositions = Compositions(self.db)

    @property
    def url(self) -> sa.URL:
        return self.db.url

    @property
    def kind(self) -> str:
        """The database's backend: "sqlite" or "postgresql"."""
        return self.db.kind

    @property
    def display_url(self) -> str:
        """The URL with any password hidden."""
        return self.db.display_url

    def close(self) -> None:
        self.db.close()

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
        return self.writes.save_whole(saved, new_id=new_id, secrets=secrets)

    def import_json(self, text: str | bytes) -> str:
        """Restore a JSON export as a new saved session; SessionFormatError says what is wrong
        and nothing is written."""
        return self.save(read_export(text), source="import")

    # -- reading --

    def list(self, *, limit: int = 500) -> list[SessionInfo]:
        """Saved sessions, most recently updated first."""
        query = (
            sa.select(*_INFO_COLUMNS)
            .where(_S.turn_count > 0)
            .order_by(_S.updated_at.desc(), _S.id)
            .limit(limit)
        )
        with self.db.read() as conn:
            rows = conn.execute(query).all()
        return [_info(row) for row in rows]

    def info(self, session_id: str) -> SessionInfo:
        with self.db.read() as conn:
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
        messages: dict[str, str] = {}
        logs: dict[str, list[str]] = {}
        with self.db.read() as conn:
            query = sa.select(*_INFO_COLUMNS, _S.settings, _S.survival).where(_S.id == session_id)
            row = conn.execute(query).first()
            if row is None:
                raise SessionNotFound(session_id)
            user_rows = conn.execute(
                sa.select(t.turn, t.user_text).where(t.session_id == session_id)
            ).all()
            lane_rows = conn.execute(
                sa.select(lt.lane, lt.turn, lt.record, body_column, lt.body_format)
                .where(lt.session_id == session_id)
                .order_by(lt.lane, lt.turn)
            ).all()
            if bodies:
                m, g = messages_t.c, lane_log_t.c
                found = conn.execute(sa.select(m.hash, m.message).where(m.session_id == session_id))
                messages = {r.hash: r.message for r in found}
                logged = conn.execute(
                    sa.select(g.lane, g.hash)
                    .where(g.session_id == session_id)
                    .order_by(g.lane, g.seq)
                )
                for entry in logged:
                    logs.setdefault(entry.lane, []).append(entry.hash)
            state_rows = conn.execute(
                sa.select(ls.lane, ls.state).where(ls.session_id == session_id)
            ).all()
        info = _info(row)
        records: dict[str, list[LaneTurn]] = {name: [] for name in info.strategies}
        unpackers: dict[str, LaneUnpacker] = {}
        for lane_row in lane_rows:
            if lane_row.lane not in records:
                continue  # a lane the session does not list (a damaged import)
            data = unpack_record(json.loads(lane_row.record))
            unpacker = unpackers.get(lane_row.lane)
            if unpacker is None:
                log = logs.get(lane_row.lane, [])
                unpacker = unpackers[lane_row.lane] = LaneUnpacker(lane_row.lane, log, messages)
            data["body"] = unpacker.body(lane_row.turn, lane_row.body, lane_row.body_format)
            held = records[lane_row.lane]
            held.append(decode_turn(data, f"lanes.{lane_row.lane}.turns[{len(held)}]"))
        texts = {r.turn: r.user_text for r in user_rows}
        from_lanes = {r.turn: r.user for rs in records.values() for r in rs}
        last = max([info.turns, *texts, *from_lanes], default=0)
        user_turns = tuple(texts.get(n, from_lanes.get(n, "")) for n in range(1, last + 1))
        memory = {}
        by_number = dict(enumerate(user_turns, start=1))
        for state_row in state_rows:
            state = json.loads(state_row.state)
            lane_records = records.get(state_row.lane, [])
            memory[state_row.lane] = expand_state(state, lane_records, by_number)
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

    # -- editing --

    def rename(self, session_id: str, name: str) -> None:
        name = " ".join(name.split())
        if not name:
            raise ValueError("a session needs a name: type one")
        if len(name) > NAME_LIMIT:
            raise ValueError(f"a name is at most {NAME_LIMIT} characters")
        with self.db.write() as conn:
            done = conn.execute(
                sa.update(sessions_t)
                .where(_S.id == session_id)
                .values(name=clean(name, env_key_values()))
            )
        if done.rowcount != 1:
            raise SessionNotFound(session_id)

    def delete(self, session_id: str) -> bool:
        """Delete a session and everything saved with it; False if it did not exist."""
        with self.db.write() as conn:
            for table in (lane_states_t, lane_turns_t, lane_log_t, messages_t, turns_t):
                conn.execute(sa.delete(table).where(table.c.session_id == session_id))
            done = conn.execute(sa.delete(sessions_t).where(_S.id == session_id))
        self.writes.forget(session_id)
        return done.rowcount == 1

    def attach_survival(self, session_id: str, result: Mapping[str, Any] | None) -> None:
        """Keep a fact-survival run (`SurvivalResult.as_dict()`) with a session (None: drop)."""
        value = dumps(dict(result), env_key_values()) if result else None
        with self.db.write() as conn:
            done = conn.execute(
                sa.update(sessions_t)
                .where(_S.id == session_id)
                .values(survival=value, updated_at=now())
            )
        if done.rowcount != 1:
            raise SessionNotFound(session_id)
