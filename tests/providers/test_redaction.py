"""One redaction module (providers/redaction.py): known secrets go, ordinary text stays
byte-for-byte; URLs lose credentials; keys are stripped and checked; loopback traffic never
goes through a proxy (issue 10 #2, #5, #6, #8)."""

from __future__ import annotations

import socket

import pytest
from hypothesis import given
from hypothesis import strategies as st

import providers
from memory.types import Message, Request, TokenCount
from providers import AuthError, ProviderSettings, clear_clients
from providers.errors import scrub
from providers.redaction import REDACTED, redact, safe_url, secrets_of
from providers.sdk_errors import map_error
from tests.providers.conftest import TEST_KEY

KEYS = (
    "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789",
    "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123",
    "gsk_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH",
    "xai-abcdefghijklmnopqrstuvwxyz0123",
)


@pytest.mark.parametrize("key", KEYS)
def test_key_shaped_tokens_are_redacted_wherever_they_stand(key):
    for text in (key, f"key: {key}.", f'{{"k":"{key}"}}', f"Authorization: Bearer {key}"):
        assert key not in redact(text) and REDACTED in redact(text)


def test_ordinary_words_that_contain_key_prefixes_are_left_alone(monkeypatch):
    monkeypatch.setenv("PIP_KEYRING_PROVIDER", "subprocess")
    monkeypatch.setenv("SOME_TOKEN_NAME", "framework-for-2025")
    text = "risk-management-framework-for-2025 subprocess.run task-force-alpha-beta-gamma-delta"
    assert redact(text, secrets_of(providers.preset("openai").settings("gpt-4o-mini"))) == text


def test_the_provider_key_variable_and_typed_keys_are_secrets(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "plainsecretvalue123")
    settings = providers.preset("openai").settings("gpt-4o-mini", api_key="typed-secret-99")
    found = secrets_of(settings)
    assert {"plainsecretvalue123", "typed-secret-99"} <= found
    assert redact("a plainsecretvalue123 b typed-secret-99", found) == f"a {REDACTED} b {REDACTED}"


def test_error_messages_use_the_same_rules():
    assert scrub("echo: gsk_abcdefghijklmnopqrst and risk-management-framework-2025") == (
        "echo: **** and risk-management-framework-2025"
    )


_plain = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200)


@given(_plain)
def test_text_without_a_standalone_key_is_never_rewritten(text):
    # a property: nothing but a key-shaped token (or a given secret) is ever touched
    if any(m in text for m in ("sk-", "gsk_", "xai-", "hf_", "AIza", "earer", "EARER", '":')):
        return
    assert redact(text) == text


@given(_plain, _plain, st.sampled_from(KEYS))
def test_a_key_between_any_words_is_always_redacted(before, after, key):
    assert key not in redact(f"{before} {key} {after}")


def test_urls_lose_userinfo_and_secret_parameters_only():
    url = "https://user:pa55@llm.example.com:8443/v1?api_key=abc&model=x&token=t&sig=s"
    assert safe_url(url) == "https://llm.example.com:8443/v1?model=x"
    assert safe_url("http://127.0.0.1:8080/v1") == "http://127.0.0.1:8080/v1"
    settings = ProviderSettings("openai_compatible", "m", base_url=url)
    assert "pa55" not in repr(settings) and "pa55" not in str(settings.public_dict())
    assert settings.base_url == url  # the request itself still goes where the user said


def test_errors_never_show_url_credentials():
    settings = ProviderSettings("openai_compatible", "m", base_url="http://u:pw@127.0.0.1:9/v1")
    err = map_error(ConnectionRefusedError("refused"), settings, url=settings.base_url)
    assert "pw" not in str(err) and "127.0.0.1:9" in str(err)


def test_a_pasted_key_is_stripped_and_a_broken_one_explained(monkeypatch):
    settings = ProviderSettings("openai", "gpt-4o-mini", api_key="  sk-typed-key-123456789 \n")
    assert settings.resolve_key() == "sk-typed-key-123456789"
    with pytest.raises(ValueError, match="space or line break at character 7") as err:
        ProviderSettings("openai", "gpt-4o-mini", api_key="sk-abc def")
    assert "def" not in str(err.value)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-key\u200b-123")
    with pytest.raises(AuthError, match="OPENAI_API_KEY contains a character"):
        ProviderSettings("openai", "gpt-4o-mini").resolve_key()


def test_loopback_traffic_ignores_http_proxy(fake, monkeypatch):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "all_proxy"):
        monkeypatch.setenv(name, f"http://127.0.0.1:{dead}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    clear_clients()
    settings = ProviderSettings(
        "openai_compatible", "ok", base_url=fake.url + "/v1", api_key=TEST_KEY, max_retries=0
    )
    request = Request(
        system="s", messages=(Message("user", "hi"),), tokens=TokenCount(0, 0, "o200k_base", True)
    )
    reply = providers.stream(request, settings)
    assert reply.error is None and reply.text == "Hello from the fake server."
    assert len(fake.requests) == 1  # it reached the server itself
