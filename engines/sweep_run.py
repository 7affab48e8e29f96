"""Running a sweep: submit, poll, collect, resubmit, with everything saved as it happens.

    plan = prepare_sweep(config, settings)              # engines/sweep.py
    sweep_id = start(store, plan)                       # saved, then submitted
    progress = refresh(store, sweep_id, settings)       # poll; collect what ended
    progress.result                                     # a SurvivalResult once all are back

Any process can pick a sweep up by its id: `open_arms` rebuilds the settings (the key
from the environment or as given) and `refresh` goes on from what the store says.

A sweep may name several models (its arms): `start(store, [plan_a, plan_b])` saves one
sweep whose requests each carry their arm. Requests go out in one batch per provider
endpoint (Anthropic batches may mix models; OpenAI's hold one model each, so one per model
there), and the result labels every row by its model. A recall sweep (kind "recall",
engines/sweep_recall.py) runs through the same steps and ends in a RecallResult.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from engines.recall import RecallResult
from engines.survival import ProbeRow, SurvivalResult
from engines.sweep import (
    SweepError,
    SweepEstimate,
    SweepPlan,
    check_models,
    config_from_dict,
    replay,
)
from engines.sweep_recall import KIND as RECALL
from engines.sweep_recall import RecallGrid, replay_recall
from lanes.endpoint_policy import sweep_settings
from providers import ProviderSettings
from providers.batch import (
    BatchLine,
    BatchStatus,
    collect,
    poll,
    reply_from_dict,
    submit,
)
from providers.batch import max_lines as batch_max_lines
from providers.families import family
from storage.store import (
    FINAL_FAILED,
    PLANNED,
    SUBMITTED,
    SUCCEEDED,
    LineOutcome,
    SweepRecord,
    SweepRequest,
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
    recall: RecallResult | None = None  # a recall sweep's result, once collected

    @property
    def done(self) -> bool:
        """Every request has come back (succeeded or failed)."""
        return self.planned == 0 and self.submitted == 0

    @property
    def collected(self) -> bool:
        return self.result is not None or self.recall is not None

    def line(self) -> str:
        return (
            f"{self.succeeded:,}/{self.requests:,} requests back, {self.failed:,} failed, "
            f"{self.submitted:,} in {self.open_batches} open batch(es), {self.planned:,} not sent"
        )


Arms = ProviderSettings | Sequence[ProviderSettings]


def _arms(settings: Arms) -> list[ProviderSettings]:
    return [settings] if isinstance(settings, ProviderSettings) else list(settings)


def _endpoint(settings: ProviderSettings) -> tuple[Any, ...]:
    """Arms sharing this share a batch: one per Anthropic endpoint, one per OpenAI model."""
    chosen = family(settings.kind)
    model = settings.model if chosen.batch_per_model else ""
    return (chosen.wire, settings.kind, settings.base_url, settings.key_env, model)


def _name(plan: SweepPlan, models: str) -> str:
    if plan.kind == RECALL:
        grid = plan.config
        return (f"recall: {len(grid.settings)} settings × "
                f"{len(grid.conversation.questions)} questions · {models}")  # fmt: skip
    config = plan.config
    return (f"{len(config.strategies)} strategies × {len(config.facts)} facts"
            f" × {len(config.probe_turns)} turns · {models}")  # fmt: skip


def save_plan(store: SweepStore, plan: SweepPlan | Sequence[SweepPlan], *,
              name: str | None = None) -> str:  # fmt: skip
    """Save a plan (or one per model, the same grid) and its requests, nothing submitted
    yet; the sweep id."""
    plans = [plan] if isinstance(plan, SweepPlan) else list(plan)
    check_models([p.settings for p in plans])
    first = plans[0]
    if any(p.kind != first.kind or p.config != first.config for p in plans):
        raise SweepError("the models of one sweep share one grid")
    upkeep: dict[str, Any] = {}
    for p in plans:
        upkeep.update(p.upkeep_records)
    return store.create(
        name=name or _name(first, ", ".join(p.settings.model for p in plans)),
        settings=first.settings.public_dict(),
        config=first.config.as_dict(),
        plan={
            "estimate": _whole(plans).as_dict(),
            "estimates": [p.estimate.as_dict() for p in plans],
            "arms": [p.settings.public_dict() for p in plans],
            "upkeep": first.upkeep,
            "notes": list(first.notes),
        },  # fmt: skip
        upkeep=upkeep,
        requests=[replace(r, arm=i) for i, p in enumerate(plans) for r in p.requests],
        kind=first.kind,
        models=", ".join(p.settings.model for p in plans),
    )


def _whole(plans: Sequence[SweepPlan]) -> SweepEstimate:
    """The sweep's estimate over every model (one model: its own): requests, tokens, calls
    and costs added up, batches counted as `_submit` cuts them."""
    first = plans[0].estimate
    if len(plans) == 1:
        return first
    ests = [p.estimate for p in plans]

    def total(name: str) -> Any:
        values = [getattr(e, name) for e in ests]
        return None if None in values else sum(values)

    sums = {f: total(f) for f in ("cells", "requests", "input_tokens", "output_tokens",
            "max_output_tokens", "upkeep_calls", "upkeep_input_tokens", "upkeep_output_tokens",
            "batch_cost", "live_cost", "upkeep_cost")}  # fmt: skip
    batches = len({_endpoint(p.settings) for p in plans})
    return replace(first, model=", ".join(e.model for e in ests), batches=batches, **sums)


def start(store: SweepStore, plan: SweepPlan | Sequence[SweepPlan], *,
          name: str | None = None, max_lines: int | None = None) -> str:  # fmt: skip
    """Save the plan(s), then submit every request; the sweep id (saved before any submit)."""
    sweep_id = save_plan(store, plan, name=name)
    plans = [plan] if isinstance(plan, SweepPlan) else list(plan)
    submit_planned(store, sweep_id, [p.settings for p in plans], max_lines=max_lines)
    return sweep_id


def _submit(
    store: SweepStore,
    sweep_id: str,
    settings: Arms,
    requests: Sequence[SweepRequest],
    max_lines: int | None,
) -> list[BatchStatus]:
    """Submit `requests` in one batch per endpoint (chunked at the provider's line limit)."""
    arms = _arms(settings)
    groups: dict[tuple[Any, ...], list[SweepRequest]] = {}
    for r in requests:
        groups.setdefault(_endpoint(arms[r.arm]), []).append(r)
    out = []
    for group in groups.values():
        arm = min(r.arm for r in group)  # its client submits, polls and collects the batch
        lines = [BatchLine(r.custom_id, r.body, r.body_json) for r in group]
        size = max_lines or batch_max_lines(arms[arm])
        for i in range(0, len(lines), size):
            chunk = lines[i : i + size]
            status = submit(chunk, arms[arm], metadata={"memory_lab_sweep": sweep_id})
            store.add_batch(sweep_id, status.batch_id, [ln.custom_id for ln in chunk],
                            asdict(status), arm=arm)  # fmt: skip
            out.append(status)
    return out


def submit_planned(
    store: SweepStore, sweep_id: str, settings: Arms, *, max_lines: int | None = None
) -> list[BatchStatus]:
    """Submit the requests never sent (a fresh sweep, or one killed before submitting)."""
    pending = store.requests(sweep_id, states=[PLANNED], raw_bodies=True)
    return _submit(store, sweep_id, settings, pending, max_lines)


def failed_requests(store: SweepStore, sweep_id: str):  # noqa: ANN201 - list[SweepRequest]
    """The requests that came back failed (errored, expired, cancelled, missing)."""
    return store.requests(sweep_id, states=FINAL_FAILED)


def resubmit_failed(
    store: SweepStore,
    sweep_id: str,
    settings: Arms,
    *,
    custom_ids: Sequence[str] | None = None,
    max_lines: int | None = None,
) -> list[BatchStatus]:
    """Submit the failed requests again (all, or those named), and only them."""
    failed = store.requests(sweep_id, states=FINAL_FAILED, raw_bodies=True)
    if custom_ids is not None:
        wanted = set(custom_ids)
        unknown = wanted - {r.custom_id for r in failed}
        if unknown:
            raise SweepError(f"not failed requests of this sweep: {', '.join(sorted(unknown))}")
        failed = [r for r in failed if r.custom_id in wanted]
    if not failed:
        return []
    return _submit(store, sweep_id, settings, failed, max_lines)


def open_sweep(
    store: SweepStore,
    sweep_id: str,
    api_key: str | None = None,
    *,
    typed_urls: Sequence[str | None] = (),
    key_env: str | None = None,
) -> tuple[SweepRecord, ProviderSettings]:
    """A saved sweep and its (first model's) settings, under the endpoint policy
    (`endpoint_policy.sweep_settings`): a custom endpoint must be among `typed_urls`."""
    record, arms = open_arms(store, sweep_id, api_key, typed_urls=typed_urls, key_env=key_env)
    return record, arms[0]


def open_arms(
    store: SweepStore,
    sweep_id: str,
    api_key: str | None = None,
    *,
    typed_urls: Sequence[str | None] = (),
    key_env: str | None = None,
) -> tuple[SweepRecord, list[ProviderSettings]]:
    """A saved sweep and every model's settings, under the endpoint policy: the saved data
    never chooses the endpoint or the key (EndpointNotTyped names a custom endpoint to type
    again). `api_key` and `key_env` go to the models of the first model's provider."""
    record = store.sweep(sweep_id)
    saved = record.plan.get("arms") or [record.settings]
    kind = saved[0]["kind"]
    return record, [
        sweep_settings(
            a,
            api_key=api_key if a["kind"] == kind else None,
            key_env=key_env if a["kind"] == kind else None,
            typed_urls=typed_urls,
        )
        for a in saved
    ]


def progress(store: SweepStore, sweep_id: str) -> SweepProgress:
    """Counts from the store alone (no provider call)."""
    requests = store.requests(sweep_id)
    record = store.sweep(sweep_id)
    states = [r.state for r in requests]
    data = record.result
    recall = data is not None and record.kind == RECALL
    return SweepProgress(
        sweep_id=sweep_id,
        requests=len(requests),
        planned=states.count(PLANNED),
        submitted=states.count(SUBMITTED),
        succeeded=states.count(SUCCEEDED),
        failed=sum(states.count(s) for s in FINAL_FAILED),
        open_batches=sum(not b.collected for b in store.batches(sweep_id)),
        result=SurvivalResult.from_dict(data) if data is not None and not recall else None,
        recall=RecallResult.from_dict(data) if data is not None and recall else None,
    )


def refresh(store: SweepStore, sweep_id: str, settings: Arms) -> SweepProgress:
    """Poll each open batch; collect the ones that ended; when no request is outstanding,
    build (or rebuild, after a resubmission) the result and save it."""
    collected_any = collect_ended(store, sweep_id, settings)
    now = progress(store, sweep_id)
    if now.done and (collected_any or not now.collected):
        result = build_result(store, sweep_id, settings)
        store.save_result(sweep_id, result.as_dict(),
                          COLLECTED if now.failed == 0 else COLLECTED_WITH_FAILURES)  # fmt: skip
        now = progress(store, sweep_id)
    return now


def collect_ended(store: SweepStore, sweep_id: str, settings: Arms) -> bool:
    """Poll each open batch and save the lines of those that ended; True if any did."""
    arms = _arms(settings)
    collected_any = False
    for batch in store.batches(sweep_id):
        if batch.collected:
            continue
        status = poll(batch.batch_id, arms[batch.arm])
        store.update_batch(sweep_id, batch.batch_id, asdict(status))
        if not status.ended:
            continue
        ids = store.request_ids(sweep_id, batch_id=batch.batch_id, states=[SUBMITTED])
        results = collect(status, arms[batch.arm], dict.fromkeys(ids, {})) if ids else []
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
    return collected_any


def resume(store: SweepStore, sweep_id: str, settings: Arms) -> SweepProgress:
    """Submit what was planned but never sent (a process stopped between saving the plan and
    submitting it), then refresh."""
    if store.requests(sweep_id, states=[PLANNED]):
        submit_planned(store, sweep_id, settings)
    return refresh(store, sweep_id, settings)


def build_result(store: SweepStore, sweep_id: str, settings: Arms) -> SurvivalResult | RecallResult:  # fmt: skip
    """The sweep's result from what the store holds now (failed requests as error rows):
    a SurvivalResult, or a RecallResult for a recall sweep; rows named by model when the
    sweep has several."""
    arms = _arms(settings)
    record = store.sweep(sweep_id)
    replies = {
        r.custom_id: reply_from_dict({**r.reply, "body": r.body})
        for r in store.requests(sweep_id)
        if r.reply
    }
    plan = record.plan
    upkeep = str(plan.get("upkeep", "stand-in"))
    note = (
        f"answered through the {arms[0].kind} batch API at batch prices "
        f"(sweep {sweep_id[:8]}); {plan.get('estimate', {}).get('upkeep_sentence', '')}"
    )
    if record.kind == RECALL:
        grid = RecallGrid.from_dict(record.config)
        return replay_recall(grid, arms, upkeep=upkeep, upkeep_records=record.upkeep,
                             replies=replies, note=note)  # fmt: skip
    config = config_from_dict(record.config)
    results = [
        (
            arm.model,
            replay(
                config, arm, upkeep=upkeep, upkeep_records=record.upkeep, replies=replies, note=note
            ),
        )  # fmt: skip
        for arm in arms
    ]
    return results[0][1] if len(results) == 1 else compare(results)


def wait(
    store: SweepStore,
    sweep_id: str,
    settings: Arms,
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
