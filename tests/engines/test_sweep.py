"""Sweeps end to end: plan, estimate at batch prices, submit through the real SDKs to the fake
batch endpoint, poll, collect into the same rows as an interactive run, resubmit failures."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from engines.survival import DEFAULT_FACTS, SurvivalConfig, run_survival
from engines.sweep import (
    SweepError,
    body_key,
    custom_id_of,
    estimate_sweep,
    prepare_sweep,
)
from engines.sweep_run import (
    COLLECTED,
    COLLECTED_WITH_FAILURES,
    failed_requests,
    open_sweep,
    progress,
    refresh,
    resubmit_failed,
    start,
)
from memory.lane_spec import LaneSpec
from memory.maintenance import Upkeep
from memory.standins import StaticReply
from memory.types import Completion
from providers import ProviderSettings, build_body, model_info
from providers.batch import BATCH_DISCOUNT
from storage.store import SweepStore
from tests.providers.fake_batch_server import FakeBatchServer, echo

KEY = "test-key-0123456789abcdef"
CONFIG = SurvivalConfig(
    facts=DEFAULT_FACTS[:3],
    probe_turns=(2, 6, 12),
    strategies=(
        LaneSpec("full"),
        LaneSpec("window", {"k": 3}),
        LaneSpec("summary_buffer", {"budget": 300}),
        LaneSpec("entity"),
    ),
)
# Rows are compared on every field but the billed counts (the fake answers carry usage) and
# latency (a batch line has none of its own).
SKIP = {"billed_input", "billed_output", "latency_s"}


def settings_for(server: FakeBatchServer, family: str) -> ProviderSettings:
    if family == "anthropic":
        return ProviderSettings("anthropic", "ok", base_url=server.url, api_key=KEY, temperature=None)  # fmt: skip
    return ProviderSettings("openai_compatible", "ok", base_url=server.url + "/v1", api_key=KEY)


def echoing(settings: ProviderSettings):
    """A sender answering each request at once as the fake batch server's 'model' does (it
    echoes the payload)."""

    def send(request, on_delta):
        return StaticReply(echo(build_body(request, settings)), model=settings.model)

    return send


def recording(settings: ProviderSettings):
    """A sender that answers nothing, and the list of every body it was asked to send, kept
    without the streaming fields (a batch line never carries them)."""
    bodies: list[dict] = []

    def send(request, on_delta):
        body = build_body(request, settings)
        bodies.append({k: v for k, v in body.items() if k not in ("stream", "stream_options")})
        return StaticReply("")

    return send, bodies


def interactive(config: SurvivalConfig, settings: ProviderSettings, **kw):
    """The interactive run: each probe answered at once by the same 'model' the server runs."""
    return run_survival(config, send=echoing(settings), workers=1, **kw)


def rows(result):
    return [{k: v for k, v in r.as_dict().items() if k not in SKIP} for r in result.rows]


def collect_all(store, sweep_id, settings, limit=10):
    for _ in range(limit):
        now = refresh(store, sweep_id, settings)
        if now.done:
            return now
    raise AssertionError(f"sweep not done: {now.line()}")


def collect_after_polls(fb, store, plan, settings, polls: int):
    """Start `plan` on a batch server that answers "in progress" `polls` times, refresh once
    (not done yet), then collect it all: (sweep id, that first refresh, the collected one)."""
    fb.polls_before_done = polls
    sweep_id = start(store, plan)
    first = refresh(store, sweep_id, settings)
    assert not first.done
    return sweep_id, first, collect_all(store, sweep_id, settings)


def test_estimate_is_at_half_the_catalog_price_and_says_how_upkeep_runs():
    for settings in (
        ProviderSettings("openai", "gpt-4o-mini", max_tokens=100),
        ProviderSettings("anthropic", "claude-haiku-4-5", max_tokens=100, temperature=None),
    ):
        info = model_info(settings)
        assert info is not None
        est = estimate_sweep(CONFIG, settings, upkeep="interactive")
        assert est.cells == 3 * 3 * 4 and est.requests == est.cells
        expected = (est.input_tokens * info.input_per_m + est.output_tokens * info.output_per_m) / 1e6  # fmt: skip
        assert est.live_cost == pytest.approx(expected)
        assert est.batch_cost == pytest.approx(expected * BATCH_DISCOUNT)
        assert est.upkeep_calls > 0 and est.upkeep_cost and est.upkeep_cost > 0
        assert est.total_cost == pytest.approx(est.batch_cost + est.upkeep_cost)
        text = "\n".join(est.lines())
        assert "interactively" in text and "one round of 1 batch" in text and "$" in text
    free = estimate_sweep(CONFIG, ProviderSettings("openai", "gpt-4o-mini"), upkeep="stand-in")
    assert free.upkeep_cost == 0 and "stand-ins" in free.upkeep_sentence
    unknown = estimate_sweep(CONFIG, ProviderSettings("openai", "no-such-model"))
    assert unknown.batch_cost is None and "unknown" in "\n".join(unknown.lines())


def test_sweeps_refuse_what_cannot_be_batched():
    with pytest.raises(SweepError, match="generated replies"):
        estimate_sweep(replace(CONFIG, replies="generated"), ProviderSettings("openai", "gpt-4o-mini"))  # fmt: skip
    with pytest.raises(SweepError, match="embedded"):
        estimate_sweep(CONFIG, ProviderSettings("embedded", "smol"))
    with pytest.raises(SweepError, match="upkeep"):
        estimate_sweep(CONFIG, ProviderSettings("openai", "gpt-4o-mini"), upkeep="later")


def test_plan_holds_exactly_the_bodies_the_interactive_run_sends(fb):
    settings = settings_for(fb, "openai")
    send, live_bodies = recording(settings)
    run_survival(CONFIG, send=send, workers=1)
    plan = prepare_sweep(CONFIG, settings)
    assert {body_key(r.body) for r in plan.requests} == {body_key(b) for b in live_bodies}
    assert sum(r.probes for r in plan.requests) == len(live_bodies) == plan.estimate.cells
    # identical payloads (e.g. full and window before the window fills) are sent once
    assert len(plan.requests) < len(live_bodies)
    assert plan.estimate.requests == len(plan.requests) and plan.estimate.exact_requests
    assert all(r.custom_id == custom_id_of(body_key(r.body)) for r in plan.requests)


@pytest.mark.parametrize("family", ["openai", "anthropic"])
def test_sweep_polls_through_in_progress_and_lands_in_the_interactive_rows(fb, store, family):
    settings = settings_for(fb, family)
    plan = prepare_sweep(CONFIG, settings)
    sweep_id, first, done = collect_after_polls(fb, store, plan, settings, polls=2)
    assert first.submitted == len(plan.requests) and first.result is None
    assert done.succeeded == len(plan.requests) and done.failed == 0
    assert store.sweep(sweep_id).status == COLLECTED
    expected = interactive(CONFIG, settings)
    assert rows(done.result) == rows(expected)
    assert done.result.mode == "model"
    assert done.result.matrix("recalled") == expected.matrix("recalled")
    assert any(r.billed_input for r in done.result.rows)  # usage came back with the replies
    assert any("batch API" in n for n in done.result.notes)


def test_partial_failure_is_listed_and_resubmitted_alone(fb, store):
    settings = settings_for(fb, "openai")
    plan = prepare_sweep(CONFIG, settings)
    ids = [r.custom_id for r in plan.requests]
    fb.fail_next = {ids[1]}
    fb.expire_next = {ids[4]}
    sweep_id = start(store, plan)
    now = collect_all(store, sweep_id, settings)
    assert now.failed == 2 and store.sweep(sweep_id).status == COLLECTED_WITH_FAILURES
    failed = {r.custom_id: r for r in failed_requests(store, sweep_id)}
    assert set(failed) == {ids[1], ids[4]}
    assert failed[ids[1]].state == "errored" and "BadRequest" in (failed[ids[1]].error or "")
    assert failed[ids[4]].state == "expired" and "BatchExpired" in (failed[ids[4]].error or "")
    errors = [r for r in now.result.rows if r.error]
    assert errors and sum(1 for r in now.result.rows if r.verdict == "error") == len(errors)

    batches = resubmit_failed(store, sweep_id, settings)
    assert len(batches) == 1
    sent = fb.batches[batches[0].batch_id].lines
    assert sorted(line["custom_id"] for line in sent) == sorted([ids[1], ids[4]])
    done = collect_all(store, sweep_id, settings)
    assert done.failed == 0 and store.sweep(sweep_id).status == COLLECTED
    assert rows(done.result) == rows(interactive(CONFIG, settings))
    assert {r.attempts for r in store.requests(sweep_id) if r.custom_id in failed} == {2}


def test_resubmitting_names_only_failed_requests(fb, store):
    settings = settings_for(fb, "anthropic")
    plan = prepare_sweep(CONFIG, settings)
    sweep_id = start(store, plan)
    collect_all(store, sweep_id, settings)
    with pytest.raises(SweepError, match="not failed"):
        resubmit_failed(store, sweep_id, settings, custom_ids=[plan.requests[0].custom_id])
    assert resubmit_failed(store, sweep_id, settings) == []


def test_interactive_upkeep_is_recorded_once_and_replayed(fb, store):
    settings = settings_for(fb, "openai")
    calls = []

    def upkeep(request):
        calls.append(request)
        text = " ".join(m.content for m in request.messages)[-400:]
        return Completion(text=f"Summary: {text}", model="ok")

    plan = prepare_sweep(CONFIG, settings, upkeep="interactive", upkeep_fn=upkeep)
    planned_calls = len(calls)
    assert planned_calls > 0 and plan.upkeep_records
    sweep_id = start(store, plan)
    done = collect_all(store, sweep_id, settings)
    assert len(calls) == planned_calls  # collecting replays; the model is not asked again
    calls.clear()
    expected = interactive(CONFIG, settings, upkeep=Upkeep.using(upkeep))
    assert rows(done.result) == rows(expected)
    assert done.result.maintenance == "model"


def test_store_reopens_idempotently_and_holds_no_key(tmp_path, fb):
    url = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    settings = settings_for(fb, "openai")
    first = SweepStore(url)
    sweep_id = start(first, prepare_sweep(CONFIG, settings))
    first.close()
    again = SweepStore(url)  # the tables exist: opening again changes nothing
    record, reopened = open_sweep(again, sweep_id, api_key=KEY, typed_urls=[settings.base_url])
    assert reopened.base_url == settings.base_url and reopened.model == "ok"
    assert progress(again, sweep_id).submitted == len(again.requests(sweep_id))
    assert [s.id for s in again.list_sweeps()] == [sweep_id]
    again.close()
    for path in tmp_path.iterdir():
        assert KEY.encode() not in path.read_bytes()
    assert "api_key" not in json.dumps(record.settings)
    with pytest.raises(ValueError, match="without their key"):
        again.create(name="x", settings={"api_key": KEY}, config={}, plan={}, upkeep={}, requests=[])  # fmt: skip


CHILD = """
import sys
from engines.sweep_run import start, wait
from providers import ProviderSettings
from storage.store import SweepStore
{imports}

