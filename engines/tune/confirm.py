"""Confirming a tuned setting with a real model: its cost first, then the survival lab's
recall verdicts for that one setting (facts on the scripted conversation)."""

from __future__ import annotations

import threading
from dataclasses import replace

from engines.survival import Estimate, SurvivalConfig, SurvivalResult, estimate, run_survival
from engines.tune.results import Trial
from lanes.lane import Sender
from memory.maintenance import NO_UPKEEP, Upkeep


def confirmation_plan(config: SurvivalConfig, trial: Trial) -> Estimate:
    """What confirming `trial` with real recall calls would take (calls, tokens), before any
    call is made: the survival lab's own estimate for that one setting, upkeep by the model."""
    return estimate(replace(config, strategies=(trial.choice,)), with_model=True)


def confirm(
    config: SurvivalConfig,
    trial: Trial,
    *,
    send: Sender,
    upkeep: Upkeep = NO_UPKEEP,
    cancel: threading.Event | None = None,
) -> SurvivalResult:
    """Run the survival lab for the winning setting with a real model: its recall verdicts say
    whether the model uses what the payload holds (payload-only tuning cannot)."""
    return run_survival(
        replace(config, strategies=(trial.choice,)),
        send=send,
        upkeep=upkeep,
        cancel=cancel,
        workers=1,
    )
