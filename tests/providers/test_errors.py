"""SDK exceptions onto the error tree, for shapes the fake endpoint does not produce."""

from __future__ import annotations

import anthropic
import httpx2
import openai
import pytest

from providers import (
    AuthError,
    ContextLengthExceeded,
    ProviderError,
    ProviderSettings,
    RateLimited,
    ServerError,
    Timeout,
)
from providers.errors import scrub, short_detail
from providers.sdk_errors import map_error

URL = "http://127.0.0.1:8000/v1"
SETTINGS = ProviderSettings("openai_compatible", "local-model", base_url=URL, context_window=4096)


def openai_status(status: int, body: object, headers: dict[str, str] | None = None) -> Exception:
    response = httpx2.Response(
        status, headers=headers or {}, request=httpx2.Request("POST", URL + "/chat/completions")
    )
    client = openai.OpenAI(api_key="k", base_url=URL)
    return client._make_status_error("boom", body=body, response=response)


def anthropic_status(status: int, body: object) -> Exception:
    response = httpx2.Response(status, request=httpx2.Request("POST", "http://x/v1/messages"))
    client = anthropic.Anthropic(api_key="k", base_url="http://x")
    return client._make_status_error("boom", body=body, response=response)


def test_vllm_context_message_gives_both_counts():
    exc = openai_status(
        400,
        {
            "error": {
                "message": "This model's maximum context length is 4096 tokens. However, you "
                "requested 5000 tokens (4744 in the messages, 256 in the completion).",
                "type": "BadRequestError",
                "code": 400,
            }
        },
    )
    err = map_error(exc, SETTINGS, url=URL)
    assert isinstance(err, ContextLengthExceeded)
    assert (err.prompt_tokens, err.context_window) == (4744, 4096)


def test_llama_cpp_context_error_fields():
    exc = openai_status(
        400,
        {
            "error": {
                "code": 400,
                "message": "request (2300 tokens) exceeds the available context size (2048 "
                "tokens), try increasing it",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": 2300,
                "n_ctx": 2048,
            }
        },
    )
    err = map_error(exc, SETTINGS, url=URL)
    assert isinstance(err, ContextLengthExceeded)
    assert (err.prompt_tokens, err.context_window) == (2300, 2048)
    assert "2,300 prompt tokens vs a context window of 2,048" in str(err)


def test_context_error_without_counts_falls_back_to_the_known_window():
    exc = anthropic_status(
        400,
        {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": "prompt is too long"},
        },
    )
    err = map_error(exc, SETTINGS, url=URL)
    assert isinstance(err, ContextLengthExceeded)
    assert err.prompt_tokens is None and err.context_window == 4096


def test_permission_denied_is_an_auth_error():
    exc = anthropic_status(
        403, {"type": "error", "error": {"type": "permission_error", "message": "no access"}}
    )
    settings = ProviderSettings("anthropic", "claude-opus-4-5")
    err = map_error(exc, settings, url=None)
    assert isinstance(err, AuthError) and "set ANTHROPIC_API_KEY" in str(err)


@pytest.mark.parametrize(("status", "retryable"), [(500, False), (503, True), (529, True)])
def test_server_errors_and_which_are_retried(status, retryable):
    exc = anthropic_status(
        status, {"type": "error", "error": {"type": "api_error", "message": "x"}}
    )
    err = map_error(exc, SETTINGS, url=URL)
    assert isinstance(err, ServerError) and err.retryable is retryable


def test_retry_after_header_is_read():
    exc = openai_status(429, {"error": {"message": "slow down"}}, {"retry-after-ms": "1500"})
    err = map_error(exc, SETTINGS, url=URL)
    assert isinstance(err, RateLimited) and err.retry_after == 1.5 and err.retryable


def test_timeouts_and_unknown_failures():
    request = httpx2.Request("POST", URL)
    assert isinstance(map_error(openai.APITimeoutError(request), SETTINGS, url=URL), Timeout)
    err = map_error(RuntimeError("strange sk-abcdefghijklmnop"), SETTINGS, url=URL)
    assert type(err) is ProviderError and "RuntimeError" in str(err)
    assert "abcdefghijklmnop" not in str(err)


def test_scrub_and_short_detail():
    assert scrub("key=secret-value-123 here", ("secret-value-123",)) == "key=**** here"
    assert scrub("Incorrect API key provided: gsk_abcdefgh12345678") == (
        "Incorrect API key provided: ****"
    )
    assert short_detail("") is None
    assert len(short_detail("x " * 400) or "") <= 300
