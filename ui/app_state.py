"""The main page's settings as one frozen value, and where a key is looked up.

Only plain data lives in st.session_state: this config (the key is held in memory only, never
shown or saved) and the Session of the current conversation. The provider part is
`providers.ProviderChoice`, converted to call settings by `catalog.settings_for` alone.
The forms are in ui/sidebar.py; saving and opening sessions in ui/persistence.py.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

import providers
from memory.registry import DEFAULT_LANES, REGISTRY
from providers import catalog
from providers.catalog import Price
from providers.settings import ProviderChoice
from scenarios import fincoach

GENERIC_PROMPT = "You are a helpful, concise assistant. Use what the user told you earlier."

__all__ = ["GENERIC_PROMPT", "AppConfig", "LaneChoice", "ProviderChoice", "settings_for"]


@dataclass(frozen=True)
class LaneChoice:
    """A strategy picked in the sidebar, with its parameter values."""

    strategy: str
    params: dict[str, Any] = field(default_factory=dict)


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

    @property
    def price(self) -> Price | None:
        """The chosen model's price, if the catalog lists one."""
        info = self.model_info
        return info.price if info else None

    def provider_caption(self) -> str:
        preset = catalog.preset(self.provider.preset)
        return f"{preset.label} · {self.provider.model}"

    def as_saved(self) -> dict[str, Any]:
        """The settings as plain data, without the key (saved with each session)."""
        return {
            "provider": self.provider.as_saved(),
            "system_prompt": self.system_prompt,
            "lanes": [
                {"strategy": lane.strategy, "params": dict(lane.params)} for lane in self.lanes
            ],
        }


def saved_choice(
    app: Mapping[str, Any], public: Mapping[str, Any] | None, current: ProviderChoice
) -> ProviderChoice:
    """The provider choice a session was saved with (its app settings, else its public
    ProviderSettings); the key typed in this browser session is kept for the same preset."""
    p = app.get("provider")
    choice = (
        ProviderChoice.from_saved(p) if isinstance(p, Mapping) and p.get("preset") else None
    ) or catalog.choice_for(public)
    if choice is None:
        return current
    same = choice.preset == current.preset
    return dataclasses.replace(choice, api_key=current.api_key if same else None)


def settings_for(choice: ProviderChoice, model: str | None = None) -> providers.ProviderSettings:
    """ProviderSettings for the choice; the key: typed in, else secrets, else env."""
    return catalog.settings_for(
        choice, model, api_key=secret(catalog.preset(choice.preset).key_env)
    )


def maintenance_settings(choice: ProviderChoice) -> providers.ProviderSettings | None:
    """Settings for upkeep calls when a separate maintenance model is chosen, else None."""
    return settings_for(choice, choice.maintenance_model) if choice.maintenance_model else None


def secret(name: str | None) -> str | None:
    """A key from .streamlit/secrets.toml, when the environment does not already hold it."""
    if not name:
        return None
    if os.environ.get(name):
        return None  # the provider reads the environment itself
    try:
        return str(st.secrets[name]) if name in st.secrets else None
    except Exception:  # no secrets.toml: that is normal
        return None
