"""Batch sweeps in the store: the plan, every request, every batch id, every result.

Each fact is written the moment it exists, in its own transaction: the plan and its
requests before anything is submitted, a batch id right after the provider returns it, a
batch's results as soon as they are fetched. A process killed at any point reopens the
sweep where it stopped: the store says which batches to poll and which requests to resubmit.

The tables (`ml_sweeps`, `ml_sweep_requests`, `ml_sweep_batches`) are in storage/tables.py and
are created by the migration `m003_sweeps` (storage/migrations.py), run by whichever of
Store or SweepStore opens the database first. No key is ever stored: settings are saved
without it (`ProviderSettings.public_dict`), bodies and replies never hold one.

The records are in storage/sweep_records.py.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from providers.redaction import mask
from storage.database import Database
from storage.sweep_records import (
    FINAL_FAILED,
    PLANNED,
    SUBMITTED,
    SUCCEEDED,
    LineOutcome,
    NewRequest,
    SweepBatch,
    SweepInfo,
    SweepRecord,
    SweepRequest,
)
from storage.tables import sweep_batches_t, sweep_requests_t, sweeps_t


class SweepNotFound(KeyError):
    """No sweep with this id in the store."""


def _now() -> datetime:
    return datetime.now(UTC)


def _dumps(value: Any) -> str:
    """The one way a sweep record becomes column text: compact JSON, every known secret
    masked (a key the endpoint echoed in a reply never reaches the database)."""
    return mask(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


class SweepStore:
    """The sweeps tables in the app's database ($MEMORY_LAB_DB_URL or the SQLite file)."""

    def __init__(self, url: str | None = None) -> None:
        self.db = Database(url)  # opening it runs the migrations, the sweeps' tables among them
        self.url = self.db.url
        self.engine = self.db.engine
        self._write = self.db.write

    def close(self) -> None:
        self.db.close()

    # -- writes -----------------------------------------------------------------------

    def create(
        self,
        *,
        name: str,
        settings: Mapping[str, Any],
        config: Mapping[str, Any],
        plan: Mapping[str, Any],
        upkeep: Mapping[str, Any],
        requests: Sequence[NewRequest],
        kind: str = "survival",
        models: str | None = None,
    ) -> str:
        """Save a planned sweep and all its requests in one transaction; its id. `models`:
        what the list shows as its model (default: the settings' model)."""
        if "api_key" in settings:
            raise ValueError("settings must be saved without their key (use public_dict)")
        sweep_id = uuid.uuid4().hex
        now = _now()
        with self._write() as conn:
            conn.execute(
                sa.insert(sweeps_t).values(
                    id=sweep_id,
                    name=mask(name),
                    created_at=now,
                    updated_at=now,
                    status=PLANNED,
                    provider=str(settings.get("kind", "")),
                    model=models or str(settings.get("model", "")),
                    settings=_dumps(dict(settings)),
                    config=_dumps(dict(config)),
                    plan=_dumps(dict(plan)),
                    upkeep=_dumps(dict(upkeep)),
                    result=None,
                    kind=kind,
                )  # fmt: skip
            )
            if requests:
                conn.execute(
                    sa.insert(sweep_requests_t),
                    [
                        {
                            "sweep_id": sweep_id,
                            "custom_id": r.custom_id,
                            "seq": i,
                            "body": mask(r.body_json) if r.body_json else _dumps(dict(r.body)),
                            "prompt_tokens": r.prompt_tokens,
                            "probes": r.probes,
                            "batch_id": None,
                            "state": PLANNED,
                            "reply": None,
                            "error": None,
                            "attempts": 0,
                            "arm": r.arm,
                        }  # fmt: skip
                        for i, r in enumerate(requests)
                    ],
                )
        return sweep_id

    def add_batch(
        self,
        sweep_id: str,
        batch_id: str,
        custom_ids: Sequence[str],
        status: Mapping[str, Any],
        arm: int = 0,
    ) -> None:
        """Record a submitted batch and mark its requests submitted (one transaction)."""
        now = _now()
        r = sweep_requests_t.c
        with self._write() as conn:
            conn.execute(
                sa.insert(sweep_batches_t).values(
                    sweep_id=sweep_id,
                    batch_id=batch_id,
                    submitted_at=now,
                    updated_at=now,
                    state=str(status.get("state", "running")),
                    raw_status=str(status.get("raw_status", "")),
                    requests=len(custom_ids),
                    status=_dumps(dict(status)),
                    collected=False,
                    arm=arm,
                )  # fmt: skip
            )
            conn.execute(
                sa.update(sweep_requests_t)
                .where(r.sweep_id == sweep_id, r.custom_id == sa.bindparam("b_cid"))
                .values(
                    batch_id=batch_id,
                    state=SUBMITTED,
                    reply=None,
                    error=None,
                    attempts=r.attempts + 1,
                ),  # fmt: skip
                [{"b_cid": c} for c in custom_ids],
            )
            self._touch(conn, sweep_id, "submitted")

    def update_batch(self, sweep_id: str, batch_id: str, status: Mapping[str, Any]) -> None:
        """The last polled status of a batch."""
        b = sweep_batches_t.c
        with self._write() as conn:
            conn.execute(
                sa.update(sweep_batches_t)
                .where(b.sweep_id == sweep_id, b.batch_id == batch_id)
                .values(
                    state=str(status.get("state", "")),
                    raw_status=str(status.get("raw_status", "")),
                    status=_dumps(dict(status)),
                    updated_at=_now(),
                )
            )

    def save_outcomes(self, sweep_id: str, batch_id: str, outcomes: Iterable[LineOutcome]) -> None:
        """A collected batch's lines, and the batch marked collected (one transaction)."""
        r, b = sweep_requests_t.c, sweep_batches_t.c
        rows = [
            {
                "b_cid": o.custom_id,
                "b_state": o.state,
                "b_reply": _dumps(dict(o.reply)),
                "b_error": mask(o.error) if o.error else o.error,
            }  # fmt: skip
            for o in outcomes
        ]
        with self._write() as conn:
            if rows:
                conn.execute(
                    sa.update(sweep_requests_t)
                    .where(
                        r.sweep_id == sweep_id,
                        r.custom_id == sa.bindparam("b_cid"),
                        r.batch_id == batch_id,  # a line resubmitted since keeps its new batch
                    )
                    .values(
                        state=sa.bindparam("b_state"),
                        reply=sa.bindparam("b_reply"),
                        error=sa.bindparam("b_error"),
                    ),
                    rows,
                )
            conn.execute(
                sa.update(sweep_batches_t)
                .where(b.sweep_id == sweep_id, b.batch_id == batch_id)
                .values(collected=True, updated_at=_now())
            )
            self._touch(conn, sweep_id, None)

    def save_result(self, sweep_id: str, result: Mapping[str, Any], status: str) -> None:
        """The sweep's SurvivalResult (as a dict) and its new status."""
        with self._write() as conn:
            conn.execute(
                sa.update(sweeps_t)
                .where(sweeps_t.c.id == sweep_id)
                .values(result=_dumps(dict(result)), status=status, updated_at=_now())
            )

    def set_status(self, sweep_id: str, status: str) -> None:
        with self._write() as conn:
            self._touch(conn, sweep_id, status)

    def _touch(self, conn: Connection, sweep_id: str, status: str | None) -> None:
        values: dict[str, Any] = {"updated_at": _now()}
        if status:
            values["status"] = status
        conn.execute(sa.update(sweeps_t).where(sweeps_t.c.id == sweep_id).values(**values))

    def delete(self, sweep_id: str) -> None:
        with self._write() as conn:
            for table in (sweep_requests_t, sweep_batches_t):
                conn.execute(sa.delete(table).where(table.c.sweep_id == sweep_id))
            conn.execute(sa.delete(sweeps_t).where(sweeps_t.c.id == sweep_id))

    # -- reads ------------------------------------------------------------------------

    def sweep(self, sweep_id: str) -> SweepRecord:
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(sweeps_t).where(sweeps_t.c.id == sweep_id)).first()
        if row is None:
            raise SweepNotFound(f"no sweep {sweep_id!r} in {self.display_url}")
        m = row._mapping
        return SweepRecord(
            id=m["id"], name=m["name"], status=m["status"], provider=m["provider"],
            model=m["model"], settings=json.loads(m["settings"]), config=json.loads(m["config"]),
            plan=json.loads(m["plan"]), upkeep=json.loads(m["upkeep"]),
            result=json.loads(m["result"]) if m["result"] else None, created_at=m["created_at"],
            kind=m["kind"],
        )  # fmt: skip

    def requests(
        self, sweep_id: str, *, states: Sequence[str] | None = None, raw_bodies: bool = False
    ) -> list[SweepRequest]:
        """A sweep's requests in plan order; `raw_bodies`: each body as its saved JSON text
        (`body_json`, `body` left empty), for submitting without parsing it."""
        r = sweep_requests_t.c
        query = sa.select(sweep_requests_t).where(r.sweep_id == sweep_id).order_by(r.seq)
        if states is not None:
            query = query.where(r.state.in_(list(states)))
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        return [
            SweepRequest(
                custom_id=m["custom_id"],
                seq=m["seq"],
                body={} if raw_bodies else json.loads(m["body"]),
                prompt_tokens=m["prompt_tokens"],
                probes=m["probes"],
                batch_id=m["batch_id"],
                state=m["state"],
                reply=json.loads(m["reply"]) if m["reply"] else None,
                error=m["error"],
                attempts=m["attempts"] or 0,
                arm=m["arm"] or 0,
                body_json=m["body"] if raw_bodies else None,
            )  # fmt: skip
            for m in (row._mapping for row in rows)
        ]

    def request_ids(
        self, sweep_id: str, *, batch_id: str, states: Sequence[str] | None = None
    ) -> list[str]:
        """The custom_ids of a batch's requests (no bodies read: fast on a big sweep)."""
        r = sweep_requests_t.c
        query = sa.select(r.custom_id).where(r.sweep_id == sweep_id, r.batch_id == batch_id)
        if states is not None:
            query = query.where(r.state.in_(list(states)))
        with self.engine.connect() as conn:
            return list(conn.execute(query.order_by(r.seq)).scalars())

    def batches(self, sweep_id: str) -> list[SweepBatch]:
        b = sweep_batches_t.c
        query = sa.select(sweep_batches_t).where(b.sweep_id == sweep_id).order_by(b.submitted_at)
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        return [
            SweepBatch(
                batch_id=m["batch_id"],
                state=m["state"],
                raw_status=m["raw_status"],
                requests=m["requests"],
                collected=bool(m["collected"]),
                submitted_at=m["submitted_at"],
                status=json.loads(m["status"]) if m["status"] else None,
                arm=m["arm"] or 0,
            )  # fmt: skip
            for m in (row._mapping for row in rows)
        ]

    def list_sweeps(self) -> list[SweepInfo]:
        s, r, b = sweeps_t.c, sweep_requests_t.c, sweep_batches_t.c
        ok = sa.func.sum(sa.case((r.state == SUCCEEDED, 1), else_=0))
        bad = sa.func.sum(sa.case((r.state.in_(FINAL_FAILED), 1), else_=0))
        counts = (
            sa.select(r.sweep_id, sa.func.count().label("n"), ok.label("ok"), bad.label("bad"))
            .group_by(r.sweep_id)
            .subquery()
        )
        open_b = (
            sa.select(b.sweep_id, sa.func.count().label("open"))
            .where(b.collected.is_(False))
            .group_by(b.sweep_id)
            .subquery()
        )
        query = (
            sa.select(
                s.id,
                s.name,
                s.created_at,
                s.updated_at,
                s.status,
                s.provider,
                s.model,
                counts.c.n,
                counts.c.ok,
                counts.c.bad,
                open_b.c.open,
                s.result.is_not(None),
                s.kind,
            )  # fmt: skip
            .outerjoin(counts, counts.c.sweep_id == s.id)
            .outerjoin(open_b, open_b.c.sweep_id == s.id)
            .order_by(s.created_at.desc())
        )
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        return [
            SweepInfo(
                row[0],
                row[1],
                row[2],
                row[3],
                row[4],
                row[5],
                row[6],
                int(row[7] or 0),
                int(row[8] or 0),
                int(row[9] or 0),
                int(row[10] or 0),
                bool(row[11]),
                row[12],
            )  # fmt: skip
            for row in rows
        ]

    @property
    def display_url(self) -> str:
        return self.db.display_url
