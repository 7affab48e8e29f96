"""Exact prompt counts from the providers' own token-counting endpoints (when a key is set).

Anthropic: `client.messages.count_tokens` (free, rate-limited separately). OpenAI:
`client.responses.input_tokens.count` with the chat messages as input items. Either gives
the provider's own count of what a request would bill, labelled "exact"; local tiktoken
counts stay the fallback (and the only count for other endpoints).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memory.types import Request
from providers.bodies import build_body
from providers.clients import endpoint_url, get_client
from providers.errors import AuthError
from providers.families import family
from providers.sdk_errors import map_error
from providers.settings import ProviderSettings

EXACT = "exact"


@dataclass(frozen=True)
class ExactCount:
    """A provider's own count of a request's input tokens."""

    tokens: int
    source: str  # which endpoint counted
    label: str = EXACT


def supports_counting(settings: ProviderSettings) -> bool:
    """Only the hosted APIs have a counting endpoint."""
    return family(settings.kind).hosted


def count_body(body: Mapping[str, Any], settings: ProviderSettings) -> ExactCount | None:
    """The provider's count for a request body (as `build_body` makes it), or None when this
    endpoint cannot count or no key is set. Other failures raise a ProviderError."""
    if not supports_counting(settings):
        return None
    try:
        key = settings.resolve_key()
    except AuthError:
        return None
    url = endpoint_url(settings)
    client = get_client(settings, url, key)
    try:
        tokens, source = family(settings.kind).count(client, body, settings.timeout)
        return ExactCount(tokens, source)
    except Exception as exc:
        raise map_error(exc, settings, url=url, key=key) from None


def count_exact(request: Request, settings: ProviderSettings) -> ExactCount | None:
    """The provider's count for `request` as the interactive path would send it."""
    return count_body(build_body(request, settings), settings)
