"""The session store's public names, from the modules that hold them:

* storage/schema.py       tables and migrations (`SCHEMA_VERSION`)
* storage/records.py      token figures, interrupted records, settings, the stored-JSON encoder
* storage/saved.py        the export format: `SessionInfo`, `SavedSession` (`FORMAT_VERSION`)
* storage/export_check.py reading an export safely
* storage/repository.py   `Store`: opening, reading, editing (rows read by column name)
* storage/writes.py       `Store`'s writes: live turns as they happen, whole sessions at once
* storage/tracker.py      `Tracker`: saves a live session as it runs (Store's public methods)
* storage/errors.py       `StoreError`, `SessionNotFound`
* providers/redaction.py  what a secret looks like (one home for the whole app)
"""

from __future__ import annotations

from lanes.lane import OK
from providers.redaction import REDACTED, env_key_values, redact, secrets_of
from storage.records import (
    INTERRUPTED,
    INTERRUPTED_TEXT,
    NAME_LIMIT,
    default_name,
    dumps,
    interrupted_record,
    is_interrupted,
    prompt_tokens,
    provider_from,
    public_settings,
    session_settings,
    storable,
    total_tokens,
)
from storage.repository import (
    DEFAULT_PATH,
    ENV_URL,
    SessionNotFound,
    Store,
    StoreError,
    default_url,
    normalise_url,
)
from storage.saved import FORMAT, FORMAT_VERSION, SavedSession, SessionFormatError, SessionInfo
from storage.schema import SCHEMA_VERSION
from storage.tracker import Tracker

scrub_text = redact  # the names the rest of the app has always used
env_secrets = env_key_values

__all__ = [
    "DEFAULT_PATH",
    "ENV_URL",
    "FORMAT",
    "FORMAT_VERSION",
    "INTERRUPTED",
    "INTERRUPTED_TEXT",
    "NAME_LIMIT",
    "OK",
    "REDACTED",
    "SCHEMA_VERSION",
    "SavedSession",
    "SessionFormatError",
    "SessionInfo",
    "SessionNotFound",
    "Store",
    "StoreError",
    "Tracker",
    "default_name",
    "default_url",
    "dumps",
    "env_secrets",
    "interrupted_record",
    "is_interrupted",
    "normalise_url",
    "prompt_tokens",
    "provider_from",
    "public_settings",
    "scrub_text",
    "secrets_of",
    "session_settings",
    "storable",
    "total_tokens",
]
