"""The Token growth page's settings as plain data: the defaults, the simulator's config
they make, and the simulation itself (kept for the last few distinct settings).

Draws nothing, so the page's parsing is tested like any function.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from engines.simulator import SimConfig, Simulation, SimulationError, simulate, user_turns_from
from memory.errors import MemoryLabError
from memory.lane_spec import LaneSpec
from scenarios import fincoach
from ui.picker import Picked, every_strategy

DEFAULT_STRATEGIES = ["full", "window (k=3)", "summary_buffer (budget=600)"]


def default_settings() -> dict[str, Any]:
    """The seed's settings: FinCoach's simulated turns and three strategies."""
    return {
        "source": "fincoach",
        "custom_turns": "\n".join(fincoach.SIMULATED_TURNS),
        "turns": len(fincoach.SIMULATED_TURNS),
        "reply_tokens": fincoach.REPLY_TOKENS,
        "strategies": list(DEFAULT_STRATEGIES),
        "variants": "",
        "summary_tokens": 150,
        "facts_tokens": 30,
        "overhead": False,
    }


def build(settings: dict[str, Any], options: dict[str, LaneSpec]) -> SimConfig:
    """The simulator's config from the page's settings (SimulationError if wrong)."""
    if settings["source"] == "custom":
        turns = tuple(t.strip() for t in settings["custom_turns"].splitlines() if t.strip())
    else:
        turns = user_turns_from(settings["source"])
    try:
        strategies = Picked(tuple(settings["strategies"]), settings["variants"]).choices(options)
    except MemoryLabError as exc:
        raise SimulationError(str(exc)) from None
    return SimConfig.from_dict(
        {
            "user_turns": list(turns),
            "reply_tokens": int(settings["reply_tokens"]),
            "turns": int(settings["turns"]),
            "strategies": strategies,
            "summary_tokens": int(settings["summary_tokens"]),
            "facts_tokens": int(settings["facts_tokens"]),
            "overhead": bool(settings["overhead"]),
        }
    ).validate()


@lru_cache(maxsize=16)
def simulated(settings_items: tuple[tuple[str, Any], ...]) -> Simulation:
    """The simulation of `freeze`d settings, run once per distinct settings."""
    settings = dict(settings_items)
    settings["strategies"] = list(settings["strategies"])
    return simulate(build(settings, every_strategy()))


def freeze(settings: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    """`settings` as a hashable key for `simulated`."""
    return tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in sorted(settings.items()))