url, db = sys.argv[1], sys.argv[2]
settings = ProviderSettings("openai_compatible", "ok", base_url=url + "/v1", key_env="SWEEP_TEST_KEY")
store = SweepStore(db)
sweep_id = start(store, {plan})
print(sweep_id, flush=True)
wait(store, sweep_id, settings, interval=0.05)
print("finished", flush=True)
"""


def kill_while_polling(fb, tmp_path, monkeypatch, imports: str, plan: str) -> tuple[str, str]:
    """A child process plans (`plan`, an expression over `settings`), submits and polls a
    sweep; it is SIGKILLed while the batch is in progress. (database URL, sweep id)."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    db = f"sqlite:///{tmp_path / 'killed.sqlite3'}"
    monkeypatch.setenv("SWEEP_TEST_KEY", KEY)
    fb.polls_before_done = 10**9  # the batch stays in progress while the child polls
    env = {**os.environ, "PYTHONPATH": str(root)}
    code = CHILD.format(imports=imports, plan=plan)
    child = subprocess.Popen(
        [sys.executable, "-c", code, fb.url, db],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=root, env=env,
    )  # fmt: skip
    try:
        sweep_id = child.stdout.readline().strip()
        assert sweep_id, child.stderr.read()
        deadline = time.monotonic() + 60
        while not any(b.polls >= 2 for b in fb.batches.values()):
            assert time.monotonic() < deadline, "the child never polled"
            time.sleep(0.05)
        child.send_signal(signal.SIGKILL)
        assert child.wait(timeout=30) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
    assert "finished" not in child.stdout.read()
    return db, sweep_id


