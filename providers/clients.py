"""SDK clients, one per (kind, base URL, key), shared by every thread of the process.

The openai and anthropic clients (each SDK imported on first use) are safe to use from several threads at once (they sit
on a connection-pooled HTTP client). They are built with `max_retries=0`: retries are
done by `providers.send`, which only retries what is worth retrying and knows whether
any text has been streamed yet.
"""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
import threading
from typing import Any
from urllib.parse import urlsplit

from providers import embedded
from providers.settings import ProviderSettings

_lock = threading.Lock()
_clients: dict[tuple[str, str, str | None, str], Any] = {}


def endpoint_url(settings: ProviderSettings) -> str | None:
    """The base URL a call goes to; for the embedded model this starts it if needed."""
    if settings.kind == "embedded":
        return settings.base_url or embedded.openai_base_url()
    return settings.base_url


def is_loopback(url: str | None) -> bool:
    """Whether `url` points at this machine (127.0.0.0/8, ::1, localhost)."""
    if not url:
        return False
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _fingerprint(key: str) -> str:
    # The cache is keyed on a hash so the dict itself never holds a second copy of a key.
    return hashlib.sha256(key.encode()).hexdigest()


def get_client(settings: ProviderSettings, base_url: str | None, key: str) -> Any:
    """The shared openai.OpenAI or anthropic.Anthropic client for this endpoint and key."""
    family = "anthropic" if settings.kind == "anthropic" else "openai"
    cache_key = (settings.kind, family, base_url, _fingerprint(key))
    client = _clients.get(cache_key)
    if client is not None:
        return client
    with _lock:
        client = _clients.get(cache_key)
        if client is None:
            # Imported here: each SDK costs 40 MB of RSS, and most sessions use only one.
            # Loopback traffic (the embedded model, local servers) never goes through a
            # proxy from HTTP_PROXY/ALL_PROXY: the conversation must not leave the machine.
            extra: dict[str, Any] = {}
            if family == "anthropic":
                import anthropic

                if is_loopback(base_url):
                    extra["http_client"] = anthropic.DefaultHttpxClient(trust_env=False)
                client = anthropic.Anthropic(api_key=key, base_url=base_url, max_retries=0, **extra)
            else:
                import openai

                if is_loopback(base_url):
                    extra["http_client"] = openai.DefaultHttpxClient(trust_env=False)
                client = openai.OpenAI(api_key=key, base_url=base_url, max_retries=0, **extra)
            _clients[cache_key] = client
        return client


def clear_clients() -> None:
    """Forget every cached client (tests; or after keys change)."""
    with _lock:
        for client in _clients.values():
            with contextlib.suppress(Exception):  # closing is best effort
                client.close()
        _clients.clear()
