"""Hand a strategy setting found on another page (the tuner's winner, a composition) to the
main page as a lane, with a message saying what happened.

    message = lane_handoff.add_as_lane(LaneSpec("window", {"k": 6}))

The lane itself is added by ui/app_state.add_lane (next to the lanes already there; the main
page starts a new conversation with them); the message also goes to the main page's notice.
"""

from __future__ import annotations

import streamlit as st

from memory.lane_spec import LaneSpec
from ui.app_state import AppConfig, add_lane


def main_config() -> AppConfig:
    """The main page's settings (its model and lanes), or the defaults if it was not opened."""
    config = st.session_state.get("config")
    return config if isinstance(config, AppConfig) else AppConfig.default()


def _lane_count() -> int:
    return len(main_config().lanes)


def add_as_lane(choice: LaneSpec) -> str:
    """Put `choice` on the main page as a lane; returns what happened, for a message."""
    before = _lane_count()
    label = add_lane(choice)
    after = _lane_count()
    if after == before:
        return f"The lane {label} is already on the main page ({after} lanes)."
    message = f"Added the lane {label} on the main page ({after} lanes; a new conversation starts)."
    st.session_state.notice = message
    return message
