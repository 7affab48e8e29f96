"""The main page's settings as one frozen value, and how a Session is made from them.

Only plain data lives in st.session_state: this config (the key is held in memory only, never
shown or saved) and the Session of the current conversation.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

import providers
from lanes.session import LaneSpec, Session, UpkeepLimits
from memory.registry import DEFAULT_LANES, REGISTRY
from providers import catalog
from scenarios import fincoach

GENERIC_PROMPT = "You are a helpful, concise assistant. Use what the user told you earlier."


@dataclass(frozen=True)
class LaneChoice:
    """A strategy picked in the sidebar, with its parameter values."""

    strategy: str
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ProviderChoice:
    """Which endpoint and model answer, and how."""

    preset: str = "embedded"
    model: str = ""
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    temperature: float = 0.0
    max_tokens: int = 80  # seed 000's replies are about 80 tokens: a demo turn stays short
    maintenance_model: str | None = None  # None: the conversation's model
    prompt_cache: bool = True  # embedded model only: fast long conversations
    short_upkeep: bool = True  # upkeep calls capped by UpkeepLimits, not by max_tokens


@dataclass(frozen=True)
class AppConfig:
    """Everything the sidebar sets."""

    provider: ProviderChoice = ProviderChoice()
    system_prompt: str = fincoach.SYSTEM_PROMPT
    lanes: tuple[LaneChoice, ...] = tuple(
        LaneChoice(n, REGISTRY[n].defaults()) for n in DEFAULT_LANES
    )

    @classmethod
    def default(cls) -> AppConfig:
        preset = catalog.preset(catalog.DEFAULT_PRESET)
        return cls(provider=ProviderChoice(preset=preset.name, model=preset.default_model or ""))

    def replace(self, **changes: Any) -> AppConfig:
        return dataclasses.replace(self, **changes)

    def with_system_prompt(self, prompt: str) -> AppConfig:
        return self.replace(system_prompt=prompt)

    @property
    def model_info(self) -> catalog.ModelInfo | None:
        return catalog.preset(self.provider.preset).model(self.provider.model)

    @property
    def context_window(self) -> int | None:
        info = self.model_info
        return info.context_window if info else None

    def provider_caption(self) -> str:
        preset = catalog.preset(self.provider.preset)
        return f"{preset.label} · {self.provider.model}"


def settings_for(choice: ProviderChoice, model: str | None = None) -> providers.ProviderSettings:
    """ProviderSettings for the chosen preset; the key: typed in, else secrets, else env."""
    preset = catalog.preset(choice.preset)
    overrides: dict[str, Any] = {"max_tokens": choice.max_tokens}
    if preset.kind in ("embedded", "anthropic"):  # llama.cpp's cache, Anthropic's prompt cache
        overrides["prompt_cache"] = choice.prompt_cache
    if preset.kind != "anthropic":
        overrides["temperature"] = choice.temperature
    if choice.base_url and preset.url_editable:
        overrides["base_url"] = choice.base_url
    key = choice.api_key or _secret(preset.key_env)
    if key:
        overrides["api_key"] = key
    return preset.settings(model or choice.model, **overrides)


def _secret(name: str | None) -> str | None:
    if not name:
        return None
    if os.environ.get(name):
        return None  # the provider reads the environment itself
    try:
        return str(st.secrets[name]) if name in st.secrets else None
    except Exception:  # no secrets.toml: that is normal
        return None


def new_session(config: AppConfig) -> Session:
    """A fresh conversation with the configured lanes."""
    choice = config.provider
    session = Session(
        system_prompt=config.system_prompt,
        lanes=[LaneSpec(lane.strategy, lane.params) for lane in config.lanes],
        provider=settings_for(choice),
        maintenance=settings_for(choice, choice.maintenance_model)
        if choice.maintenance_model
        else None,
        upkeep=UpkeepLimits() if choice.short_upkeep else None,
    )
    from ui import persistence  # imported here: persistence imports this module

    persistence.attach(session, config)  # every turn is saved as it completes
    return session


def price_for(config: AppConfig) -> tuple[float, float] | None:
    """(input, output) USD per million tokens for the chosen model, if the catalog knows it."""
    info = config.model_info
    if info is None or info.input_per_m is None or info.output_per_m is None:
        return None
    return (info.input_per_m, info.output_per_m)


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
    if preset.url_editable:
        base_url = st.text_input("Base URL", base_url or preset.base_url or "") or None
    key = choice.api_key if choice.preset == preset_name else None
    if preset.key_env or preset.kind == "openai_compatible":  # every OpenAI-style endpoint
        env = preset.key_env
        found = bool(env and (os.environ.get(env) or _secret(env)))
        label = "optional, if the server needs one" if not env else None
        key = (
            st.text_input(
                f"API key ({label or (f'found in {env}' if found else f'or set {env}')})",
                value=key or "",
                type="password",
                help="Kept in this browser session's memory only: never shown, logged or saved.",
            )
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
        "facts; this caps what they may write. Off: as long as a reply.",
    )
    prompt_cache = choice.prompt_cache
    if preset.kind in ("embedded", "anthropic"):
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
        preset=preset_name,
        model=model,
        base_url=base_url,
        api_key=key,
        temperature=temperature,
        max_tokens=max_tokens,
        maintenance_model=maint or None,
        prompt_cache=prompt_cache,
        short_upkeep=short_upkeep,
    )
