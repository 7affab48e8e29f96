"""The sidebar: provider and model, key, sampling, system prompt, lanes and their parameters.

Everything sits in one form, so a change applies at once with "Apply" (and starts a new
conversation: strategies with other parameters would not share a history).
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import streamlit as st

from lanes.session import UpkeepLimits
from memory.lane_spec import LaneSpec
from memory.registry import REGISTRY, Param
from providers import catalog, endpoints
from providers.settings import ProviderChoice, check_base_url
from scenarios import fincoach
from ui import safe, strategy_sources
from ui.app_state import GENERIC_PROMPT, AppConfig, secret
from ui.picker import by_name, strategy_picker

PROMPTS = {"FinCoach (seed 000)": fincoach.SYSTEM_PROMPT, "Generic assistant": GENERIC_PROMPT}


def param_input(strategy: str, p: Param, value: Any, *, lane: str | None = None) -> Any:
    key = f"param-{lane or strategy}-{p.name}"
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
    with st.sidebar:
        lane_set = strategy_sources.sidebar_defaults_button()
        strategy_sources.caption_missing()
        strategy_sources.draw_sources()
    if lane_set is not None:
        st.session_state["lane-strategies"] = list(lane_set)  # the picker shows the new lanes
        return config.replace(lanes=tuple(LaneSpec(n, REGISTRY[n].defaults()) for n in lane_set))
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
        plain, extra = split_lanes(config.lanes)
        chosen_names = strategy_picker(
            by_name(),
            [lane.name for lane in plain],
            key="lane-strategies",
            label="Strategies (one column each)",
            titles=True,
        ).keys
        current_params = {lane.name: dict(lane.params) for lane in plain}
        lanes: list[LaneSpec[ProviderChoice]] = []
        for name in chosen_names:
            spec = REGISTRY[name]
            values = {**spec.defaults(), **current_params.get(name, {})}
            if spec.params:
                with st.expander(safe.md("{} parameters", spec.title)):
                    values = {p.name: param_input(name, p, values[p.name]) for p in spec.params}
            lanes.append(LaneSpec(name, values))
        lanes += extra_lanes(config, extra, provider)

        applied = st.form_submit_button(
            "Apply (starts a new conversation)", type="primary", width="stretch"
        )
    if not applied:
        return None
    # the "Add a lane" box starts empty again: its widgets get new keys
    st.session_state[ADD_ROUND] = st.session_state.get(ADD_ROUND, 0) + 1
    if not lanes:
        st.sidebar.error("Pick at least one strategy.")
        return None
    new = config.replace(provider=provider, system_prompt=prompt, lanes=tuple(lanes))
    try:
        new.labels()
    except ValueError as exc:
        st.sidebar.error(safe.md("{}.", exc))
        return None
    return new


def split_lanes(
    lanes: tuple[LaneSpec[ProviderChoice], ...],
) -> tuple[list[LaneSpec[ProviderChoice]], list[LaneSpec[ProviderChoice]]]:
    """(lanes the strategy pills stand for: the first of each strategy on the session's
    provider, the other lanes: repeats of a strategy and lanes with their own model)."""
    plain: list[LaneSpec[ProviderChoice]] = []
    extra: list[LaneSpec[ProviderChoice]] = []
    for lane in lanes:
        first = lane.provider is None and all(p.name != lane.name for p in plain)
        (plain if first else extra).append(lane)
    return plain, extra


SESSION_MODEL = "the session's"
ADD_ROUND = "lane-add-round"


def extra_lanes(
    config: AppConfig, extra: list[LaneSpec[ProviderChoice]], session: ProviderChoice
) -> list[LaneSpec[ProviderChoice]]:
    """The other lanes, each with its parameters, its own model (optional) and a remove box;
    then an "Add a lane" box: the same strategy on another model, or with other parameters."""
    labels = {id(lane): label for lane, label in zip(config.lanes, config.labels(), strict=True)}
    kept = []
    for i, lane in enumerate(extra):
        label = labels.get(id(lane), f"{lane.name} #{i + 2}")
        with st.expander(safe.md("Lane: {}", label)):
            spec = REGISTRY[lane.name]
            values = {**spec.defaults(), **lane.params}
            values = {
                p.name: param_input(lane.name, p, values[p.name], lane=label) for p in spec.params
            }
            own = own_model(label, lane.provider, session)
            if not st.checkbox("Remove this lane", key=f"lane-remove-{label}"):
                kept.append(LaneSpec(lane.name, values, provider=own))
    with st.expander("Add a lane (same strategy, other model or parameters)"):
        names, round_ = list(REGISTRY), st.session_state.get(ADD_ROUND, 0)
        strategy = st.selectbox(
            "Strategy", ["—", *names], key=f"lane-add-strategy-{round_}",
            format_func=lambda n: n if n == "—" else f"{REGISTRY[n].title} ({n})",
        )  # fmt: skip
        own = own_model(f"add-{round_}", None, session)
        st.caption("Parameters: the strategy's lane's, editable after Apply.")
    if strategy != "—":
        same = next((lane for lane in config.lanes if lane.name == strategy), None)
        params = dict(same.params) if same else REGISTRY[strategy].defaults()
        kept.append(LaneSpec(strategy, params, provider=own))
    return kept


def checked_url(typed: str | None, *, keep: str | None) -> str | None:
    """A typed base URL if it is http(s) (`check_base_url`); else the error under the field,
    and the URL in use before (`keep`) stays."""
    try:
        return check_base_url(typed)
    except ValueError as exc:
        st.error(safe.plain(str(exc)))
        return keep


def own_model(
    key: str, current: ProviderChoice | None, session: ProviderChoice
) -> ProviderChoice | None:
    """A lane's own provider and model (None: the session's); its key is looked up like the
    session's (typed in above for the same provider, else secrets, else the environment)."""
    names = [SESSION_MODEL, *catalog.PRESETS]
    preset = st.selectbox(
        "Lane provider", names, index=names.index(current.preset) if current else 0,
        key=f"lane-preset-{key}",
        format_func=lambda n: n if n == SESSION_MODEL else catalog.preset(n).label,
    )  # fmt: skip
    model = st.text_input(
        "Lane model", current.model if current else "", key=f"lane-model-{key}",
        placeholder="the provider's default",
    )  # fmt: skip
    url = ""
    if endpoints.urls_editable():  # a server run with MEMORY_LAB_FIXED_ENDPOINTS has none
        url = st.text_input(
            "Lane base URL", (current.base_url if current else None) or "",
            key=f"lane-url-{key}", placeholder="the provider's (editable endpoints only)",
        )  # fmt: skip
    url = checked_url(url.strip() or None, keep=current.base_url if current else None) or ""
    if preset == SESSION_MODEL:
        if not model.strip():
            return None
        preset = session.preset  # a model name alone: another model of the session's provider
    base = current if current and current.preset == preset else session
    same = base.preset == preset
    return dataclasses.replace(
        base if same else ProviderChoice(preset),
        preset=preset,
        model=model.strip(),
        # an empty URL: the session's endpoint when it is the same provider, else the preset's
        base_url=(url.strip() or (base.base_url if same else None))
        if catalog.preset(preset).url_editable
        else None,
        api_key=base.api_key if same else None,
        maintenance_model=None,
        temperature=session.temperature,
        max_tokens=session.max_tokens,
        short_upkeep=session.short_upkeep,
        share_identical=session.share_identical,
    )


