"""Saving the main page's conversations, and opening saved ones again.

The store (storage/store.py) is opened once per database URL behind `st.cache_resource` and is
shared by every browser session: it holds an engine and no conversation, so two browser
sessions never see each other's state. Each Session gets its own tracker, which lives on
that Session (in that browser session's `st.session_state`) and nowhere else.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import streamlit as st

from lanes.session import Session
from providers import catalog
from storage.store import SavedSession, Store, StoreError, Tracker, default_url
from ui.app_state import AppConfig, LaneChoice, ProviderChoice, settings_for

log = logging.getLogger(__name__)


@st.cache_resource(show_spinner=False)
def _open(url: str) -> Store:
    return Store(url)


def store() -> Store:
    """The session store for this app ($MEMORY_LAB_DB_URL or data/memory_lab.sqlite3)."""
    return _open(default_url())


def app_settings(config: AppConfig) -> dict[str, Any]:
    """The main page's settings as plain data, without the key (saved with each session)."""
    p = config.provider
    return {
        "provider": {
            "preset": p.preset,
            "model": p.model,
            "base_url": p.base_url,
            "temperature": p.temperature,
            "max_tokens": p.max_tokens,
            "maintenance_model": p.maintenance_model,
            "prompt_cache": p.prompt_cache,
        },
        "system_prompt": config.system_prompt,
        "lanes": [
            {"strategy": lane.strategy, "params": dict(lane.params)} for lane in config.lanes
        ],
    }


def config_for(saved: SavedSession, current: AppConfig | None = None) -> AppConfig:
    """The AppConfig a saved session ran with. A key typed in this browser session is kept
    when the provider is the same (keys are never saved)."""
    app = saved.settings.get("app") or {}
    base = current or AppConfig.default()
    provider = base.provider
    p = app.get("provider") or _choice_from(saved.settings.get("provider"))
    if isinstance(p, Mapping) and p.get("preset"):
        same = p["preset"] == base.provider.preset
        provider = ProviderChoice(
            preset=str(p["preset"]),
            model=str(p.get("model") or ""),
            base_url=p.get("base_url"),
            api_key=base.provider.api_key if same else None,
            temperature=float(p.get("temperature") or 0.0),
            max_tokens=int(p.get("max_tokens") or 200),
            maintenance_model=p.get("maintenance_model"),
            prompt_cache=bool(p.get("prompt_cache", True)),
        )
    lanes = tuple(LaneChoice(name, saved.params(name)) for name in saved.strategies)
    return base.replace(provider=provider, system_prompt=saved.system_prompt, lanes=lanes)


def _choice_from(public: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The sidebar's provider choice for saved ProviderSettings (sessions saved without the
    main page's settings: imports, the CLI, tests)."""
    if not public:
        return None
    kind, url = public.get("kind"), public.get("base_url")
    exact = [p for p in catalog.PRESETS.values() if p.kind == kind and p.base_url == url]
    editable = [p for p in catalog.PRESETS.values() if p.kind == kind and p.url_editable]
    chosen = exact[0] if exact else editable[-1] if editable else None
    if chosen is None:
        return None
    return {
        "preset": chosen.name,
        "model": public.get("model"),
        "base_url": url if chosen.url_editable else None,
        "temperature": public.get("temperature"),
        "max_tokens": public.get("max_tokens"),
    }


def attach(session: Session, config: AppConfig | None = None, *, source: str = "main") -> None:
    """Save `session` turn by turn from now on. Never raises: if the database cannot be
    opened the conversation goes on unsaved, and `status` says why."""
    try:
        store().track(session, app=app_settings(config) if config else None, source=source)
    except Exception as exc:  # the page must work without its store
        log.exception("the session store is unavailable")
        session.store_error = f"Not saved: {exc}"  # type: ignore[attr-defined]


def tracker(session: Session) -> Tracker | None:
    for listener in session.listeners:
        if isinstance(listener, Tracker):
            return listener
    return None


def status(session: Session) -> tuple[bool, str]:
    """(ok, a line to show) about saving this conversation."""
    error = getattr(session, "store_error", None)
    found = tracker(session)
    if error or found is None:
        return False, error or "Not saved: this conversation is not attached to the store."
    if found.error:
        return False, f"Saving failed: {found.error}"
    if found.notes:
        return True, found.notes[-1]
    if not session.turn:
        return True, "Turns are saved as they complete (Sessions page)."
    return True, f"Saved as it runs · {session.turn} turns · id {session.id}"


def continue_saved(session_id: str, current: AppConfig | None = None) -> tuple[Session, AppConfig]:
    """A saved session restored as a live one (no model call), attached to the store, with
    the settings it ran with."""
    saved = store().load(session_id)
    config = config_for(saved, current)
    choice = config.provider
    maintenance = (
        settings_for(choice, choice.maintenance_model) if choice.maintenance_model else None
    )
    session = Session.from_snapshot(
        saved.snapshot(), provider=settings_for(choice), maintenance=maintenance
    )
    attach(session, config, source=saved.info.source)
    return session, config


def open_in_main(session: Session, config: AppConfig, *, present: bool = False) -> None:
    """Make `session` this browser session's conversation and go to the main page."""
    st.session_state["session"] = session
    st.session_state["config"] = config
    st.session_state["demo_queue"] = []
    st.session_state["presentation"] = present
    st.session_state[f"present-turn-{session.id}"] = 1
    st.switch_page("app.py")


__all__ = [
    "StoreError",
    "app_settings",
    "attach",
    "config_for",
    "continue_saved",
    "open_in_main",
    "status",
    "store",
]
