"""Saving the main page's conversations, and opening saved ones again.

The store (storage/store.py) is opened once per database URL behind `st.cache_resource` and is
shared by every browser session: it holds an engine and no conversation, so two browser
sessions never see each other's state. Each Session gets its own tracker, which lives on
that Session (in that browser session's `st.session_state`) and nowhere else.
"""

from __future__ import annotations

import logging
import weakref
from typing import Any

import streamlit as st

from engines import sessions
from engines.sessions import RunOptions
from lanes import endpoint_policy
from lanes.session import Session, UpkeepLimits
from memory.errors import MemoryLabError
from memory.lane_spec import LaneSpec
from providers import catalog
from providers.settings import ProviderChoice, ProviderSettings
from storage.store import SavedSession, Store, StoreError, Tracker, default_url
from ui import navigation
from ui.app_state import AppConfig, keyed_settings, maintenance_settings, saved_named
from ui.safe import plain

NOTES_KEY = "saved_endpoints"  # (session id, lines): what a continued session's file named

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


def config_for(
    saved: SavedSession, current: AppConfig | None = None, *, adopt: bool = False
) -> AppConfig:
    """The AppConfig to continue a saved session with: its lanes and system prompt, on the
    provider chosen in this browser session (`current`). What the file named is followed
    only where it names the same endpoint (lanes/endpoint_policy.py); `adopt` (the user
    pressed "Use the saved endpoints") takes the file's endpoints, a typed key going only
    to the endpoint it was typed for."""
    base = current or AppConfig.default()
    session_named, lane_named = _named(saved)
    provider = _resolve(session_named, base.provider, adopt=adopt)
    typed = _typed_lane(base)
    lanes = tuple(
        LaneSpec(
            saved.strategy(name),
            saved.params(name),
            provider=None
            if lane_named.get(name) is None
            else _resolve(lane_named[name], typed, adopt=adopt),
        )
        for name in saved.strategies
    )
    return base.replace(provider=provider, system_prompt=saved.system_prompt, lanes=lanes)


def _named(saved: SavedSession) -> tuple[ProviderChoice | None, dict[str, ProviderChoice | None]]:
    """What a saved session names: its provider, and each lane's own (None: the session's)."""
    app = saved.settings.get("app") or {}
    app = app if isinstance(app, dict) else {}
    session = saved_named(app, saved.settings.get("provider"))
    own = {
        str(lane.get("label") or lane.get("strategy")): lane.get("provider")
        for lane in app.get("lanes") or ()
        if isinstance(lane, dict)
    }
    lanes: dict[str, ProviderChoice | None] = {}
    for name in saved.strategies:
        app_lane, public = own.get(name), saved.memory.get(name, {}).get("provider")
        if not app_lane and not public:
            lanes[name] = None
            continue
        named = saved_named({"provider": app_lane} if isinstance(app_lane, dict) else {}, public)
        # a lane that ran on its own model must get a provider, even one the file names badly
        lanes[name] = named or ProviderChoice(preset="?", model=str((public or {}).get("model")))
    return session, lanes


def _typed_lane(base: AppConfig) -> ProviderChoice:
    """The typed choice a lane saved with its own provider compares against: a lane's own
    provider that has a typed key, else the session's."""
    return next(
        (lane.provider for lane in base.lanes if lane.provider and lane.provider.api_key),
        base.provider,
    )


def _resolve(named: ProviderChoice | None, typed: ProviderChoice, *, adopt: bool) -> ProviderChoice:
    if adopt and named is not None and named.preset in catalog.PRESETS:
        return endpoint_policy.adopt(named, typed)
    return endpoint_policy.follow(named, typed).runs


def saved_endpoints(saved: SavedSession, current: AppConfig) -> list[str]:
    """One line per endpoint the file named that is not the one it runs on now (plain text:
    escape it where drawn); empty when the file names nothing else."""
    session_named, lane_named = _named(saved)
    lines = []
    follows: list[tuple[str | None, endpoint_policy.Followed]] = [
        (None, endpoint_policy.follow(session_named, current.provider))
    ]
    typed = _typed_lane(current)
    follows += [
        (name, endpoint_policy.follow(named, typed))
        for name, named in lane_named.items()
        if named is not None
    ]
    for name, followed in follows:
        if followed.differs and followed.named is not None:
            who = f"Lane {name}" if name else "This session"
            lines.append(
                f"{who} was saved on {endpoint_policy.describe(followed.named)}; it runs on "
                f"{endpoint_policy.describe(followed.runs)}, the provider chosen here."
            )
    return lines


