"""The request body for a settings' endpoint, built by its family (providers/families/).

What these return is exactly what is sent (and shown in the UI): the sender passes the
dict to the official SDK unchanged. No key ever goes in a body; it travels in a header.
"""

from __future__ import annotations

from typing import Any

from memory.types import Request
from providers.families import Family, family
from providers.settings import ProviderSettings


def family_of(settings: ProviderSettings) -> Family:
    """The family that speaks to `settings`' endpoint."""
    return family(settings.kind)


def build_body(
    request: Request, settings: ProviderSettings, slot: int | None = None
) -> dict[str, Any]:
    """The body for this endpoint's family (the one function every sender uses);
    `slot`: the server slot to run in, for a family that has slots."""
    return family_of(settings).build_body(request, settings, slot)


def _in_format(settings: ProviderSettings, wire: str) -> Family:
    found = family_of(settings)
    if found.wire != wire:
        raise ValueError(f"{found.label} does not speak the {wire} format")
    return found


def build_openai_body(
    request: Request, settings: ProviderSettings, slot: int | None = None
) -> dict[str, Any]:
    """A streaming chat-completions body (ValueError for a family in another format)."""
    return _in_format(settings, "openai").build_body(request, settings, slot)


def build_anthropic_body(request: Request, settings: ProviderSettings) -> dict[str, Any]:
    """A streaming messages body (ValueError for a family in another format)."""
    return _in_format(settings, "anthropic").build_body(request, settings)


def greedy(settings: ProviderSettings) -> bool:
    """Whether the bodies built for `settings` ask for temperature 0: the reply then depends on
    the request alone (lanes/sharing.py sends byte-identical requests once). Not for OpenAI's
    reasoning models nor Anthropic's own API, which are sent no temperature and sample."""
    return family_of(settings).greedy(settings)
