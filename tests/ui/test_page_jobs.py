"""A page whose background job this process no longer has (the app restarted) says so, forgets
the job and lets the user run again, on every page that picks jobs up through ui/page_jobs.py."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.ui.conftest import ROOT, shown

PAGES_AND_KEYS = [
    ("pages/1_Fact_survival.py", "survival_job"),
    ("pages/6_Tune.py", "tune_job"),
    ("pages/3_Sessions.py", "sessions_job"),
]


@pytest.mark.parametrize(("page", "key"), PAGES_AND_KEYS)
def test_a_job_the_app_no_longer_has_is_reported_lost_and_forgotten(page, key):
    at = AppTest.from_file(str(ROOT / page), default_timeout=120)
    at.session_state[key] = "a-job-from-before-a-restart"
    at.run()
    assert not at.exception, at.exception
    assert at.session_state[key] is None
    assert any("was lost (the app restarted): run it again" in shown(e.value) for e in at.error)
