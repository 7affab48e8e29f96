"""storage/'s one public face: everything outside storage/ imports from here.

The package is a one-way chain (each module imports only those above it in this list):

* storage/errors.py        `StoreError`, `SessionNotFound`, `SessionFormatError`
* storage/tables.py        every table of the database
* storage/migrations.py    the migrations, run when a database opens (`SCHEMA_VERSION`)
* storage/database.py      where the database is, its engine and transactions
* storage/carried.py, records.py, saved.py, codec.py
                           the pure record codec: the saved-session types, the helpers that
                           make and read their records, and the one decoder of exports
* storage/writes.py, compositions.py, tracker.py, sweep_records.py
                           the repository's collaborators
* storage/repository.py    `Store` (sessions); storage/sweeps.py `SweepStore` (batch sweeps)
"""

from __future__ import annotations

from storage.codec import decode_export, loads, read_export, register_part
from storage.database import DEFAULT_PATH, ENV_URL, default_url, normalise_url
from storage.errors import SessionFormatError, SessionNotFound, StoreError
from storage.migrations import MIGRATIONS, SCHEMA_VERSION
from storage.records import INTERRUPTED, is_interrupted
from storage.repository import Store
from storage.saved import FORMAT, FORMAT_VERSION, SavedSession, SessionInfo
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
from storage.sweeps import SweepNotFound, SweepStore
from storage.tracker import Tracker

__all__ = [
    "DEFAULT_PATH",
    "ENV_URL",
    "FINAL_FAILED",
    "FORMAT",
    "FORMAT_VERSION",
    "INTERRUPTED",
    "MIGRATIONS",
    "PLANNED",
    "SCHEMA_VERSION",
    "SUBMITTED",
    "SUCCEEDED",
    "LineOutcome",
    "NewRequest",
    "SavedSession",
    "SessionFormatError",
    "SessionInfo",
    "SessionNotFound",
    "Store",
    "StoreError",
    "SweepBatch",
    "SweepInfo",
    "SweepNotFound",
    "SweepRecord",
    "SweepRequest",
    "SweepStore",
    "Tracker",
    "decode_export",
    "default_url",
    "is_interrupted",
    "loads",
    "normalise_url",
    "read_export",
    "register_part",
]
