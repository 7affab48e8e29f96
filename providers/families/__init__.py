"""Provider families behind one registry: the only switch on a provider's kind.

Each family is one module (OpenAI chat completions, Anthropic messages, the embedded
llama.cpp server as a refinement of the OpenAI family); OpenAI-compatible services are
presets, data in providers/catalog.py. Everything kind-specific (body, client, stream
events, error wording, counting, batch, capabilities) is asked of `family(kind)`. Adding a
family is one module and one `register(...)` call.

May import: memory/, providers.families.*, providers.embedded, providers.endpoints.
"""

from __future__ import annotations

import providers.endpoints as endpoints
from providers.families.anthropic import ANTHROPIC
from providers.families.base import Family
from providers.families.embedded import EMBEDDED
from providers.families.openai import COMPATIBLE, OPENAI

FAMILIES: dict[str, Family] = {}


def register(new: Family) -> Family:
    """Add a family (a plugin's, a test's); a kind already registered is refused. Its
    presets join the catalog and their URLs pass the endpoint gate."""
    if not new.kind or new.kind in FAMILIES:
        raise ValueError(f"a provider family {new.kind!r} is already registered")
    FAMILIES[new.kind] = new
    endpoints.add_preset_urls(getattr(p, "base_url", None) for p in new.presets)
    return new


def unregister(kind: str) -> None:
    """Remove a family added with `register` (the built-in ones stay)."""
    if kind in BUILT_IN:
        raise ValueError(f"{kind!r} is a built-in provider family")
    FAMILIES.pop(kind, None)


def family(kind: str) -> Family:
    """The family registered under `kind`; ValueError names the kinds there are."""
    found = FAMILIES.get(kind) if isinstance(kind, str) else None
    if found is None:
        raise ValueError(f"unknown provider kind {kind!r}; choose one of {', '.join(FAMILIES)}")
    return found


for _built_in in (EMBEDDED, OPENAI, COMPATIBLE, ANTHROPIC):
    register(_built_in)
BUILT_IN: tuple[str, ...] = tuple(FAMILIES)

__all__ = ["BUILT_IN", "FAMILIES", "Family", "family", "register", "unregister"]
