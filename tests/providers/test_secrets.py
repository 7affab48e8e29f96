"""A planted key must not show up in a body, a reply, a repr, an error or a log line."""

from __future__ import annotations

import json
import logging
import socket

import pytest

from providers import ProviderSettings, as_model_fn, preset, stream
from tests.providers.conftest import make_request, settings_for

PLANTED = "sk-PLANTED-secret-0123456789abcdefXYZ"
REQUEST = make_request(("user", "What is my name?"))


def haystacks(reply, settings) -> list[str]:
    found = [
        json.dumps(reply.body),
        repr(reply),
        json.dumps(reply.public_dict()),
        repr(settings),
        str(settings),
        json.dumps(settings.public_dict()),
        settings.key_hint,
    ]
    if reply.error is not None:
        found += [
            str(reply.error),
            repr(reply.error),
            str(reply.error.detail),
            str(reply.error.args),
        ]
    return found


@pytest.mark.parametrize("family", ["openai", "anthropic"])
@pytest.mark.parametrize(
    "model", ["ok", "fault-401", "fault-429-always", "fault-context", "fault-cut"]
)
def test_explicit_key_never_leaks(fake, caplog, family, model):
    caplog.set_level(logging.DEBUG)
    settings = settings_for(fake, family, model, api_key=PLANTED, max_retries=1)
    reply = stream(REQUEST, settings)
    assert (reply.error is None) == (model == "ok")
    received = fake.requests[0]
    assert PLANTED in json.dumps(received.headers)  # it was sent, in a header
    assert PLANTED not in received.raw.decode()
    for text in haystacks(reply, settings):
        assert PLANTED not in text
    assert PLANTED not in caplog.text
    assert "****" in repr(settings)


def test_key_echoed_by_the_server_is_masked_in_the_error(fake):
    reply = stream(REQUEST, settings_for(fake, "openai", "fault-401", api_key=PLANTED))
    assert reply.error is not None and reply.error.detail is not None
    assert "Incorrect API key provided" in reply.error.detail
    assert PLANTED not in reply.error.detail


def test_key_from_the_environment_never_leaks(fake, caplog, monkeypatch):
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("PLANTED_KEY_ENV", PLANTED)
    settings = settings_for(fake, "openai", "fault-401", api_key=None, key_env="PLANTED_KEY_ENV")
    reply = stream(REQUEST, settings)
    assert fake.requests[0].headers["authorization"] == f"Bearer {PLANTED}"
    for text in haystacks(reply, settings):
        assert PLANTED not in text
    assert PLANTED not in caplog.text
    assert settings.key_hint.endswith("(PLANTED_KEY_ENV)")


def test_model_fn_errors_do_not_carry_the_key(fake, caplog):
    caplog.set_level(logging.DEBUG)
    fn = as_model_fn(settings_for(fake, "anthropic", "fault-401", api_key=PLANTED))
    with pytest.raises(Exception) as info:
        fn(REQUEST)
    assert PLANTED not in str(info.value) and PLANTED not in repr(info.value)
    assert info.value.__cause__ is None  # no SDK exception (holding the request) attached
    assert PLANTED not in caplog.text


def test_unreachable_endpoint_error_does_not_carry_the_key(caplog):
    caplog.set_level(logging.DEBUG)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings = ProviderSettings(
        "openai_compatible", "m", base_url=f"http://127.0.0.1:{port}/v1", api_key=PLANTED
    )
    reply = stream(REQUEST, settings)
    for text in haystacks(reply, settings):
        assert PLANTED not in text
    assert PLANTED not in caplog.text


def test_settings_from_a_preset_hide_the_key():
    settings = preset("openai").settings(api_key=PLANTED)
    assert PLANTED not in repr(settings) and PLANTED not in json.dumps(settings.public_dict())
    assert settings.public_dict()["key_set"] is True
    assert settings.key_hint == "sk-…fXYZ"
