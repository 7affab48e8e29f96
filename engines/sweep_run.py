"""Running a sweep: submit, poll, collect, resubmit, with everything saved as it happens.

    plan = prepare_sweep(config, settings)              # engines/sweep.py
    sweep_id = start(store, plan)                       # saved, then submitted
    progress = refresh(store, sweep_id, settings)       # poll; collect what ended
    progress.result                                     # a SurvivalResult once all are back

Any process can pick a sweep up by its id: `open_sweep` rebuilds the settings (the key
from the environment or as given) and `refresh` goes on from what the store says.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace

from engines.survival import ProbeRow, SurvivalResult
from engines.sweep import (
    SweepError,
    SweepPlan,
    config_from_dict,
    replay,
    settings_from_dict,
)
from providers import ProviderSettings
from providers.batch import (
    MAX_LINES,
    BatchLine,
    BatchStatus,
    collect,
    poll,
    reply_from_dict,
    submit,
)
from storage.sweeps import (
    FINAL_FAILED,
    PLANNED,
    SUBMITTED,
    SUCCEEDED,
    LineOutcome,
    NewRequest,
    SweepRecord,
    SweepStore,
)

COLLECTED = "collected"
COLLECTED_WITH_FAILURES = "collected, with failures"


@dataclass(frozen=True)
class SweepProgress:
    """Where a sweep is: its requests by state, its open batches, and the result when done."""

    sweep_id: str
    requests: int
    planned: int
    submitted: int
    succeeded: int
    failed: int
    open_batches: int
    result: SurvivalResult | None

    @property
    def done(self) -> bool:
        """Every request has come back (succeeded or failed)."""
        return self.planned == 0 and self.submitted == 0

    def line(self) -> str:
        return (
            f"{self.succeeded:,}/{self.requests:,} requests back, {self.failed:,} failed, "
            f"{self.submitted:,} in {self.open_batches} open batch(es), {self.planned:,} not sent"
        )


def _family(settings: ProviderSettings) -> str:
    return "anthropic" if settings.kind == "anthropic" else "openai"


def save_plan(store: SweepStore, plan: SweepPlan, *, name: str | None = None) -> str:
    """Save a plan and its requests (nothing submitted yet); the sweep id."""
    return store.create(
        name=name
        or f"{len(plan.config.strategies)} strategies × {len(plan.config.facts)} facts"
        f" × {len(plan.config.probe_turns)} turns · {plan.settings.model}",
        settings=plan.settings.public_dict(),
        config=plan.config.as_dict(),
        plan={
            "estimate": plan.estimate.as_dict(),
            "upkeep": plan.upkeep,
            "notes": list(plan.notes),
        },  # fmt: skip
        upkeep=dict(plan.upkeep_records),
        requests=[
            NewRequest(r.custom_id, r.body, r.prompt_tokens, r.probes, r.body_json)
            for r in plan.requests
        ],
    )


def start(store: SweepStore, plan: SweepPlan, *, name: str | None = None,
          max_lines: int | None = None) -> str:  # fmt: skip
    """Save the plan, then submit every request; the sweep id (saved before any submit)."""
    sweep_id = save_plan(store, plan, name=name)
    submit_planned(store, sweep_id, plan.settings, max_lines=max_lines)
    return sweep_id


def _submit(
    store: SweepStore,
    sweep_id: str,
    settings: ProviderSettings,
    lines: Sequence[BatchLine],
    max_lines: int | None,
) -> list[BatchStatus]:
    size = max_lines or MAX_LINES[_family(settings)]
    out = []
    for i in range(0, len(lines), size):
        chunk = lines[i : i + size]
        status = submit(chunk, settings, metadata={"memory_lab_sweep": sweep_id})
        store.add_batch(sweep_id, status.batch_id, [ln.custom_id for ln in chunk], asdict(status))
        out.append(status)
    return out


def submit_planned(
    store: SweepStore, sweep_id: str, settings: ProviderSettings, *, max_lines: int | None = None
) -> list[BatchStatus]:
    """Submit the requests never sent (a fresh sweep, or one killed before submitting)."""
    pending = store.requests(sweep_id, states=[PLANNED])
    lines = [BatchLine(r.custom_id, r.body) for r in pending]
    return _submit(store, sweep_id, settings, lines, max_lines)


def failed_requests(store: SweepStore, sweep_id: str):  # noqa: ANN201 - list[SweepRequest]
    """The requests that came back failed (errored, expired, cancelled, missing)."""
    return store.requests(sweep_id, states=FINAL_FAILED)


def resubmit_failed(
    store: SweepStore,
    sweep_id: str,
    settings: ProviderSettings,
    *,
    custom_ids: Sequence[str] | None = None,
    max_lines: int | None = None,
) -> list[BatchStatus]:
    """Submit the failed requests again (all, or those named), and only them."""
    failed = failed_requests(store, sweep_id)
    if custom_ids is not None:
        wanted = set(custom_ids)
        unknown = wanted - {r.custom_id for r in failed}
        if unknown:
            raise SweepError(f"not failed requests of this sweep: {', '.join(sorted(unknown))}")
        failed = [r for r in failed if r.custom_id in wanted]
    if not failed:
        return []
    lines = [BatchLine(r.custom_id, r.body) for r in failed]
    return _submit(store, sweep_id, settings, lines, max_lines)


def open_sweep(store: SweepStore, sweep_id: str, api_key: str | None = None) -> tuple[SweepRecord, ProviderSettings]:  # fmt: skip
    """A saved sweep and its settings (the key from `api_key` or the environment)."""
    record = store.sweep(sweep_id)
    return record, settings_from_dict(record.settings, api_key)


def progress(store: SweepStore, sweep_id: str) -> SweepProgress:
    """Counts from the store alone (no provider call)."""
    requests = store.requests(sweep_id)
    record = store.sweep(sweep_id)
    states = [r.state for r in requests]
    return SweepProgress(
        sweep_id=sweep_id,
        requests=len(requests),
        planned=states.count(PLANNED),
        submitted=states.count(SUBMITTED),
        succeeded=states.count(SUCCEEDED),
        failed=sum(states.count(s) for s in FINAL_FAILED),
        open_batches=sum(not b.collected for b in store.batches(sweep_id)),
        result=SurvivalResult.from_dict(record.result) if record.result else None,
    )


def refresh(store: SweepStore, sweep_id: str, settings: ProviderSettings) -> SweepProgress:
    """Poll each open batch; collect the ones that ended; when no request is outstanding,
    build (or rebuild, after a resubmission) the result and save it."""
    collected_any = False
    for batch in store.batches(sweep_id):
        if batch.collected:
            continue
        status = poll(batch.batch_id, settings)
        store.update_batch(sweep_id, batch.batch_id, asdict(status))
        if not status.ended:
            continue
        ids = store.request_ids(sweep_id, batch_id=batch.batch_id, states=[SUBMITTED])
        results = collect(status, settings, dict.fromkeys(ids, {})) if ids else []
        outcomes = [
            LineOutcome(
                r.custom_id,
                SUCCEEDED if r.ok else ("errored" if r.state == SUCCEEDED else r.state),
                {**r.reply.public_dict(), "body": None},  # the request row holds the body
                r.reply.error_message,
            )
            for r in results
        ]
        store.save_outcomes(sweep_id, batch.batch_id, outcomes)
        collected_any = True
    now = progress(store, sweep_id)
    if now.done and (collected_any or now.result is None):
        result = build_result(store, sweep_id, settings)
        store.save_result(sweep_id, result.as_dict(),
                          COLLECTED if now.failed == 0 else COLLECTED_WITH_FAILURES)  # fmt: skip
        now = progress(store, sweep_id)
    return now


def resume(store: SweepStore, sweep_id: str, settings: ProviderSettings) -> SweepProgress:
    """Submit what was planned but never sent (a process stopped between saving the plan and
    submitting it), then refresh."""
    if store.requests(sweep_id, states=[PLANNED]):
        submit_planned(store, sweep_id, settings)
    return refresh(store, sweep_id, settings)


def build_result(store: SweepStore, sweep_id: str, settings: ProviderSettings) -> SurvivalResult:
    """The sweep's SurvivalResult from what the store holds now (failed probes as error rows)."""
    record = store.sweep(sweep_id)
    replies = {
        r.custom_id: reply_from_dict({**r.reply, "body": r.body})
        for r in store.requests(sweep_id)
        if r.reply
    }
    config = config_from_dict(record.config)
    plan = record.plan
    note = (
        f"probes answered through the {settings.kind} batch API at batch prices "
        f"(sweep {sweep_id[:8]}); {plan.get('estimate', {}).get('upkeep_sentence', '')}"
    )
    return replay(config, settings, upkeep=str(plan.get("upkeep", "stand-in")),
                  upkeep_records=record.upkeep, replies=replies, note=note)  # fmt: skip


