"""Recall sweeps and sweeps of several models, against the fake batch endpoint with the real
SDKs: the same rows as an interactive recall run, partial failures resubmitted, a process
killed between submit and collect, two models in one sweep, the store's migration 4."""

from __future__ import annotations

from dataclasses import asdict

import pytest

from engines.recall import RecallRow, run_recall
from engines.sweep import SweepError, body_key, prepare_sweep
from engines.sweep_recall import RecallGrid, estimate_recall_sweep, prepare_recall_sweep
from engines.sweep_run import (
    COLLECTED,
    failed_requests,
    open_arms,
    progress,
    refresh,
    resubmit_failed,
    start,
)
from memory.lane_spec import LaneSpec
from memory.maintenance import Upkeep
from memory.types import Completion
from providers import ProviderSettings, model_info
from providers.batch import BATCH_DISCOUNT
from storage.store import SweepStore
from tests.engines.test_recall import small
from tests.engines.test_sweep import (
    CONFIG,
    KEY,
    collect_after_polls,
    collect_all,
    echoing,
    interactive,
    kill_while_polling,
    recording,
    settings_for,
)

GRID = RecallGrid(
    small(),
    (
        LaneSpec("full"),
        LaneSpec("window", {"k": 1}),
        LaneSpec("token_window", shares={"budget": 0.3}),
        LaneSpec("summary_buffer", {"budget": 120}),
        LaneSpec("entity"),
        LaneSpec("retrieval", {"k": 1, "neighbours": 0.0}),
    ),
)


def answered_live(grid: RecallGrid, settings: ProviderSettings, **kw) -> list[RecallRow]:
    """The interactive recall run: each question answered at once by the 'model' the fake
    batch server runs (it echoes the payload)."""
    send = echoing(settings)
    return run_recall([grid.conversation], grid.settings, send=send, model=settings.model, **kw)


def table(rows_) -> list[dict]:
    """Rows on every field but the time to build a request."""
    return [{k: v for k, v in asdict(r).items() if k != "ms_per_query"} for r in rows_]


def test_a_recall_batch_line_is_the_body_the_interactive_answer_mode_sends(fb):
    settings = settings_for(fb, "openai")
    send, live = recording(settings)
    run_recall([GRID.conversation], GRID.settings, send=send)
    plan = prepare_recall_sweep(GRID, settings)
    assert {body_key(r.body) for r in plan.requests} == {body_key(b) for b in live}
    assert live[0] in [dict(r.body) for r in plan.requests]  # line == live body, whole
    assert sum(r.probes for r in plan.requests) == len(live) == GRID.cells
    assert len(plan.requests) < len(live)  # identical payloads go once
    assert plan.kind == "recall" and plan.estimate.exact_requests


def test_recall_estimate_is_at_batch_prices_and_says_how_upkeep_runs():
    settings = ProviderSettings("openai", "gpt-4o-mini", max_tokens=64)
    info = model_info(settings)
    assert info is not None
    est = estimate_recall_sweep(GRID, settings, upkeep="interactive")
    assert est.cells == 3 * 6 and est.requests <= est.cells
    expected = (est.input_tokens * info.input_per_m + est.output_tokens * info.output_per_m) / 1e6
    assert est.batch_cost == pytest.approx(expected * BATCH_DISCOUNT)
    assert est.upkeep_calls > 0 and est.upkeep_cost and est.upkeep_cost > 0  # summary, entity
    assert "interactively" in est.upkeep_sentence
    free = estimate_recall_sweep(GRID, settings)
    assert free.upkeep_cost == 0 and "stand-ins" in free.upkeep_sentence
    with pytest.raises(SweepError, match="embedded"):
        estimate_recall_sweep(GRID, ProviderSettings("embedded", "smol"))
    with pytest.raises(SweepError, match="unknown strategies"):
        estimate_recall_sweep(RecallGrid(small(), (LaneSpec("nope"),)), settings)


