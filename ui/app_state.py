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
from dataclasses import dataclass
from typing import Any

import streamlit as st

import providers
from lanes import endpoint_policy
from memory.lane_spec import LaneSpec, lane_labels
from memory.registry import DEFAULT_LANES, REGISTRY
from providers import catalog
from providers.catalog import Price
from providers.redaction import safe_url
from providers.settings import ProviderChoice
from scenarios import fincoach

GENERIC_PROMPT = "You are a helpful, concise assistant. Use what the user told you earlier."

__all__ = [
    "GENERIC_PROMPT",
    "AppConfig",
    "ProviderChoice",
    "add_lane",
    "keyed_settings",
]


def saved_lane(lane: LaneSpec[ProviderChoice], label: str) -> dict[str, Any]:
    """A sidebar lane as saved with a session: strategy, params, label and its own provider
    (no key; a URL without user:password@ or ?key=)."""
    data = {"strategy": lane.name, "params": dict(lane.params), "label": label}
    if lane.provider is None:
        return data
    own = lane.provider.as_saved()
    return {**data, "provider": {**own, "base_url": safe_url(own.get("base_url"))}}


def _named(lane: LaneSpec[ProviderChoice]) -> LaneSpec[ProviderChoice]:
    """The lane with its own provider's model named (a blank model is its preset's default)."""
    p = lane.provider
    if p is None or p.model:
        return lane
    return dataclasses.replace(lane, provider=dataclasses.replace(p, model=model_name(p)))


def model_name(choice: ProviderChoice) -> str:
    """The model a choice calls: its own, else its preset's default."""
    return choice.model or catalog.preset(choice.preset).default_model or ""


@dataclass(frozen=True)
class AppConfig:
    """Everything the sidebar sets."""

    provider: ProviderChoice = ProviderChoice()
    system_prompt: str = fincoach.SYSTEM_PROMPT
    lanes: tuple[LaneSpec[ProviderChoice], ...] = tuple(
        LaneSpec(n, REGISTRY[n].defaults()) for n in DEFAULT_LANES
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

    def labels(self) -> list[str]:
        """Each lane's label, in order (ValueError when two lanes would be identical)."""
        return lane_labels([_named(lane) for lane in self.lanes])

    def lane_price(self, lane: LaneSpec[ProviderChoice] | None) -> Price | None:
        """The price of a lane's model (its own, else the session's), if the catalog has one."""
        choice = lane.provider if lane is not None and lane.provider else self.provider
        info = catalog.preset(choice.preset).model(model_name(choice))
        return info.price if info else None

    def lane_window(self, lane: LaneSpec[ProviderChoice] | None) -> int | None:
        """The context window of a lane's model, if the catalog knows it."""
        choice = lane.provider if lane is not None and lane.provider else self.provider
        info = catalog.preset(choice.preset).model(model_name(choice))
        return info.context_window if info else None

    def lane_by_label(self) -> dict[str, LaneSpec[ProviderChoice]]:
        return dict(zip(self.labels(), self.lanes, strict=True))

    def provider_caption(self) -> str:
        preset = catalog.preset(self.provider.preset)
        return f"{preset.label} · {self.provider.model}"

    def as_saved(self) -> dict[str, Any]:
        """The settings as plain data, without the key (saved with each session)."""
        return {
            "provider": self.provider.as_saved(),
            "system_prompt": self.system_prompt,
            "lanes": [
                saved_lane(lane, label)
                for lane, label in zip(self.lanes, self.labels(), strict=True)
            ],
        }

    def with_lane(self, lane: LaneSpec[ProviderChoice]) -> tuple[AppConfig, str]:
        """This config with `lane` added (unless an identical lane is there), and its label."""
        for existing, label in zip(self.lanes, self.labels(), strict=True):
            if _named(existing).same_lane(_named(lane)):
                return self, label
        config = self.replace(lanes=(*self.lanes, lane))
        return config, config.labels()[-1]


def main_config() -> AppConfig:
    """The main page's settings (its model and lanes), or the defaults if it was not opened."""
    config = st.session_state.get("config")
    return config if isinstance(config, AppConfig) else AppConfig.default()


def add_lane(choice: LaneSpec, provider: ProviderChoice | None = None) -> str:
    """Add a lane running `choice` (on `provider`, else the session's) to the main page's
    lanes and return its label; the main page starts a new conversation with it. A lane
    identical to one already there is not added twice (its label is returned)."""
    config: AppConfig = st.session_state.get("config") or AppConfig.default()
    params = {**REGISTRY[choice.name].defaults(), **dict(choice.params)}
    new, label = config.with_lane(LaneSpec(choice.name, params, provider=provider))
    if new is not config:
        st.session_state["config"] = new
        st.session_state["session"] = None
        st.session_state["demo_queue"] = []
    return label


def saved_named(app: Mapping[str, Any], public: Mapping[str, Any] | None) -> ProviderChoice | None:
    """The provider choice a session was saved with (its app settings, else its public
    ProviderSettings), without any key; None when it names none this app knows."""
    p = app.get("provider")
    try:
        if isinstance(p, Mapping) and p.get("preset"):
            return ProviderChoice.from_saved(p)
        return catalog.choice_for(public)
    except (TypeError, ValueError):  # a damaged file names nothing
        return None


def saved_choice(
    app: Mapping[str, Any], public: Mapping[str, Any] | None, current: ProviderChoice
) -> ProviderChoice:
    """What a saved session's provider runs on now: the `current` (typed) choice, unless the
    file names that very endpoint (lanes/endpoint_policy.py decides; a file never does)."""
    return endpoint_policy.follow(saved_named(app, public), current).runs


def keyed_settings(choice: ProviderChoice, model: str | None = None) -> providers.ProviderSettings:
    """ProviderSettings for the choice; the key: typed in, else secrets, else env."""
    return catalog.settings_for(
        choice, model, api_key=secret(catalog.preset(choice.preset).key_env)
    )


def maintenance_settings(choice: ProviderChoice) -> providers.ProviderSettings | None:
    """Settings for upkeep calls when a separate maintenance model is chosen, else None."""
    return keyed_settings(choice, choice.maintenance_model) if choice.maintenance_model else None


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
