"""The typed records of saved sweeps (storage/sweeps.py reads and writes them)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

# request states
PLANNED = "planned"
SUBMITTED = "submitted"
SUCCEEDED = "succeeded"
FINAL_FAILED = ("errored", "expired", "canceled", "missing")


@dataclass(frozen=True)
class SweepInfo:
    """One line of the sweeps list."""

    id: str
    name: str
    created_at: datetime
    updated_at: datetime
    status: str
    provider: str
    model: str
    requests: int
    succeeded: int
    failed: int
    open_batches: int
    has_result: bool
    kind: str = "survival"  # or "recall"


@dataclass(frozen=True)
class SweepRecord:
    """A sweep as saved: its plan and settings (no key), and the result once collected."""

    id: str
    name: str
    status: str
    provider: str
    model: str
    settings: Mapping[str, Any]
    config: Mapping[str, Any]
    plan: Mapping[str, Any]
    upkeep: Mapping[str, Any]
    result: Mapping[str, Any] | None
    created_at: datetime
    kind: str = "survival"  # or "recall": what `config` and `result` hold


@dataclass(frozen=True)
class SweepRequest:
    """One batch request of a sweep and what became of it."""

    custom_id: str
    seq: int
    body: Mapping[str, Any]
    prompt_tokens: int
    probes: int
    batch_id: str | None
    state: str
    reply: Mapping[str, Any] | None
    error: str | None
    attempts: int
    arm: int = 0  # which of the sweep's models (its settings) the request is for
    body_json: str | None = None  # the body as saved, when read with raw_bodies (body is {})

    @property
    def failed(self) -> bool:
        return self.state in FINAL_FAILED


@dataclass(frozen=True)
class SweepBatch:
    """One provider batch of a sweep."""

    batch_id: str
    state: str
    raw_status: str
    requests: int
    collected: bool
    submitted_at: datetime
    status: Mapping[str, Any] | None
    arm: int = 0  # the model whose client submits, polls and collects it


@dataclass(frozen=True)
class NewRequest:
    """One batch request of a planned sweep, as it is saved with the new sweep: its custom_id,
    body, local prompt count and how many probes use it (engines/sweep.py plans these)."""

    custom_id: str
    body: Mapping[str, Any]
    prompt_tokens: int
    probes: int
    body_json: str | None = None  # the body's JSON, made once for its hash and saved as is
    arm: int = 0  # the model of a multi-model sweep that sends it (its plan's index)


@dataclass(frozen=True)
class LineOutcome:
    """A collected line to save: its state, its reply (public dict) and error text."""

    custom_id: str
    state: str
    reply: Mapping[str, Any]
    error: str | None
