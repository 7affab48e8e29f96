"""Hand a strategy setting found on another page (the tuner's winner, a composition) to the
main page as a lane.

    message = lane_handoff.add_as_lane(StrategyChoice("window", {"k": 6}))

The main page reads its lanes from `st.session_state.config`; a new lane joins the lanes
already there (same order, the new one last) and the main page starts a fresh conversation
with them the next time it is opened, saying so in its notice line.
"""

from __future__ import annotations

import streamlit as st

from memory.choices import StrategyChoice
from memory.registry import spec
from ui.app_state import AppConfig, LaneChoice


def add_as_lane(choice: StrategyChoice) -> str:
    """Put `choice` on the main page as a lane; returns what happened, for a message.
    While the main page keys lanes by strategy name, a lane of the same strategy is
    replaced in place by the new setting (the message says so)."""
    config = st.session_state.get("config")
    config = config if isinstance(config, AppConfig) else AppConfig.default()
    params = {**spec(choice.name).defaults(), **dict(choice.params)}
    lane = LaneChoice(choice.name, params)
    names = [existing.strategy for existing in config.lanes]
    if choice.name in names:
        lanes = tuple(lane if old.strategy == choice.name else old for old in config.lanes)
        what = f"replaced the {choice.name} lane with {choice.label}"
    else:
        lanes = (*config.lanes, lane)
        what = f"added the lane {choice.label}"
    st.session_state.config = config.replace(lanes=lanes)
    st.session_state.session = None  # the main page starts a conversation with the new lanes
    st.session_state.demo_queue = []
    message = f"On the main page: {what} ({len(lanes)} lanes; a new conversation starts)."
    st.session_state.notice = message
    return message
