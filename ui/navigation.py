"""The app's pages, titled, in order: `app.py` runs `run()`.

The main page is named for what it does. No Material icons: they are fetched online. A page
whose file is missing (a branch without it) is left out rather than crashing the app.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from providers.redaction import mask_logs
from ui import strategy_sources

ROOT = Path(__file__).resolve().parents[1]
MAIN_PAGE = "pages/0_Compare_strategies.py"

# (file relative to app.py, title, URL path); the first is the default page
PAGES: tuple[tuple[str, str, str], ...] = (
    (MAIN_PAGE, "Compare strategies", "compare"),
    ("pages/1_Fact_survival.py", "Fact survival", "Fact_survival"),
    ("pages/2_Token_growth.py", "Token growth", "Token_growth"),
    ("pages/3_Sessions.py", "Sessions", "Sessions"),
    ("pages/4_Long_recall.py", "Long recall", "Long_recall"),
    ("pages/5_Sweeps.py", "Sweeps", "Sweeps"),
    ("pages/6_Tune.py", "Auto-tune", "Tune"),
    ("pages/7_Composer.py", "Composer", "Composer"),
)

# The modes a page can be in besides its plain view: mode -> (its page, the session-state key
# that switches it on). Every page is drawn in every mode by the hostile-text walk
# (tests/ui/test_untrusted_text.py): a new mode registered here is walked too.
MODES: dict[str, tuple[str, str]] = {
    "presentation": (MAIN_PAGE, "presentation"),
    "payloads": ("pages/3_Sessions.py", "sessions_payloads"),
}


def listed() -> list[tuple[str, str, str]]:
    """The entries of PAGES whose files exist, in order."""
    return [entry for entry in PAGES if (ROOT / entry[0]).is_file()]


def pages() -> list[st.Page]:
    """The pages whose files exist, in order, titled; none with an icon."""
    return [
        st.Page(path, title=title, url_path=url, default=path == MAIN_PAGE)
        for path, title, url in listed()
    ]


def run() -> None:
    """Draw the navigation and run the chosen page."""
    mask_logs()  # every log line of the server process, any library's, masked
    st.navigation(pages()).run()


def page_config(title: str, icon: str) -> None:
    """Every page's first call: its tab title and icon, wide layout.

    A page opened by its URL as the first visit after the server starts is run by Streamlit's
    older automatic page list (it sees the `pages/` folder; only a call to `st.navigation`
    switches that off, for the whole server process): app.py is skipped and the list shows
    file names and "app". Such a run, asked for by URL path alone, switches the old list off
    as `st.navigation` does and reruns: app.py runs, and its navigation opens this same page
    by its URL path. Nothing is lost: it is the session's first run. (AppTest turns the old
    list back on before every run and names pages by hash: its runs are left as they are.)"""
    mask_logs()
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    by_url = ctx is not None and bool(
        ctx.pages_manager.intended_page_name and not ctx.pages_manager.intended_page_script_hash
    )
    if PagesManager.uses_pages_directory and by_url:
        PagesManager.uses_pages_directory = False
        st.rerun()
    st.set_page_config(page_title=title, page_icon=icon, layout="wide")
    strategy_sources.load()  # framework lanes, plugins, strategy files (once per process)
