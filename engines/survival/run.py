"""Running a survival grid: fill in stand-in upkeep, estimate a run, run it (runner.py
does the lanes)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from engines.survival.config import ScriptTurn, SurvivalConfig
from engines.survival.facts import SurvivalConfigError
from engines.survival.results import Estimate, ProbeRow, Progress, SurvivalResult, _sort_key
from engines.survival.runner import Hooks, _Runner
from lanes.lane import Sender
from memory.maintenance import NO_UPKEEP, Upkeep
from memory.registry import spec
from memory.standins import ExtractiveSummariser, RuleExtractor, SizedSummariser, StaticReply
from memory.tokens import TokenCounter
from memory.types import Request

STAND_IN_NOTE = (
    "upkeep by rule-based stand-ins, not a model: summaries keep the sentences that state "
    "names or figures (either side's), extraction reads a few finance keys; the verdicts of "
    "summary, entity and hybrid strategies show the stand-ins, not a model"
)


def _stand_ins(config: SurvivalConfig, upkeep: Upkeep) -> tuple[Upkeep, bool]:
    """Fill in rule-based upkeep where no model function was given (and one is needed)."""
    needs_summary = any(spec(s.name).cls.uses_summary for s in config.strategies)
    needs_facts = any(spec(s.name).cls.uses_facts for s in config.strategies)
    used = False
    if needs_summary and upkeep.summarize is None:
        upkeep, used = replace(upkeep, summarize=ExtractiveSummariser()), True
    if needs_facts and upkeep.extract is None:
        upkeep, used = replace(upkeep, extract=RuleExtractor()), True
    return upkeep, used


def estimate(
    config: SurvivalConfig,
    *,
    with_model: bool,
    model_maintenance: bool | None = None,
    assumed_reply_tokens: int = 80,
    assumed_summary_tokens: int = 160,
    counter: TokenCounter | None = None,
) -> Estimate:
    """Calls and tokens of a run, from a dry run of the script with no model.

    Probe and reply calls are exact; upkeep calls are exact when upkeep is done by stand-ins
    and close otherwise (summaries are assumed `assumed_summary_tokens` long, replies
    `assumed_reply_tokens`)."""
    config.validate()
    counter = counter or TokenCounter(config.encoding)
    model_maintenance = with_model if model_maintenance is None else model_maintenance
    sized_reply = counter.text_of_tokens(assumed_reply_tokens) if assumed_reply_tokens else "ok"

    def fake_send(request: Request, on_delta: Callable[[str], None] | None) -> StaticReply:
        return StaticReply(sized_reply)

    upkeep = NO_UPKEEP
    if model_maintenance:
        upkeep = Upkeep(SizedSummariser(counter, assumed_summary_tokens), RuleExtractor())
    upkeep, _ = _stand_ins(config, upkeep)
    models = (fake_send if with_model else None, upkeep)
    runner = _Runner(config, models, counter, count_stand_ins=model_maintenance)
    runner.run(workers=1)
    return Estimate(
        probe_calls=runner.probe_calls,
        reply_calls=runner.reply_calls,
        maintenance_calls=runner.maintenance_calls if model_maintenance else 0,
        prompt_tokens=runner.prompt_tokens,
        maintenance_tokens=runner.maintenance_tokens if model_maintenance else 0,
        output_tokens=runner.output_tokens if with_model or model_maintenance else 0,
        rows=runner.rows_total,
        exact=not with_model or (config.replies == "fixed" and not _needs_model(config)),
    )


def _needs_model(config: SurvivalConfig) -> bool:
    return any(spec(s.name).needs_model for s in config.strategies)


def run_survival(
    config: SurvivalConfig,
    *,
    send: Sender | None = None,
    upkeep: Upkeep = NO_UPKEEP,
    counter: TokenCounter | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    on_row: Callable[[ProbeRow], None] | None = None,
    cancel: threading.Event | None = None,
    workers: int | None = None,
    expected_calls: int | None = None,
    turns: Sequence[ScriptTurn] | None = None,
) -> SurvivalResult:
    """Run the grid. `send` answers probes (and filler, with replies='generated'); with no
    `send` only the payload verdict is given. Upkeep without a model function is done by
    rule-based stand-ins (the result says so). Cancelling keeps the rows made so far.
    `turns` replaces the scripted conversation (an imported transcript, its facts at their
    turns); without it the config's script is used."""
    config.validate()
    if config.replies == "generated" and send is None:
        raise SurvivalConfigError("generated replies need a model: choose fixed replies or a model")
    counter = counter or TokenCounter(config.encoding)
    upkeep, stand_in = _stand_ins(config, upkeep)
    if on_progress is not None and expected_calls is None:
        expected_calls = estimate(
            config, with_model=send is not None, model_maintenance=not stand_in, counter=counter
        ).calls
    hooks = Hooks(on_progress, on_row, cancel, expected_calls)
    runner = _Runner(config, (send, upkeep), counter, hooks, stand_in=stand_in, turns=turns)
    started = time.perf_counter()
    if workers is None:
        workers = len(config.strategies) if send is not None else 1
    runner._progress()
    runner.run(workers)
    order = {s.label: i for i, s in enumerate(config.strategies)}
    fact_order = {f.key: i for i, f in enumerate(config.facts)}
    rows = sorted(runner.rows, key=_sort_key(order, fact_order))
    cancelled = runner.cancel.is_set() and len(rows) < runner.rows_total
    notes = list(runner.notes)
    if stand_in:
        notes.append(STAND_IN_NOTE)
    if send is None:
        notes.append("payload only: no model answered the probes, so there is no recall verdict")
    return SurvivalResult(
        config=config.as_dict(),
        rows=rows,
        mode="model" if send is not None else "payload-only",
        maintenance="stand-in" if stand_in else "model",
        cancelled=cancelled,
        provider_calls=runner.provider_calls,
        maintenance_calls=runner.maintenance_calls,
        elapsed_s=time.perf_counter() - started,
        notes=notes,
        model=runner.model,
    )