def wait(
    store: SweepStore,
    sweep_id: str,
    settings: ProviderSettings,
    *,
    interval: float = 30.0,
    timeout: float | None = None,
    on_progress: Callable[[SweepProgress], None] | None = None,
) -> SweepProgress:
    """Refresh every `interval` seconds until every request is back (or `timeout`)."""
    started = time.monotonic()
    now = resume(store, sweep_id, settings)
    while True:
        if on_progress is not None:
            on_progress(now)
        if now.done:
            return now
        if timeout is not None and time.monotonic() - started >= timeout:
            return now
        time.sleep(interval)
        now = refresh(store, sweep_id, settings)


def compare(results: Sequence[tuple[str, SurvivalResult]]) -> SurvivalResult:
    """Several sweeps' results as one, each strategy row named with its model
    ("window (k=3) · gpt-4o-mini"), so one heat map compares strategies across models."""
    if not results:
        raise SweepError("choose at least one collected sweep to compare")
    rows: list[ProbeRow] = []
    labels: list[dict[str, object]] = []
    turns: set[int] = set()
    notes: list[str] = []
    for model, result in results:
        for label in result.strategies():
            labels.append({"name": label, "params": {}, "label": f"{label} · {model}"})
        rows.extend(replace(r, strategy=f"{r.strategy} · {model}") for r in result.rows)
        turns.update(result.probe_turns())
        notes.extend(f"{model}: {n}" for n in result.notes)
    first = results[0][1]
    config = {**first.config, "strategies": labels, "probe_turns": sorted(turns)}
    return SurvivalResult(
        config=config,
        rows=rows,
        mode=first.mode,
        maintenance=first.maintenance,
        provider_calls=sum(r.provider_calls for _, r in results),
        maintenance_calls=sum(r.maintenance_calls for _, r in results),
        notes=notes,
        model=" vs ".join(m for m, _ in results),
    )
