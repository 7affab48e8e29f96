"""SDK clients, one per (kind, base URL, key), shared by every thread of the process.

Each family's SDK client (the SDK imported on first use) is safe to use from several threads at once (they sit
on a connection-pooled HTTP client). They are built with `max_retries=0`: retries are
done by `providers.send`, which only retries what is worth retrying and knows whether
any text has been streamed yet.
"""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
import re
import socket
import threading
from typing import Any
from urllib.parse import urlsplit

from providers.endpoints import EndpointRefused, check_endpoint
from providers.errors import EndpointNotAllowed
from providers.families import family
from providers.settings import ProviderSettings

_lock = threading.Lock()
_clients: dict[tuple[str, str, str | None, str], Any] = {}


def endpoint_url(settings: ProviderSettings) -> str | None:
    """The base URL a call goes to; for a server the app runs this starts it if needed."""
    return family(settings.kind).endpoint_url(settings)


def is_loopback(url: str | None) -> bool:
    """Whether `url` points at this machine: the one proxy-bypass decision.

    Decided by the address the host spells, never by its string: any spelling the system's
    resolver reads as a loopback or unspecified address counts (``127.0.0.0/8``, ``127.1``,
    ``2130706433``, ``0x7f.1``, ``0.0.0.0`` as vLLM prints it, ``::1``, ``::``,
    ``[::ffff:127.0.0.1]``), and so do the names ``localhost`` and ``*.localhost`` with or
    without the trailing root dot. Other names are not looked up (no DNS query decides it).
    """
    if not url:
        return False
    try:
        host = urlsplit(url if "//" in url else f"//{url}").hostname or ""
    except ValueError:
        return False
    host = host.lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    address = host_address(host)
    return address is not None and (address.is_loopback or address.is_unspecified)


_LEGACY_IPV4 = re.compile(r"^[0-9a-fx.]+$")  # what inet_aton reads: 127.1, 2130706433, 0x7f.1


def host_address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The IP address a URL's host spells (IPv4-mapped IPv6 as its IPv4), or None for a name."""
    try:
        address: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(host)
    except ValueError:
        if not host or not _LEGACY_IPV4.match(host):
            return None
        try:  # the forms getaddrinfo also accepts, so they connect where they say
            address = ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _fingerprint(key: str) -> str:
    # The cache is keyed on a hash so the dict itself never holds a second copy of a key.
    return hashlib.sha256(key.encode()).hexdigest()


def get_client(settings: ProviderSettings, base_url: str | None, key: str) -> Any:
    """The shared SDK client (the family's: openai.OpenAI, anthropic.Anthropic) for this
    endpoint and key."""
    chosen = family(settings.kind)
    if not chosen.app_server:  # the URL of a server the app runs is never typed
        try:
            check_endpoint(base_url)  # the gate again: settings made before it changed
        except EndpointRefused as exc:
            raise EndpointNotAllowed(str(exc), provider=settings.kind) from None
    cache_key = (settings.kind, chosen.sdk, base_url, _fingerprint(key))
    client = _clients.get(cache_key)
    if client is not None:
        return client
    with _lock:
        client = _clients.get(cache_key)
        if client is None:
            # Each SDK is imported by its family on first use (40 MB of RSS each, and most
            # sessions use one). Loopback traffic (the embedded model, local servers) never
            # goes through a proxy from HTTP_PROXY/ALL_PROXY: the conversation must not
            # leave the machine.
            client = chosen.client(base_url, key, loopback=is_loopback(base_url))
            _clients[cache_key] = client
        return client


def clear_clients() -> None:
    """Forget every cached client (tests; or after keys change)."""
    with _lock:
        for client in _clients.values():
            with contextlib.suppress(Exception):  # closing is best effort
                client.close()
        _clients.clear()