def lane_specs(config: AppConfig) -> list[LaneSpec[ProviderSettings]]:
    """The configured lanes as the Session takes them: labels, and each own provider's call
    settings (its key looked up like the session's)."""
    return [
        LaneSpec(
            lane.name,
            lane.params,
            provider=keyed_settings(lane.provider) if lane.provider else None,
            lane_label=label,
        )
        for lane, label in zip(config.lanes, config.labels(), strict=True)
    ]


def lane_choices(config: AppConfig, session: Session) -> dict[str, LaneSpec[ProviderChoice]]:
    """The session's lanes by label, each with the sidebar's spec it runs (a lane the config does
    not list, e.g. a replayed session's, gets its strategy on the session's provider)."""
    try:
        known = config.lane_by_label()
    except ValueError:
        known = {}
    return {
        label: known.get(label) or LaneSpec(lane.strategy_name, lane.params)
        for label, lane in session.lanes.items()
    }


def run_options(config: AppConfig) -> RunOptions:
    """What a session built from `config` runs with besides its lanes: the one place the
    page's provider choice becomes the Session's call settings (new and restored alike)."""
    return RunOptions(
        provider=keyed_settings(config.provider),
        maintenance=maintenance_settings(config.provider),
        upkeep=UpkeepLimits() if config.provider.short_upkeep else None,
        share=config.provider.share_identical,
    )


def new_session(config: AppConfig) -> Session:
    """A fresh conversation with the configured lanes, saved turn by turn."""
    session = sessions.start(config.system_prompt, lane_specs(config), run_options(config))
    attach(session, config)
    return session


# why a session is not saved, when attaching it to the store failed (by session object: the
# reason lives as long as the conversation does, and the lanes layer never hears of it)
_UNSAVED: weakref.WeakKeyDictionary[Session, str] = weakref.WeakKeyDictionary()


def attach(session: Session, config: AppConfig | None = None, *, source: str = "main") -> None:
    """Save `session` turn by turn from now on. Never raises: if the database cannot be
    opened the conversation goes on unsaved, and `status` says why."""
    try:
        store().track(session, app=app_settings(config) if config else None, source=source)
    except Exception as exc:  # the page must work without its store
        log.exception("the session store is unavailable")
        _UNSAVED[session] = f"Not saved: {exc}"
    else:
        _UNSAVED.pop(session, None)


def tracker(session: Session) -> Tracker | None:
    for listener in session.listeners:
        if isinstance(listener, Tracker):
            return listener
    return None


def status(session: Session) -> tuple[bool, str]:
    """(ok, a line to show) about saving this conversation."""
    error = _UNSAVED.get(session)
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


def restore(saved: SavedSession, config: AppConfig) -> Session:
    """A saved session as a live one (no model call) running with `config` (from
    `config_for`: the provider chosen here); not attached to the store."""
    return sessions.resume(
        saved,
        run_options(config),
        lane_providers={  # by the saved labels: a lane on another provider keeps its label
            name: keyed_settings(lane.provider)
            for name, lane in zip(saved.strategies, config.lanes, strict=True)
            if lane.provider
        },
    )


def continue_saved(
    session_id: str, current: AppConfig | None = None, *, adopt: bool = False
) -> tuple[Session, AppConfig]:
    """A saved session restored as a live one (no model call), attached to the store, on
    the provider chosen here (`config_for`); what the file named otherwise is noted for
    the main page (`endpoint_notes`)."""
    saved = store().load(session_id)
    config = config_for(saved, current, adopt=adopt)
    notes = [] if adopt else saved_endpoints(saved, current or AppConfig.default())
    st.session_state[NOTES_KEY] = (session_id, tuple(notes))
    session = restore(saved, config)
    attach(session, config, source=saved.info.source)
    return session, config


def endpoint_notice(session: Session, config: AppConfig) -> None:
    """On the main page: what a continued session's file named other than the provider it
    runs on, and the one way to take it — a button."""
    found = st.session_state.get(NOTES_KEY)
    if not found or found[0] != session.id or not found[1]:
        return
    st.warning(plain("\n".join(found[1])))
    if st.button("Use the endpoints this session was saved with", key=f"adopt-{session.id}"):
        try:
            adopted, new_config = continue_saved(session.id, config, adopt=True)
        except Exception as exc:  # a saved endpoint this app cannot call: say so, keep ours
            st.error(plain(f"Cannot use the saved endpoints: {exc}"))
            return
        st.session_state["session"] = adopted
        st.session_state["config"] = new_config
        st.session_state[NOTES_KEY] = None
        st.rerun()


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
    "endpoint_notice",
    "continue_saved",
    "new_session",
    "open_in_main",
    "restore",
    "status",
    "store",
]
