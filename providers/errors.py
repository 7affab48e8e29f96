"""Provider errors: a small tree whose messages tell a person what to do next.

Every error a provider call can end with is a `ProviderError`. The messages are written
here, never copied wholesale from an exception: a server's own words are kept only as a
short `detail`, with any API key scrubbed out, so an error can be shown or logged safely.
"""

from __future__ import annotations

from providers.redaction import redact

_DETAIL_LIMIT = 300


class ProviderError(Exception):
    """Base of every provider failure; `str(err)` is a message a person can act on."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        detail: str | None = None,
        provider: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.detail = detail
        self.provider = provider

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r})"

    @property
    def kind(self) -> str:
        """The class name, for display and for saving with a reply ("RateLimited")."""
        return type(self).__name__

    @property
    def retryable(self) -> bool:
        """Whether the same request may succeed if sent again after a pause."""
        return False


class AuthError(ProviderError):
    """No key, or a key the provider refused; the message names the variable to set."""

    def __init__(
        self,
        message: str,
        *,
        env_var: str | None = None,
        status: int | None = None,
        detail: str | None = None,
        provider: str | None = None,
    ) -> None:
        super().__init__(message, status=status, detail=detail, provider=provider)
        self.env_var = env_var


class ModelNotFound(ProviderError):
    """The endpoint does not serve this model (or the base URL points at the wrong path)."""


class RateLimited(ProviderError):
    """Too many requests: retried with backoff before it surfaces."""

    def __init__(
        self,
        message: str,
        *,
        retry_after: float | None = None,
        status: int | None = None,
        detail: str | None = None,
        provider: str | None = None,
    ) -> None:
        super().__init__(message, status=status, detail=detail, provider=provider)
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        """A rate limit clears with time."""
        return True


class QuotaExceeded(RateLimited):
    """The account's quota or credit is used up: waiting will not help."""

    @property
    def retryable(self) -> bool:
        """A used-up quota does not clear by waiting a few seconds."""
        return False


class ServerError(ProviderError):
    """The provider failed on its side (HTTP 5xx)."""

    @property
    def retryable(self) -> bool:
        """Overloaded or temporarily unavailable servers are worth another try."""
        return self.status in (503, 529)


class Timeout(ProviderError):
    """No answer (or no next chunk) within the configured timeout."""


class Unavailable(ProviderError):
    """The endpoint could not be reached: connection refused, DNS failure, dead server."""

    def __init__(
        self,
        message: str,
        *,
        url: str | None = None,
        status: int | None = None,
        detail: str | None = None,
        provider: str | None = None,
    ) -> None:
        super().__init__(message, status=status, detail=detail, provider=provider)
        self.url = url


class StreamInterrupted(ProviderError):
    """The reply stream broke off before the model finished; the partial text is kept."""


class ContextLengthExceeded(ProviderError):
    """The prompt (plus the reply budget) does not fit the model's context window."""

    def __init__(
        self,
        message: str,
        *,
        prompt_tokens: int | None = None,
        context_window: int | None = None,
        status: int | None = None,
        detail: str | None = None,
        provider: str | None = None,
    ) -> None:
        super().__init__(message, status=status, detail=detail, provider=provider)
        self.prompt_tokens = prompt_tokens
        self.context_window = context_window


class EndpointNotAllowed(ProviderError):
    """The base URL is not one this server lets anyone call (providers/endpoints.py)."""


class BadRequest(ProviderError):
    """The provider rejected the request as malformed or unsupported (HTTP 400/422)."""


def scrub(text: str, secrets: tuple[str | None, ...] = ()) -> str:
    """`text` with every given secret (and anything shaped like an API key) masked: the
    rules are `providers.redaction`'s, the one place that defines them."""
    return redact(text, secrets, mask="****")


def short_detail(text: str | None, secrets: tuple[str | None, ...] = ()) -> str | None:
    """A server message cut to a readable length, secrets masked; None when empty."""
    if not text:
        return None
    text = " ".join(scrub(str(text), secrets).split())
    if len(text) > _DETAIL_LIMIT:
        text = text[: _DETAIL_LIMIT - 1] + "…"
    return text
