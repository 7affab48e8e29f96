"""Saving the main page's conversations, and opening saved ones again.

The store (storage/store.py) is opened once per database URL behind `st.cache_resource` and is
shared by every browser session: it holds an engine and no conversation, so two browser
sessions never see each other's state. Each Session gets its own tracker, which lives on
that Session (in that browser session's `st.session_state`) and nowhere else.
"""

from __future__ import annotations

import logging
from typing import Any

import streamlit as st

from lanes.session import LaneSpec, Session, UpkeepLimits
from memory.errors import MemoryLabError
from providers.settings import ProviderChoice
from storage.store import SavedSession, Store, StoreError, Tracker, default_url
from ui import navigation
from ui.app_state import AppConfig, LaneChoice, maintenance_settings, saved_choice, settings_for

log = logging.getLogger(__name__)


@st.cache_resource(show_spinner=False)
def _open(url: str) -> Store:
    opened = Store(url)
    try:  # saved compositions run like any strategy in this process (once, at open)
        opened.compositions.register_saved()
    except (StoreError, MemoryLabError) as exc:
        log.warning("saved compositions not registered: %s", exc)
    return opened


def store() -> Store:
    """The session store for this app ($MEMORY_LAB_DB_URL or data/memory_lab.sqlite3)."""
    return _open(default_url())


def app_settings(config: AppConfig) -> dict[str, Any]:
    """The main page's settings as plain data, without the key (saved with each session)."""
    return config.as_saved()


def config_for(saved: SavedSession, current: AppConfig | None = None) -> AppConfig:
    """The AppConfig a saved session ran with. A key typed in this browser session is kept
    when the provider is the same (keys are never saved)."""
    app = saved.settings.get("app") or {}
    base = current or AppConfig.default()
    provider = saved_choice(app, saved.settings.get("provider"), base.provider)
    own = {
        str(lane.get("label") or lane.get("strategy")): lane.get("provider")
        for lane in app.get("lanes") or ()
        if isinstance(lane, dict)
    }
    lanes = tuple(
        LaneChoice(
            saved.strategy(name),
            saved.params(name),
            _lane_choice(own.get(name), saved.memory.get(name, {}).get("provider"), base),
        )
        for name in saved.strategies
    )
    return base.replace(provider=provider, system_prompt=saved.system_prompt, lanes=lanes)


def _lane_choice(app: Any, public: Any, base: AppConfig) -> ProviderChoice | None:
    """A lane's own provider choice as saved (None: the session's); a key typed in this
    browser session for that preset (on a lane, or the session) is kept."""
    if not app and not public:
        return None
    current = next(
        (lane.provider for lane in base.lanes if lane.provider and lane.provider.api_key),
        base.provider,
    )
    return saved_choice({"provider": app} if app else {}, public, current)


def lane_specs(config: AppConfig) -> list[LaneSpec]:
    """The configured lanes as the Session takes them: labels, and each own provider's call
    settings (its key looked up like the session's)."""
    return [
        LaneSpec(lane.strategy, lane.params, settings_for(lane.provider), label)
        if lane.provider
        else LaneSpec(lane.strategy, lane.params, label=label)
        for lane, label in zip(config.lanes, config.labels(), strict=True)
    ]


def lane_choices(config: AppConfig, session: Session) -> dict[str, LaneChoice]:
    """The session's lanes by label, each with the LaneChoice it runs (a lane the config does
    not list, e.g. a replayed session's, gets its strategy on the session's provider)."""
    try:
        known = config.lane_by_label()
    except ValueError:
        known = {}
    return {
        label: known.get(label) or LaneChoice(lane.strategy_name, lane.params)
        for label, lane in session.lanes.items()
    }


def new_session(config: AppConfig) -> Session:
    """A fresh conversation with the configured lanes, saved turn by turn."""
    session = Session(
        system_prompt=config.system_prompt,
        lanes=lane_specs(config),
        provider=settings_for(config.provider),
        maintenance=maintenance_settings(config.provider),
        upkeep=UpkeepLimits() if config.provider.short_upkeep else None,
        share=config.provider.share_identical,
    )
    attach(session, config)
    return session


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
    session = Session.from_snapshot(
        saved.snapshot(),
        provider=settings_for(config.provider),
        maintenance=maintenance_settings(config.provider),
        lane_providers={s.label: s.provider for s in lane_specs(config) if s.label and s.provider},
        upkeep=UpkeepLimits() if config.provider.short_upkeep else None,
        share=config.provider.share_identical,
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
    st.switch_page(navigation.MAIN_PAGE)


__all__ = [
    "StoreError",
    "app_settings",
    "attach",
    "config_for",
    "continue_saved",
    "new_session",
    "open_in_main",
    "status",
    "store",
]
