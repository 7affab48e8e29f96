"""Issue 10 #10: a partly damaged database file is explained on the Sessions page, never a
traceback."""

from __future__ import annotations

import os
from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.storage.test_data_safety import damage
from tests.ui.conftest import ROOT


def test_the_sessions_page_explains_a_damaged_store():
    damage(Path(os.environ["MEMORY_LAB_DB_URL"].removeprefix("sqlite:///")))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page("pages/3_Sessions.py").run()
    assert not at.exception, at.exception
    assert any("session store" in e.value for e in at.error), [e.value for e in at.error]
