"""The endpoint gate: which base URLs this process may call at all (a team server is not an
open relay). The lower half of the endpoint policy (lanes/endpoint_policy.py decides which
choice a file may make; this decides which URLs anyone may type), kept in providers/ because
every call passes here: `ProviderSettings` checks its URL on creation (the sidebar, the CLI's
flags, the library, saved settings and sweeps all make one) and `get_client` checks again
before an SDK client exists.

Set by whoever serves the app, in the environment:

* ``MEMORY_LAB_ENDPOINTS=http://gpu1:8000/v1,https://llm.example/v1``: only these base URLs
  (and the catalog presets' own) may be typed; any other is refused with a message.
* ``MEMORY_LAB_FIXED_ENDPOINTS=1``: no URL can be typed at all (the sidebar shows no URL
  fields); lanes call the presets' own endpoints, and those in ``MEMORY_LAB_ENDPOINTS``.

Unset, any http(s) URL may be typed (the app on one's own laptop). No streamlit, no I/O.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

ALLOW_ENV = "MEMORY_LAB_ENDPOINTS"
FIXED_ENV = "MEMORY_LAB_FIXED_ENDPOINTS"


class EndpointRefused(ValueError):
    """A base URL this server does not let anyone call; the message says why and what to do."""


def norm(url: str) -> str:
    """A base URL as compared: no surrounding space or trailing slash, scheme and host in
    lower case."""
    url = url.strip().rstrip("/")
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    host, slash, path = rest.partition("/")
    return f"{scheme.lower()}://{host.lower()}{slash}{path}"


def fixed_mode() -> bool:
    """Whether base URLs are fixed (``MEMORY_LAB_FIXED_ENDPOINTS`` set to 1/true/yes)."""
    return os.environ.get(FIXED_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def allowed_urls() -> frozenset[str] | None:
    """The base URLs ``MEMORY_LAB_ENDPOINTS`` lists (None: the variable is not set)."""
    raw = os.environ.get(ALLOW_ENV)
    if raw is None or not raw.strip():
        return None
    return frozenset(norm(u) for u in raw.replace("\n", ",").split(",") if u.strip())


def urls_editable() -> bool:
    """Whether a person may type a base URL here (the sidebar shows URL fields)."""
    return not fixed_mode()


_PRESET_URLS: set[str] = set()


def add_preset_urls(urls: Iterable[str | None]) -> None:
    """Register the catalog presets' own base URLs (providers/catalog.py does, on import):
    code, not something a user or a file typed, so they always pass."""
    _PRESET_URLS.update(norm(u) for u in urls if u)


def preset_urls() -> frozenset[str]:
    """The catalog presets' own base URLs."""
    return frozenset(_PRESET_URLS)


def check_endpoint(url: str | None) -> None:
    """Refuse (EndpointRefused) a base URL this server does not let anyone call. None (the
    SDK's own endpoint, or the embedded model) and the presets' own URLs always pass."""
    if not url:
        return
    found = norm(url)
    allowed = allowed_urls()
    if found in preset_urls() or (allowed is not None and found in allowed):
        return
    from providers.redaction import safe_url

    shown = safe_url(url)
    if fixed_mode():
        raise EndpointRefused(
            f"this server does not let base URLs be typed ({FIXED_ENV} is set): {shown!r} "
            "is refused; choose a provider, which calls its own endpoint"
        )
    if allowed is not None:
        raise EndpointRefused(
            f"the base URL {shown!r} is not one this server allows ({ALLOW_ENV}): choose "
            f"one of {', '.join(sorted(allowed))}, or ask whoever runs it to add it"
        )