def provider_form(config: AppConfig) -> ProviderChoice:
    """The provider part of the settings form."""
    choice = config.provider
    st.subheader("Model")
    names = list(catalog.PRESETS)
    preset_name = st.selectbox(
        "Provider",
        names,
        index=names.index(choice.preset),
        format_func=lambda n: catalog.preset(n).label,
    )
    preset = catalog.preset(preset_name)
    st.caption(preset.description)
    models = [m.name for m in preset.models]
    model_default = choice.model if choice.preset == preset_name else preset.default_model
    model = st.text_input(
        "Model", model_default or "", help="Known: " + (", ".join(models) or "name yours")
    )
    base_url = choice.base_url if choice.preset == preset_name else None
    if preset.url_editable and endpoints.urls_editable():
        typed = st.text_input("Base URL", base_url or preset.base_url or "") or None
        base_url = checked_url(typed, keep=base_url)
    key = choice.api_key if choice.preset == preset_name else None
    if preset.key_env or preset.family.needs_base_url:  # every typed endpoint can take a key
        key = (
            st.text_input(
                key_label(preset.key_env),
                value=key or "",
                type="password",
                help="Kept in this browser session's memory only: never shown, logged or saved. "
                "Put a key here, never in the URL.",
            ).strip()
            or None
        )
    temperature = st.slider(
        "Temperature",
        0.0,
        1.5,
        float(choice.temperature),
        0.05,
        help="Not sent to Anthropic's API, which rejects it.",
    )
    max_tokens = int(st.number_input("Max reply tokens", 16, 4096, int(choice.max_tokens), 16))
    st.caption(f"Replies stop at {max_tokens} tokens (the FinCoach demo's are about 80).")
    limits = UpkeepLimits()
    short_upkeep = st.checkbox(
        f"Short upkeep calls (summary ≤ {limits.summary}, facts ≤ {limits.extraction} tokens)",
        value=choice.short_upkeep,
        help="Summaries and fact extraction read the new turn plus the current summary or "
        "facts; this caps what they may write. Off: as long as a reply. Fact extraction asks "
        "for JSON of one shape: the embedded model is held to it by a grammar and stops at "
        "its closing brace; OpenAI gets JSON mode; other endpoints rely on the prompt.",
    )
    share_identical = st.checkbox(
        "Send identical requests once",
        value=choice.share_identical,
        help="At temperature 0 a reply depends on the request alone. Lanes whose memories "
        "build the same request (early turns: most strategies still keep everything) share "
        "one call: its payload shows the lanes it answered, and each lane still counts the "
        "tokens and cost as its own. Off, or at any other temperature: every lane sends its own.",
    )
    prompt_cache = choice.prompt_cache
    if preset.family.prompt_cache:
        prompt_cache = st.checkbox(
            "Reuse cached prompts",
            value=choice.prompt_cache,
            help="Embedded model: much faster once the conversation is long; at temperature 0 the "
            "replies are then not bit-for-bit reproducible (the Fact survival page turns it off). "
            "Anthropic: cache breakpoints are sent; cached input is shown apart and costs less.",
        )
    maint = st.text_input(
        "Maintenance model (summaries, extraction)",
        choice.maintenance_model or "",
        placeholder="same as the conversation",
        help="A cheaper model of the same provider for upkeep calls (seed 004's advice).",
    )
    return ProviderChoice(
        preset_name,
        model=model,
        base_url=base_url,
        api_key=key,
        temperature=temperature,
        max_tokens=max_tokens,
        maintenance_model=maint or None,
        prompt_cache=prompt_cache,
        short_upkeep=short_upkeep,
        share_identical=share_identical,
    )


def key_label(env: str | None) -> str:
    """'API key (found in OPENAI_API_KEY)', '… (or set …)', or optional for keyless endpoints."""
    if env is None:
        return "API key (optional: only if the endpoint needs one)"
    found = bool(os.environ.get(env) or secret(env))
    return f"API key ({'found in ' + env if found else 'or set ' + env})"