def test_sigkill_between_submit_and_collect_then_reopen_and_collect(fb, tmp_path, monkeypatch):
    db, sweep_id = kill_while_polling(
        fb,
        tmp_path,
        monkeypatch,
        "from engines.sweep import prepare_sweep\nfrom tests.engines.test_sweep import CONFIG",
        "prepare_sweep(CONFIG, settings)",
    )
    fb.polls_before_done = 0  # the provider finishes the batch while nobody is watching
    store = SweepStore(db)  # a new process's view: only what the store kept
    record, settings = open_sweep(store, sweep_id, typed_urls=[fb.url, fb.url + "/v1"])
    assert record.status == "submitted" and len(store.batches(sweep_id)) == 1
    before = progress(store, sweep_id)
    assert before.submitted == before.requests and before.result is None
    done = refresh(store, sweep_id, settings)
    assert done.done and done.failed == 0
    assert rows(done.result) == rows(interactive(CONFIG, settings))
    assert len(fb.batches) == 1  # nothing was submitted twice
    store.close()


def test_a_plan_saved_but_never_submitted_is_submitted_on_resume(fb, store):
    from engines.sweep_run import resume, save_plan

    settings = settings_for(fb, "openai")
    plan = prepare_sweep(CONFIG, settings)
    sweep_id = save_plan(store, plan)  # the process stopped before submitting
    assert progress(store, sweep_id).planned == len(plan.requests) and not fb.batches
    fb.polls_before_done = 0
    now = resume(store, sweep_id, settings)
    assert len(fb.batches) == 1 and now.done and now.result is not None
    assert resume(store, sweep_id, settings).done and len(fb.batches) == 1  # nothing sent twice


def test_the_sweeps_tables_are_a_registered_store_migration(tmp_path):
    import sqlalchemy as sa

    from storage.store import MIGRATIONS, Store

    assert "m003_sweeps" in [m.__name__ for m in MIGRATIONS]
    url = f"sqlite:///{tmp_path / 'migrated.sqlite3'}"
    Store(url).close()  # the sessions store alone creates the sweeps' tables
    engine = sa.create_engine(url)
    tables = set(sa.inspect(engine).get_table_names())
    assert {"ml_sweeps", "ml_sweep_requests", "ml_sweep_batches"} <= tables
    with engine.connect() as conn:
        names = set(conn.exec_driver_sql("SELECT name FROM ml_migrations").scalars())
    assert "m003_sweeps" in names
    engine.dispose()
    again = SweepStore(url)  # and a SweepStore opening it runs nothing twice
    assert again.list_sweeps() == []
    again.close()
