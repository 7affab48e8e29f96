"""Turn openai / anthropic SDK exceptions into the provider error tree.

Both SDKs raise a status error carrying the HTTP status and the parsed error body, a
connection error, or a timeout. The mapping reads the status and the body's
type / code / message, never the exception's own text (which may quote headers or the
whole body), and writes its own message naming what to do.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from typing import Any, Literal

import providers.errors as errors
from providers.errors import short_detail
from providers.families import FAMILIES
from providers.redaction import safe_url
from providers.settings import ProviderSettings

Phase = Literal["request", "stream"]


def _sdk_classes(name: str) -> tuple[type[BaseException], ...]:
    """`name` (e.g. "APITimeoutError") from each SDK loaded so far.

    The SDKs are imported lazily (the anthropic one alone weighs ~40 MB); an SDK that was
    never imported cannot have raised anything.
    """
    found = []
    for sdk in dict.fromkeys(f.sdk for f in FAMILIES.values()):
        module = sys.modules.get(sdk)
        cls = getattr(module, name, None) if module is not None else None
        if isinstance(cls, type) and issubclass(cls, BaseException):
            found.append(cls)
    return tuple(found)


_CONTEXT_MARKERS = (
    "context_length_exceeded",
    "exceed_context_size",
    "context length",
    "context window",
    "context size",
    "prompt is too long",
    "too many tokens",
    "maximum context",
)

_WINDOW_PATTERNS = (
    r"maximum context length is ([\d,]+)",
    r"tokens? > ([\d,]+) maximum",
    r"context size \(([\d,]+) tokens?\)",
    r"limit of ([\d,]+) tokens",
    r"context window (?:of|is) ([\d,]+)",
)
_PROMPT_PATTERNS = (
    r"resulted in ([\d,]+) tokens",
    r"([\d,]+) in the messages",
    r"request \(([\d,]+) tokens?\)",
    r"too long: ([\d,]+) tokens",
    r"prompt has ([\d,]+) tokens",
)


def _label(settings: ProviderSettings) -> str:
    found = FAMILIES.get(settings.kind)
    return found.label if found else "the endpoint"


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        digits = value.replace(",", "")
        return int(digits) if digits.isdigit() else None
    return None


def _first(patterns: tuple[str, ...], text: str) -> int | None:
    for pattern in patterns:
        found = re.search(pattern, text, flags=re.IGNORECASE)
        if found:
            return _int(found.group(1))
    return None


def error_fields(body: object) -> dict[str, Any]:
    """The error object inside a response body: message, type, code and any extras."""
    if isinstance(body, Mapping):
        inner = body.get("error")
        if isinstance(inner, Mapping):
            body = inner
        return dict(body)
    if isinstance(body, str) and body.strip():
        return {"message": body}
    return {}


def spoke_model_api(exc: BaseException) -> bool:
    """Whether a status error's body is the model API's own error JSON: OpenAI's (and
    llama.cpp's) ``{"error": {"message": ..., "type"/"code": ...}}``, Anthropic's
    ``{"type": "error", "error": {...}}`` or vLLM's ``{"object": "error", "message": ...}``.
    Only then is its message shown (a team server is not an open relay: another host's 4xx
    body, a web page or a service's JSON, is never read back to whoever pointed a lane at it;
    its status is). Judged on the response as it came; an error event inside a 200 stream,
    or a response whose content is gone, on the body the SDK parsed."""
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    content = b""
    if isinstance(status, int) and status >= 400:
        try:
            content = response.content  # type: ignore[union-attr]
        except Exception:  # noqa: BLE001 - a stream never read: judge by the parsed body
            content = b""
    if content:
        try:
            return _api_shape(json.loads(content))
        except ValueError:  # not JSON at all: not the model API
            return False
    body = getattr(exc, "body", None)  # the openai SDK keeps only the inner error object
    return _api_shape(body) or _error_object(body)


def _error_object(data: object) -> bool:
    return (
        isinstance(data, Mapping)
        and isinstance(data.get("message"), str)
        and ("type" in data or "code" in data)
    )


def _api_shape(data: object) -> bool:
    if not isinstance(data, Mapping):
        return False
    inner = data.get("error")
    if isinstance(inner, Mapping):
        return _error_object(inner)
    return data.get("object") == "error" and _error_object(data)


def _retry_after(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            return max(0.0, float(raw) / scale)
        except ValueError:
            continue
    return None


def context_error(
    fields: Mapping[str, Any],
    text: str,
    settings: ProviderSettings,
    status: int | None,
    detail: str | None,
) -> errors.ContextLengthExceeded:
    """A ContextLengthExceeded with whatever counts the server gave."""
    prompt = _int(fields.get("n_prompt_tokens")) or _first(_PROMPT_PATTERNS, text)
    window = _int(fields.get("n_ctx")) or _first(_WINDOW_PATTERNS, text)
    if window is None and settings.context_window:
        window = settings.context_window
    counts = []
    if prompt is not None:
        counts.append(f"{prompt:,} prompt tokens")
    if window is not None:
        counts.append(f"a context window of {window:,}")
    measured = f" ({' vs '.join(counts)})" if counts else ""
    return errors.ContextLengthExceeded(
        f"the conversation is too long for {settings.model!r}{measured}: choose a memory "
        "strategy that keeps less history, lower max_tokens, or use a model with a larger "
        "context window",
        prompt_tokens=prompt,
        context_window=window,
        status=status,
        detail=detail,
        provider=settings.kind,
    )


def _is_context(fields: Mapping[str, Any], text: str) -> bool:
    haystack = (
        " ".join(str(fields.get(k, "")) for k in ("type", "code", "error_code")).lower()
        + " "
        + text.lower()
    )
    return any(marker in haystack for marker in _CONTEXT_MARKERS)


def _from_status(
    status: int,
    fields: Mapping[str, Any],
    exc: BaseException,
    settings: ProviderSettings,
    url: str,
    key: str | None,
) -> errors.ProviderError:
    text = str(fields.get("message") or "")
    detail = short_detail(text, (key,))
    label = _label(settings)
    kind = settings.kind
    err_type = str(fields.get("type") or "").lower()
    code = str(fields.get("code") or "").lower()
    env = settings.needed_key_env
    fix_key = f"set {env} to a valid key" if env else "enter a valid API key for this endpoint"

    def made(cls: type[errors.ProviderError], message: str, **extra: Any) -> errors.ProviderError:
        return cls(message, **{"status": status, "detail": detail, "provider": kind, **extra})

    if status == 401 or err_type == "authentication_error":
        return made(
            errors.AuthError,
            f"{label} refused the API key (HTTP 401): {fix_key}",
            env_var=env,
        )
    if status == 403 or err_type == "permission_error":
        return made(
            errors.AuthError,
            f"the API key has no access to {settings.model!r} on {label} (HTTP 403): "
            f"use a key with access, or another model ({fix_key})",
            env_var=env,
        )
    if status == 402 or code == "insufficient_quota" or err_type == "billing_error":
        return made(
            errors.QuotaExceeded,
            f"the account's quota or credit on {label} is used up: check billing "
            "(waiting will not help)",
        )
    if status == 404 or err_type == "not_found_error" or code == "model_not_found":
        return made(
            errors.ModelNotFound,
            f"model {settings.model!r} was not found at {url}: check the model name "
            "(for Ollama, `ollama pull` it first) and that the base URL is the API root "
            "(usually ending in /v1)",
        )
    if status == 408:
        return made(
            errors.Timeout,
            f"{label} timed out handling the request (HTTP 408): try again, or raise the timeout",
        )
    if status == 429 or err_type == "rate_limit_error":
        return made(
            errors.RateLimited,
            f"{label} is rate-limiting requests (HTTP 429) and retries did not clear it: "
            "wait a minute, run fewer lanes at once, or raise your rate limit",
            retry_after=_retry_after(exc),
        )
    rejected = status in (400, 413, 422) or err_type == "invalid_request_error"
    overloaded = not rejected and (status == 529 or err_type == "overloaded_error")
    failed = status >= 500 or err_type in ("api_error", "server_error")
    # a prompt over the context window is rejected, or (llama.cpp: a full KV cache) an HTTP 500
    if (rejected or (failed and not overloaded)) and _is_context(fields, text):
        return context_error(fields, text, settings, status, detail)
    if rejected:
        return made(
            errors.BadRequest,
            f"{label} rejected the request (HTTP {status}): {detail or 'no reason given'}",
        )
    if overloaded:
        return made(
            errors.ServerError,
            f"{label} is overloaded (HTTP 529): try again in a moment",
            status=529,
        )
    if failed:
        return made(
            errors.ServerError,
            f"{label} had an internal error (HTTP {status}): try again; if it persists, "
            "check the provider's status page or the server's log",
        )
    return made(
        errors.BadRequest,
        f"{label} answered HTTP {status}: {detail or 'no reason given'}",
    )


def _is_transport(exc: BaseException) -> bool:
    """A network-level failure raised below the SDK (e.g. a connection dropped mid-stream)."""
    root = type(exc).__module__.split(".")[0]
    return isinstance(exc, OSError) or root in ("httpx", "httpx2", "httpcore", "h11", "ssl")


def map_error(
    exc: BaseException,
    settings: ProviderSettings,
    *,
    url: str | None,
    key: str | None = None,
    phase: Phase = "request",
) -> errors.ProviderError:
    """The ProviderError for an exception raised while calling (or streaming from) a model."""
    if isinstance(exc, errors.ProviderError):
        return exc
    url = safe_url(url)  # a URL with user:password@ or ?key= is never shown
    where = url or "the provider's default URL"
    label = _label(settings)
    kind = settings.kind
    if isinstance(exc, _sdk_classes("APITimeoutError")) or "timeout" in type(exc).__name__.lower():
        if phase == "stream":
            return errors.Timeout(
                f"{label} stopped sending for more than {settings.timeout:g} s mid-reply: "
                "the partial text is kept; try again or raise the timeout",
                provider=kind,
            )
        return errors.Timeout(
            f"no answer from {where} within {settings.timeout:g} s: the server may be busy "
            "or the model slow; try again or raise the timeout",
            provider=kind,
        )
    if isinstance(exc, _sdk_classes("APIStatusError")):
        status = int(getattr(exc, "status_code", 0) or 0)
        # the body is read only when the endpoint spoke the model API: status only otherwise
        fields = error_fields(getattr(exc, "body", None)) if spoke_model_api(exc) else {}
        if status < 400:  # an error event inside a 200 stream: judge it by its body
            status = {
                "rate_limit_error": 429,
                "overloaded_error": 529,
                "invalid_request_error": 400,
                "authentication_error": 401,
                "not_found_error": 404,
            }.get(str(fields.get("type") or ""), 500)
        return _from_status(status, fields, exc, settings, where, key)
    if isinstance(exc, _sdk_classes("APIConnectionError")) or _is_transport(exc):
        if phase == "stream":
            return errors.StreamInterrupted(
                f"the connection to {where} broke mid-reply: the partial text is kept; "
                "send the message again",
                provider=kind,
            )
        known = FAMILIES.get(kind)
        hint = known.unreachable_hint if known else "is the server running and the URL right?"
        return errors.Unavailable(
            f"could not connect to {where} (connection refused or host unreachable): {hint}",
            url=url,
            provider=kind,
        )
    if isinstance(
        exc, _sdk_classes("APIError")
    ):  # an SDK error with a body but no status (error in a stream)
        fields = error_fields(getattr(exc, "body", None))
        return _from_status(500, fields, exc, settings, where, key)
    return errors.ProviderError(
        f"calling {label} failed unexpectedly ({type(exc).__name__}): "
        f"{short_detail(str(exc), (key,)) or 'no details'}",
        provider=kind,
    )
