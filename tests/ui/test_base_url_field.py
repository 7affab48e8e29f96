"""The sidebar's Base URL field refuses a URL that is not http(s) (issue 24, class 3): the
error is shown under the form, without the URL's password, and the URL is not used."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.ui.conftest import ROOT

PW = "pw-Secret-77zq"


def custom_provider_chosen() -> AppTest:
    """The main page with "custom" picked as the provider and applied."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    [provider] = [s for s in at.selectbox if s.label == "Provider"]
    provider.select("custom")
    [apply] = [b for b in at.button if b.label.startswith("Apply")]
    apply.click().run()
    return at


def test_the_sidebar_refuses_a_url_that_is_not_http(fake_transport):
    at = custom_provider_chosen()
    [url] = [t for t in at.text_input if t.label == "Base URL"]
    url.input(f"ftp://u:{PW}@lab/v1")
    [apply] = [b for b in at.button if b.label.startswith("Apply")]
    apply.click().run()
    assert not at.exception, at.exception
    errors = " ".join(e.value for e in at.error).replace("\\", "")  # drawn escaped
    assert "http:// or https://" in errors and PW not in errors
    assert "ftp" not in str(at.session_state["config"].provider.base_url)


def test_a_server_with_fixed_endpoints_shows_no_url_fields(fake_transport, monkeypatch):
    monkeypatch.setenv("MEMORY_LAB_FIXED_ENDPOINTS", "1")
    at = custom_provider_chosen()
    assert not at.exception, at.exception
    assert not [t for t in at.text_input if "URL" in t.label]
