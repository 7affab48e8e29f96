"""The sidebar: provider and model, key, sampling, system prompt, lanes and their parameters.

Everything sits in one form, so a change applies at once with "Apply" (and starts a new
conversation: strategies with other parameters would not share a history).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from memory.registry import REGISTRY, Param
from scenarios import fincoach
from ui.app_state import (
    GENERIC_PROMPT,
    AppConfig,
    LaneChoice,
    provider_form,
)

PROMPTS = {"FinCoach (seed 000)": fincoach.SYSTEM_PROMPT, "Generic assistant": GENERIC_PROMPT}


def param_input(strategy: str, p: Param, value: Any) -> Any:
    key = f"param-{strategy}-{p.name}"
    if p.choices:
        return st.selectbox(
            p.name, p.choices, index=list(p.choices).index(value), key=key, help=p.help
        )
    if isinstance(p.default, float):
        return st.slider(
            p.name,
            float(p.minimum or 0.0),
            float(p.maximum or 1.0),
            float(value),
            step=0.05,
            key=key,
            help=p.help,
        )
    return int(
        st.number_input(
            p.name,
            min_value=int(p.minimum or 0),
            max_value=int(p.maximum or 10**6),
            value=int(value),
            step=1,
            key=key,
            help=p.help,
        )
    )


def render_sidebar(config: AppConfig) -> AppConfig | None:
    """Draw the settings; returns the new config when the user applies it, else None."""
    with st.sidebar, st.form("settings", border=False):
        st.header("Settings")
        provider = provider_form(config)

        st.subheader("System prompt")
        names = list(PROMPTS)
        current = next((n for n, t in PROMPTS.items() if t == config.system_prompt), None)
        preset = st.selectbox(
            "Preset", [*names, "Custom"], index=names.index(current) if current else len(names)
        )
        prompt = st.text_area(
            "System prompt (edit for a custom one)", config.system_prompt, height=160
        )
        if preset != "Custom" and prompt == config.system_prompt:
            prompt = PROMPTS[preset]

        st.subheader("Lanes")
        chosen_names = st.multiselect(
            "Strategies (one column each)",
            list(REGISTRY),
            default=[lane.strategy for lane in config.lanes],
            format_func=lambda n: REGISTRY[n].title,
        )
        current_params = {lane.strategy: dict(lane.params) for lane in config.lanes}
        lanes = []
        for name in chosen_names:
            spec = REGISTRY[name]
            values = {**spec.defaults(), **current_params.get(name, {})}
            if spec.params:
                with st.expander(f"{spec.title} parameters"):
                    values = {p.name: param_input(name, p, values[p.name]) for p in spec.params}
            lanes.append(LaneChoice(name, values))

        applied = st.form_submit_button(
            "Apply (starts a new conversation)", type="primary", width="stretch"
        )
    if not applied:
        return None
    if not lanes:
        st.sidebar.error("Pick at least one strategy.")
        return None
    return config.replace(provider=provider, system_prompt=prompt, lanes=tuple(lanes))