@pytest.mark.parametrize("family", ["openai", "anthropic"])
def test_recall_sweep_polls_collects_and_lands_in_the_interactive_rows(fb, store, family):
    settings = settings_for(fb, family)
    plan = prepare_recall_sweep(GRID, settings)
    sweep_id, first, done = collect_after_polls(fb, store, plan, settings, polls=1)
    assert first.recall is None
    assert done.failed == 0 and store.sweep(sweep_id).status == COLLECTED
    assert done.result is None and done.recall is not None
    expected = answered_live(GRID, settings)
    assert table(done.recall.rows) == table(expected)
    assert {r.answered for r in expected} - {None}  # the model's answers were graded
    assert store.list_sweeps()[0].kind == "recall"


def test_recall_partial_failure_is_listed_and_resubmitted_alone(fb, store):
    settings = settings_for(fb, "openai")
    plan = prepare_recall_sweep(GRID, settings)
    ids = [r.custom_id for r in plan.requests]
    fb.fail_next, fb.expire_next = {ids[0]}, {ids[2]}
    sweep_id = start(store, plan)
    now = collect_all(store, sweep_id, settings)
    assert {r.custom_id for r in failed_requests(store, sweep_id)} == {ids[0], ids[2]}
    assert now.recall is not None and sum(r.errors for r in now.recall.rows) >= 2
    resubmit_failed(store, sweep_id, settings)
    assert sorted(line["custom_id"] for line in list(fb.batches.values())[-1].lines) == sorted(
        [ids[0], ids[2]]
    )
    done = collect_all(store, sweep_id, settings)
    assert done.failed == 0 and done.recall is not None
    assert table(done.recall.rows) == table(answered_live(GRID, settings))


def test_recall_interactive_upkeep_is_recorded_and_replayed(fb, store):
    settings = settings_for(fb, "anthropic")
    calls = []

    def upkeep(request):
        calls.append(request)
        return Completion(text="Summary: " + " ".join(m.content for m in request.messages)[-300:])

    plan = prepare_recall_sweep(GRID, settings, upkeep="interactive", upkeep_fn=upkeep)
    assert calls and plan.upkeep_records
    made = len(calls)
    done = collect_all(store, start(store, plan), settings)
    assert len(calls) == made  # collecting replays the recorded upkeep
    expected = answered_live(GRID, settings, upkeep=Upkeep.using(upkeep))
    assert done.recall is not None and table(done.recall.rows) == table(expected)


def test_recall_sweep_killed_between_submit_and_collect_is_collected_on_reopen(
    fb, tmp_path, monkeypatch
):
    db, sweep_id = kill_while_polling(
        fb,
        tmp_path,
        monkeypatch,
        "from engines.sweep_recall import prepare_recall_sweep\n"
        "from tests.engines.test_sweep_recall import GRID",
        "prepare_recall_sweep(GRID, settings)",
    )
    fb.polls_before_done = 0
    reopened = SweepStore(db)
    record, arms = open_arms(reopened, sweep_id, typed_urls=[fb.url, fb.url + "/v1"])
    assert record.kind == "recall" and progress(reopened, sweep_id).recall is None
    done = refresh(reopened, sweep_id, arms)
    assert done.done and done.recall is not None and len(fb.batches) == 1
    assert table(done.recall.rows) == table(answered_live(GRID, arms[0]))
    reopened.close()


def two_models(fb, family: str) -> list[ProviderSettings]:
    first = settings_for(fb, family)
    return [first, first.with_(model="ok-2")]


