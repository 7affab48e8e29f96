"""Strategies from outside the lab, on the pages: where each loaded one came from, the
framework lanes whose package is missing (and how to add it), files that could not be
loaded, and the one-click "framework defaults" lane set — each framework's default
configuration beside the lab's best built-in — for any strategy picker.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import streamlit as st

from memory.registry import REGISTRY
from plugins import loading
from ui.safe import plain

# the lab's built-in the framework defaults are set against: its production shape (seed 004)
BEST_BUILTIN = "hybrid"


def load() -> None:
    """Register every strategy from outside the lab (once per process; never raises)."""
    loading.load_all()


def framework_names() -> list[str]:
    """The registered framework lanes, in the order plugins/frameworks lists them."""
    from plugins.frameworks import LANES

    found = loading.origins()
    return [lane.cls.name for lane in LANES if lane.cls.name in found]


def framework_defaults() -> list[str]:
    """The framework-defaults lane set: every installed framework lane, then the lab's best."""
    return [*framework_names(), BEST_BUILTIN]


def defaults_button(key: str, options: Mapping[str, Any], name_of: Callable[[str], str]) -> None:
    """A "Framework defaults" button that sets the picker `key` to the framework set: each
    option whose strategy name (`name_of(option)`) is in it, at its defaults."""
    wanted = framework_defaults()
    if len(wanted) <= 1:
        return
    picks = [k for k in options if name_of(k) in wanted and _at_defaults(k, name_of(k))]
    st.button(
        "Framework defaults",
        key=f"{key}-framework-defaults",
        help="Every framework's memory at its documented defaults, beside the lab's "
        f"{BEST_BUILTIN}: is your framework's default losing your users' facts?",
        on_click=lambda: st.session_state.__setitem__(key, picks),
    )


def _at_defaults(option: str, name: str) -> bool:
    return option in (name, REGISTRY[name].label())


def sidebar_defaults_button() -> list[str] | None:
    """The main page's one-click set (outside the settings form, so it applies at once): the
    strategy names to run as lanes when it is clicked, else None."""
    wanted = framework_defaults()
    if len(wanted) <= 1:
        return None
    clicked = st.button(
        "Framework defaults lane set",
        help="One lane per framework memory at its documented defaults, and the lab's "
        f"{BEST_BUILTIN}: starts a new conversation",
        width="stretch",
    )
    return wanted if clicked else None


def caption_missing() -> None:
    """One caption naming the framework lanes that are not installed, if any."""
    missing = loading.unavailable()
    if missing:
        names = ", ".join(sorted(missing))
        st.caption(plain(f"Not installed: {names} — pip install 'memory-lab[frameworks]'."))


def draw_sources(names: Iterable[str] | None = None) -> None:
    """Where the loaded strategies came from, what they break, what could not be loaded."""
    found = loading.origins()
    problems = loading.problems()
    missing = loading.unavailable()
    if not (found or problems or missing):
        return
    with st.expander("Strategies from outside the lab"):
        st.caption(
            plain(
                "Loaded at start: framework lanes, installed packages (entry point "
                f"{loading.ENTRY_POINT_GROUP}) and files named in {loading.FILES_VARIABLE}. "
                "Code is never uploaded through the browser."
            )
        )
        for origin in found.values():
            if names is not None and origin.name not in names:
                continue
            line = f"{origin.name}: {origin.source}"
            if origin.broken:
                line += f" — breaks: {', '.join(origin.broken)}"
            elif origin.known_flaws:
                line += f" — by design breaks: {', '.join(origin.known_flaws)}"
            st.markdown(plain(line))
        for name, why in sorted(missing.items()):
            st.markdown(plain(f"{name}: not available, {why}"))
        for problem in problems:
            st.error(plain(problem))
