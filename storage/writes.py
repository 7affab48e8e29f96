"""The writes of the session store: a live session's turns as they happen (the Tracker's
side), and a whole session at once (imports, replays, copies). `SessionWrites` is the
repository's collaborator for them; every row it writes goes through `clean` (texts) or
`records.dumps` (JSON), where known secrets are masked."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from lanes.lane import LaneTurn
from lanes.session import Session
from providers.redaction import redact
from storage.database import Database
from storage.deltas import LanePacker, Packed, pack_record
from storage.errors import StoreError
from storage.records import (
    NAME_LIMIT,
    PairCheck,
    compact_state,
    default_name,
    dumps,
    is_interrupted,
    prompt_tokens,
    record_data,
    session_settings,
    storable,
    total_tokens,
)
from storage.saved import SavedSession, valid_id
from storage.tables import (
    TS,
    lane_log_t,
    lane_states_t,
    lane_turns_t,
    messages_t,
    now,
    sessions_t,
    turns_t,
    upsert,
)

_S = sessions_t.c


def _account_statement() -> Any:
    """The first statement of a lane-turn write: add this row's figures to the session's
    totals, minus those of the row it replaces (a retry), if the writer still owns it; the
    turn count grows to this turn if its user-turn write was lost."""
    lt, s = lane_turns_t.c, sessions_t.c
    same = sa.and_(
        lt.session_id == sa.bindparam("b_sid"),
        lt.turn == sa.bindparam("b_turn"),
        lt.lane == sa.bindparam("b_lane"),
    )
    old_prompt = sa.select(lt.prompt_tokens).where(same).scalar_subquery()
    old_total = sa.select(lt.total_tokens).where(same).scalar_subquery()
    exists = sa.exists(sa.select(lt.turn).where(same))
    turn = sa.bindparam("b_turn", type_=sa.Integer)
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
            turn_count=sa.case((s.turn_count < turn, turn), else_=s.turn_count),
        )
    )


_ACCOUNT = _account_statement()


def clean(text: str, secrets: Iterable[str]) -> str:
    return storable(redact(text, secrets))


class SessionWrites:
    """The session writes of one database (see the module docstring)."""

    LANES = 256  # lanes whose packer and pair check are kept (a long-running app sees many)

    def __init__(self, db: Database) -> None:
        self.db = db
        self._packers: dict[tuple[str, str], LanePacker] = {}
        self._checks: dict[tuple[str, str], PairCheck] = {}
        self._caches = threading.Lock()  # lanes write from their own threads

    def _packer(self, conn: Connection, session_id: str, lane: str) -> LanePacker:
        """The lane's packer, its log read from the database the first time (and again if
        another process has added to it since)."""
        log = lane_log_t.c
        with self._caches:
            packer = self._packers.pop((session_id, lane), None)
        if packer is not None:
            last = conn.execute(
                sa.select(sa.func.max(log.seq)).where(
                    log.session_id == session_id, log.lane == lane
                )
            ).scalar_one()
            if (-1 if last is None else last) + 1 != len(packer.log):  # seq counts from 0
                packer = None
        if packer is None:
            packer = LanePacker(
                conn.execute(
                    sa.select(log.hash)
                    .where(log.session_id == session_id, log.lane == lane)
                    .order_by(log.seq)
                ).scalars()
            )
        self._keep(self._packers, (session_id, lane), packer)
        return packer

    def forget(self, session_id: str) -> None:
        """Drop what is kept of a session's lanes (it was deleted)."""
        with self._caches:
            for cache in (self._packers, self._checks):
                for key in [k for k in cache if k[0] == session_id]:
                    del cache[key]

    def _keep(self, cache: dict[Any, Any], key: Any, value: Any) -> None:
        """Put `value` last in a lane cache, dropping the oldest beyond `LANES`."""
        with self._caches:
            cache[key] = value
            while len(cache) > self.LANES:
                del cache[next(iter(cache))]

    def _check(self, conn: Connection, session_id: str, lane: str) -> PairCheck:
        """The lane's pair check, its saved turns read from the database the first time."""
        with self._caches:
            check = self._checks.pop((session_id, lane), None)
        if check is None:
            lt = lane_turns_t.c
            check = PairCheck(
                conn.execute(
                    sa.select(lt.turn).where(lt.session_id == session_id, lt.lane == lane)
                ).scalars()
            )
        self._keep(self._checks, (session_id, lane), check)
        return check

    def begin_turn(
        self,
        session: Session,
        turn: int,
        text: str,
        *,
        writer: str,
        claimed: bool,
        secrets: Iterable[str],
        app: Mapping[str, Any] | None = None,
        source: str = "main",
    ) -> str | None:
        """Save a user turn as it begins; the writer becomes (or stays) the session's writer.
        Returns None, or the old id when the session had been changed elsewhere (continued in
        another window, or deleted) and this conversation was saved as a copy instead."""
        at = now()
        with self.db.write() as conn:
            if not claimed:
                row = self._session_row(session, writer, app, source, secrets, at, 0)
                upsert(conn, sessions_t, row, False)
            if self._claim(conn, session.id, writer, claimed, turn - 1, turn, at):
                self._user_row(conn, session.id, turn, text, secrets, at)
                return None
        old = session.id
        session.id = uuid.uuid4().hex[:12]
        session.name = f"{session.name or default_name(session.user_turns)} (copy)"
        saved = SavedSession.from_session(session, app=app, source=source)
        with self.db.write() as conn:
            self._insert_all(conn, saved, writer=writer, secrets=secrets)
        return old

    def save_user_turn(
        self, session: Session, turn: int, text: str, *, writer: str, secrets: Iterable[str]
    ) -> None:
        """Write a user-turn row whose first write failed (kept as is if it is there)."""
        with self.db.write() as conn:
            self._user_row(conn, session.id, turn, text, secrets, now())
            conn.execute(
                sa.update(sessions_t)
                .where(_S.id == session.id, _S.writer == writer, _S.turn_count < turn)
                .values(turn_count=turn)
            )

    def save_lane_turn(
        self,
        session: Session,
        record: LaneTurn,
        *,
        writer: str,
        claimed: bool,
        secrets: Iterable[str],
        app: Mapping[str, Any] | None = None,
        source: str = "main",
        create: bool = False,
    ) -> None:
        """Save one lane turn, that lane's memory, and the user turn if its row is missing.
        `create`: the session's own row may be missing too (its first write failed); else a
        missing session was deleted elsewhere, and nothing is written."""
        lane = session.lanes[record.lane]
        data, body = record_data(record)
        at = now()
        lost = StoreError(
            f"session {session.id} was deleted or continued in another window; "
            f"turn {record.turn} of {record.lane} is not saved"
        )
        with self.db.write() as conn:
            if not claimed:  # a retry after continuing, or the first turn's row was lost
                if create:
                    row = self._session_row(session, writer, app, source, secrets, at, session.turn)
                    upsert(conn, sessions_t, row, False)
                if not self._claim(conn, session.id, writer, False, session.turn, None, at):
                    raise lost
            params = {
                "b_sid": session.id, "b_turn": record.turn, "b_lane": record.lane,
                "b_writer": writer, "b_now": at, "b_prompt": prompt_tokens(record),
                "b_total": total_tokens(record),
            }  # fmt: skip
            if conn.execute(_ACCOUNT, params).rowcount != 1:
                raise lost
            self._user_row(conn, session.id, record.turn, record.user, secrets, at)
            packer = self._packer(conn, session.id, record.lane)
            packed = None if body is None else packer.pack(body, secrets)
            if packed is not None:
                _add_messages(conn, session.id, record.lane, packed)
            upsert(conn, lane_turns_t, _lane_row(session.id, record, data, packed, secrets, at),
                   True)  # fmt: skip
            check, state_data, checked = self._compacted(conn, session.id, lane, record)
            state = {"session_id": session.id, "lane": record.lane, "turn": record.turn}
            upsert(conn, lane_states_t, {**state, "state": dumps(state_data, secrets)}, True)
        if packed is not None:
            packer.commit(packed)
        check.written(record.turn, checked)

    def _compacted(
        self, conn: Connection, sid: str, lane: Any, record: LaneTurn
    ) -> tuple[PairCheck, dict[str, Any], tuple[int, Any]]:
        """The lane's memory state compacted only against its rows that exist (this one
        included): a turn whose write was lost, and whose repair failed too, keeps its pair
        inline, so the state never names a missing row. A state the kept check cannot compact
        is checked again against the rows read anew (another path may have written some)."""
        state = lane.memory_state()
        check = self._check(conn, sid, record.lane)
        data, checked = check.compact(state, lane.turns, record)
        if "turns_from_records" not in data["memory"]:
            with self._caches:
                self._checks.pop((sid, record.lane), None)
            check = self._check(conn, sid, record.lane)
            data, checked = check.compact(state, lane.turns, record)
        return check, data, checked

    def _user_row(
        self, conn: Connection, sid: str, turn: int, text: str, secrets: Iterable[str], at: Any
    ) -> None:
        row = {"session_id": sid, "turn": turn, "user_text": clean(text, secrets)}
        upsert(conn, turns_t, {**row, "created_at": at}, False)

    def _claim(
        self,
        conn: Connection,
        sid: str,
        writer: str,
        claimed: bool,
        before: int,
        after: int | None,
        at: datetime,
    ) -> bool:
        """Stay the session's writer, or become it if the saved session still has `before`
        turns (nobody added any since this writer's session was loaded); set the turn count
        to `after`. False when another writer got there first (or the session is gone)."""
        mine = _S.writer == writer
        cond = mine if claimed else sa.or_(mine, _S.turn_count == before)
        values: dict[str, Any] = {"writer": writer, "updated_at": at}
        if after is not None:
            values["turn_count"] = after
        result = conn.execute(sa.update(sessions_t).where(_S.id == sid, cond).values(**values))
        return result.rowcount == 1

    def _session_row(
        self,
        session: Session,
        writer: str,
        app: Mapping[str, Any] | None,
        source: str,
        secrets: Iterable[str],
        at: datetime,
        turns: int,
    ) -> dict[str, Any]:
        name = session.name or default_name(session.user_turns)
        return {
            "id": session.id, "name": clean(name, secrets)[:NAME_LIMIT], "source": source,
            "created_at": at, "updated_at": at,
            "settings": dumps(session_settings(session, app=app), secrets),
            "strategies": json.dumps(list(session.lanes)), "lane_count": len(session.lanes),
            "turn_count": turns, "lane_turn_count": 0, "prompt_tokens": 0, "total_tokens": 0,
            "survival": None, "writer": writer,
        }  # fmt: skip

    def save_whole(self, saved: SavedSession, *, new_id: bool, secrets: Iterable[str]) -> str:
        """Save a whole session in one transaction; returns its id. An id already in the
        store (or not usable as one) gets a fresh one, so nothing is overwritten."""
        with self.db.write() as conn:
            taken = (
                valid_id(saved.id)
                and conn.execute(sa.select(_S.id).where(_S.id == saved.id)).first()
            )
            if taken or new_id or not valid_id(saved.id):
                saved = saved.with_info(id=uuid.uuid4().hex[:12])
            self._insert_all(conn, saved, writer=None, secrets=secrets)
        return saved.id

    def _insert_all(
        self, conn: Connection, saved: SavedSession, *, writer: str | None, secrets: Iterable[str]
    ) -> None:
        at = now()
        secrets = set(secrets)
        kept = {n: [r for r in rs if not is_interrupted(r)] for n, rs in saved.records.items()}
        flat = [r for rs in kept.values() for r in rs]
        name = saved.name or default_name(saved.user_turns)
        conn.execute(
            sa.insert(sessions_t).values(
                id=saved.id, name=clean(name, secrets)[:NAME_LIMIT], source=saved.info.source,
                created_at=saved.info.created, updated_at=at,
                settings=dumps(saved.settings, secrets),
                strategies=json.dumps(list(saved.strategies)), lane_count=len(saved.strategies),
                turn_count=len(saved.user_turns), lane_turn_count=len(flat),
                prompt_tokens=sum(prompt_tokens(r) for r in flat),
                total_tokens=sum(total_tokens(r) for r in flat),
                survival=dumps(saved.survival, secrets) if saved.survival else None,
                writer=writer,
            )
        )  # fmt: skip
        if saved.user_turns:
            rows = [
                {"session_id": saved.id, "turn": i, "user_text": clean(u, secrets),
                 "created_at": at}
                for i, u in enumerate(saved.user_turns, start=1)
            ]  # fmt: skip
            conn.execute(sa.insert(turns_t), rows)
        rows = []
        messages: dict[str, str] = {}
        log_rows = []
        by_lane: dict[str, list[LaneTurn]] = {}
        for r in flat:  # by the lane each row is stored under
            by_lane.setdefault(r.lane, []).append(r)
        for lane_name, lane_records in by_lane.items():
            packer = LanePacker()
            for r in sorted(lane_records, key=lambda r: r.turn):
                data, body = record_data(r)
                packed = None if body is None else packer.pack(body, secrets)
                if packed is not None:
                    messages.update(packed.new)
                    packer.commit(packed)
                rows.append(_lane_row(saved.id, r, data, packed, secrets, at))
            log_rows += [{"session_id": saved.id, "lane": lane_name, "seq": i, "hash": h}
                         for i, h in enumerate(packer.log)]  # fmt: skip
        if messages:
            conn.execute(
                sa.insert(messages_t),
                [{"session_id": saved.id, "hash": h, "message": m} for h, m in messages.items()],
            )
        if log_rows:
            conn.execute(sa.insert(lane_log_t), log_rows)
        if rows:
            conn.execute(sa.insert(lane_turns_t), rows)
        states = [
            {"session_id": saved.id, "lane": name,
             "turn": max((r.turn for r in kept.get(name, [])), default=0),
             "state": dumps(compact_state(saved.memory[name], kept.get(name, [])), secrets)}
            for name in saved.strategies
        ]  # fmt: skip
        conn.execute(sa.insert(lane_states_t), states)


def _lane_row(
    sid: str,
    record: LaneTurn,
    data: dict[str, Any],
    packed: Packed | None,
    secrets: Iterable[str],
    at: datetime,
) -> dict[str, Any]:
    return {
        "session_id": sid, "turn": record.turn, "lane": record.lane, "status": record.status,
        "prompt_tokens": prompt_tokens(record), "total_tokens": total_tokens(record),
        "created_at": at, "record": dumps(pack_record(data), secrets),
        "body": None if packed is None else packed.text,
        "body_format": None if packed is None else packed.body_format,
    }  # fmt: skip


def _add_messages(conn: Connection, sid: str, lane: str, packed: Packed) -> None:
    """A packed body's new messages (kept if another lane stored them first) and its lane's
    log entries."""
    for digest, message in packed.new.items():
        upsert(conn, messages_t, {"session_id": sid, "hash": digest, "message": message}, False)
    if packed.appended:
        conn.execute(
            sa.insert(lane_log_t),
            [{"session_id": sid, "lane": lane, "seq": packed.start + i, "hash": h}
             for i, h in enumerate(packed.appended)],
        )  # fmt: skip
