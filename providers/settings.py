"""Provider settings: which endpoint and model a lane talks to, and how its key is found.

Two records, one conversion pair: `ProviderChoice` is what a person picks (a catalog preset,
a model, sampling) and what is saved with a session; `ProviderSettings` is what a call
needs. `catalog.settings_for(choice)` and `catalog.choice_for(public_settings)` convert
between them (they live with the presets they look up).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field, fields, replace
from typing import Any
from urllib.parse import urlsplit

from providers.endpoints import check_endpoint
from providers.errors import AuthError
from providers.families import BUILT_IN, family
from providers.redaction import remember, remember_url, safe_url

Kind = str  # the kind of a registered provider family (providers/families/)
KINDS: tuple[str, ...] = BUILT_IN

# Sent to endpoints that need no key (local servers); the SDKs refuse an empty one.
NO_KEY = "no-key-needed"


def mask_key(key: str | None) -> str:
    """A key as it may be shown: its prefix and last 4 characters, or "not set"."""
    if not key:
        return "not set"
    if len(key) < 16:
        return "****"
    prefix = key[:3] if key[:3] in ("sk-", "gsk") else ""
    return f"{prefix}…{key[-4:]}"


def key_problem(key: str | None) -> str | None:
    """What makes `key` unusable in an HTTP header (a space, a line break, a character that
    is not ASCII), or None; the key itself is never part of the answer."""
    for i, ch in enumerate(key or "", start=1):
        if ch.isspace():
            return f"contains a space or line break at character {i}"
        if not (ch.isascii() and ch.isprintable()):
            return f"contains a character that is not plain ASCII at character {i}"
    return None


def check_base_url(url: str | None) -> str | None:
    """`url` as a base URL may be entered: http(s) with a host, else ValueError saying what
    to type (the URL shown without credentials). The one check every entry uses: the
    sidebar, the CLI's --base-url, the library, saved settings and an adopted file's choice.
    EndpointRefused (a ValueError) when this server does not let anyone call it."""
    if not url:
        return url
    shown = safe_url(url.strip())
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        raise ValueError(
            f"the base URL {shown!r} is not a valid URL: type one like http://localhost:8000/v1"
        ) from None
    if parts.scheme.lower() not in ("http", "https") or not host:
        raise ValueError(
            f"the base URL {shown!r} must start with http:// or https:// and name a host "
            "(like http://localhost:8000/v1)"
        )
    check_endpoint(url)  # a team server's allowlist (MEMORY_LAB_ENDPOINTS) or fixed mode
    return url


@dataclass(frozen=True)
class ProviderSettings:
    """Where and how a lane calls its model; the key is never part of repr or public_dict."""

    kind: Kind
    model: str
    _: KW_ONLY
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    temperature: float | None = 0.0
    max_tokens: int = 256
    timeout: float = 60.0
    context_window: int | None = None
    key_env: str | None = None
    max_retries: int = 3
    retry_backoff: float = 1.0
    # llama.cpp servers (the embedded model): reuse cached prompt prefixes. Much faster
    # for long conversations; at temperature 0 replies are then not bit-reproducible.
    # None leaves the server's own default (off for the embedded server). Anthropic: mark
    # cache breakpoints (cached input is billed at a tenth of the price).
    prompt_cache: bool | None = None

    def __post_init__(self) -> None:
        chosen = family(self.kind)  # ValueError naming the registered kinds
        if not self.model:
            raise ValueError("a model name is needed")
        if self.max_tokens < 1:
            raise ValueError("max_tokens must be at least 1")
        if self.timeout <= 0:
            raise ValueError("timeout must be positive (seconds)")
        if self.max_retries < 0 or self.retry_backoff < 0:
            raise ValueError("max_retries and retry_backoff cannot be negative")
        if chosen.needs_base_url and not self.base_url:
            raise ValueError(f"a {self.kind} endpoint needs a base_url (its …/v1 URL)")
        remember_url(self.base_url)  # before the check: its error never shows the password
        check_base_url(self.base_url)
        if self.api_key is not None:  # pasted keys often carry a space or a line break
            object.__setattr__(self, "api_key", self.api_key.strip() or None)
            problem = key_problem(self.api_key)
            if problem:
                raise ValueError(f"the API key {problem}: paste only the key")
        remember(self.api_key)  # every output masks it from now on (providers.redaction)

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{f.name}={safe_url(self.base_url) if f.name == 'base_url' else getattr(self, f.name)!r}"
            for f in fields(self)
            if f.repr
        )
        key = "api_key='****', " if self.api_key else ""
        return f"ProviderSettings({key}{shown})"

    @property
    def needed_key_env(self) -> str | None:
        """The environment variable a key is read from (None: the endpoint needs no key)."""
        if self.key_env:
            return self.key_env
        if self.base_url is None:
            return family(self.kind).key_env
        return None

    @property
    def key_hint(self) -> str:
        """Where the key comes from, safe to display ("…ab12 (OPENAI_API_KEY)", "not needed")."""
        env = self.needed_key_env
        if self.api_key:
            return mask_key(self.api_key)
        if env:
            found = os.environ.get(env)
            return f"{mask_key(found)} ({env})" if found else f"missing: set {env}"
        return "not needed"

    def resolve_key(self) -> str:
        """The key to send: explicit key, else the environment variable, else AuthError.

        Endpoints that need no key (local servers, the embedded model) get a placeholder,
        because the SDKs refuse to start without one.
        """
        if self.api_key:
            return self.api_key
        env = self.needed_key_env
        if env is None:
            return NO_KEY
        found = os.environ.get(env, "").strip()
        remember(found)  # a key read from any variable (`key_env`) is masked everywhere
        problem = key_problem(found)
        if problem:
            raise AuthError(
                f"the key in {env} {problem}: set it to the key alone",
                env_var=env,
                provider=self.kind,
            )
        if found:
            return found
        raise AuthError(
            f"no API key for {self.model!r}: set {env} in the environment "
            "(or enter a key in the sidebar)",
            env_var=env,
            provider=self.kind,
        )

    def lane_model(self) -> tuple[str, str]:
        """The model and API kind a lane on these settings calls (its label's part)."""
        return self.model, self.kind

    def with_(self, **changes: Any) -> ProviderSettings:
        """A copy with some fields changed (e.g. a cheaper model for maintenance calls)."""
        return replace(self, **changes)

    def public_dict(self) -> dict[str, Any]:
        """Plain data for saving or exporting: every field but the key."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "api_key"}
        out["base_url"] = safe_url(self.base_url)  # no user:password@ or ?key= in saved data
        out["key_set"] = bool(self.api_key)
        return out


@dataclass(frozen=True)
class ProviderChoice:
    """Which preset and model answer, and how: the one saved form of a provider choice
    (`as_saved`/`from_saved`); the key is held in memory only, never saved or shown."""

    preset: str = "embedded"
    model: str = ""
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    temperature: float = 0.0
    max_tokens: int = 80  # seed 000's replies are about 80 tokens: a demo turn stays short
    maintenance_model: str | None = None  # None: the conversation's model
    prompt_cache: bool = True  # embedded model only: fast long conversations
    short_upkeep: bool = True  # upkeep calls capped by the session's limits, not by max_tokens
    # at temperature 0, lanes that build the same request share one call (lanes/sharing.py)
    share_identical: bool = True

    def __post_init__(self) -> None:
        remember(self.api_key)  # a key typed in the sidebar is masked in every output
        remember_url(self.base_url)

    def lane_model(self) -> tuple[str, str]:
        """The model (blank: the preset's default) and preset a lane on this choice calls."""
        return self.model, self.preset

    def as_saved(self) -> dict[str, Any]:
        """Plain data for saving with a session: every field but the key."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "api_key"}

    @classmethod
    def from_saved(cls, data: Mapping[str, Any], *, api_key: str | None = None) -> ProviderChoice:
        """The choice saved by `as_saved` (missing values take their defaults)."""
        return cls(
            preset=str(data["preset"]),
            model=str(data.get("model") or ""),
            base_url=data.get("base_url"),
            api_key=api_key,
            temperature=float(data.get("temperature") or 0.0),
            max_tokens=int(data.get("max_tokens") or 80),
            maintenance_model=data.get("maintenance_model"),
            prompt_cache=bool(data.get("prompt_cache", True)),
            short_upkeep=bool(data.get("short_upkeep", True)),
            share_identical=bool(data.get("share_identical", True)),
        )
