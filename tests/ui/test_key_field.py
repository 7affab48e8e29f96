"""Issue 10 #5: every OpenAI-compatible preset, Custom URL included, has a key field, so a
credential never has to go into the URL."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.ui.conftest import ROOT


@pytest.mark.parametrize("preset", ["custom", "ollama", "groq"])
def test_openai_compatible_presets_have_a_key_field(fake_transport, preset):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    [provider] = [s for s in at.selectbox if s.label == "Provider"]
    provider.select(preset)
    [apply] = [b for b in at.button if b.label.startswith("Apply")]
    apply.click().run()  # the settings are a form: they take effect when applied
    assert not at.exception, at.exception
    keys = [t for t in at.text_input if t.label.startswith("API key")]
    assert len(keys) == 1 and keys[0].proto.type == keys[0].proto.PASSWORD, keys