@pytest.mark.parametrize(("family", "batches"), [("openai", 2), ("anthropic", 1)])
def test_two_models_in_one_survival_sweep(fb, store, family, batches):
    arms = two_models(fb, family)
    sweep_id = start(store, [prepare_sweep(CONFIG, s) for s in arms])
    # OpenAI batches hold one model each; an Anthropic batch takes both
    assert len(store.batches(sweep_id)) == batches == len(fb.batches)
    models = {line["body"]["model"] for b in fb.batches.values() for line in b.lines}
    assert models == {"ok", "ok-2"}
    record, reopened = open_arms(store, sweep_id, api_key=KEY, typed_urls=[arms[0].base_url])
    assert [a.model for a in reopened] == ["ok", "ok-2"]
    assert store.list_sweeps()[0].model == "ok, ok-2"  # the list names both
    assert [e["model"] for e in record.plan["estimates"]] == ["ok", "ok-2"]
    done = collect_all(store, sweep_id, reopened)
    result = done.result
    assert result is not None and result.model == "ok vs ok-2"
    for arm in arms:
        mine = [r for r in result.rows if r.strategy.endswith(f" · {arm.model}")]
        assert len(mine) == len(interactive(CONFIG, arm).rows)
        assert [r.recalled for r in mine] == [r.recalled for r in interactive(CONFIG, arm).rows]
    with pytest.raises(SweepError, match="named twice"):
        start(store, [prepare_sweep(CONFIG, arms[0])] * 2)


def test_two_models_in_one_recall_sweep(fb, store):
    arms = two_models(fb, "openai")
    sweep_id = start(store, [prepare_recall_sweep(GRID, s) for s in arms])
    done = collect_all(store, sweep_id, arms)
    assert done.recall is not None
    labels = [r.label for r in done.recall.rows]
    assert labels[: len(GRID.settings)] == [f"{s.sized_label} · ok" for s in GRID.settings]
    assert {r.model for r in done.recall.rows} == {"ok", "ok-2"}
    for arm in arms:
        mine = [r for r in done.recall.rows if r.model == arm.model]
        expected = answered_live(GRID, arm)
        assert [r.answered for r in mine] == [r.answered for r in expected]
        assert [r.evidence_kept for r in mine] == [r.evidence_kept for r in expected]


def test_migration_4_adds_kind_and_arm_to_an_older_sweeps_database(tmp_path):
    import sqlalchemy as sa

    url = f"sqlite:///{tmp_path / 'old.sqlite3'}"
    SweepStore(url).close()
    engine = sa.create_engine(url)
    with engine.begin() as conn:  # back to what migration 3 alone made
        for table, column in (("ml_sweeps", "kind"), ("ml_sweep_requests", "arm"),
                              ("ml_sweep_batches", "arm")):  # fmt: skip
            conn.exec_driver_sql(f"ALTER TABLE {table} DROP COLUMN {column}")
        conn.exec_driver_sql("DELETE FROM ml_migrations WHERE name = 'm005_sweep_kinds_and_arms'")
        conn.exec_driver_sql("UPDATE ml_meta SET value = '3' WHERE key = 'schema'")
        conn.exec_driver_sql(
            "INSERT INTO ml_sweeps (id, name, created_at, updated_at, status, provider, model, "
            "settings, config, plan, upkeep) VALUES ('old', 'old sweep', '2026-01-01', "
            "'2026-01-01', 'planned', 'openai', 'm', '{}', '{}', '{}', '{}')"
        )
    engine.dispose()
    again = SweepStore(url)
    assert [(s.id, s.kind) for s in again.list_sweeps()] == [("old", "survival")]
    inspector = sa.inspect(again.engine)
    assert "arm" in {c["name"] for c in inspector.get_columns("ml_sweep_requests")}
    again.close()


def test_a_two_model_sweep_saves_the_estimate_of_the_whole_sweep(fb, store):
    arms = two_models(fb, "anthropic")
    plans = [prepare_sweep(CONFIG, s) for s in arms]
    record = store.sweep(start(store, plans))
    whole = record.plan["estimate"]
    assert whole["requests"] == sum(len(p.requests) for p in plans)
    assert whole["batches"] == 1  # both Anthropic models in one batch
    assert (
        f"all {whole['requests']:,} requests go out in one round of 1 batch"
        in (whole["upkeep_sentence"])
    )
    assert [e["requests"] for e in record.plan["estimates"]] == [len(p.requests) for p in plans]
