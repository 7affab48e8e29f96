"""Loopback is loopback in every spelling: no local call goes through HTTP_PROXY.

Every spelling is sent through the real path (`providers.stream` -> `get_client` -> the
official openai/anthropic SDK's httpx client) with every proxy variable pointing at a local
recorder; a loopback URL must never reach the recorder, a remote one must (so the test can
fail). No internet: the "remote" host is only ever contacted through the local recorder.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import providers
from providers import ProviderSettings
from providers.clients import clear_clients, is_loopback
from tests.providers.conftest import FAMILIES, TEST_KEY, make_request
from tests.providers.local_server import LocalServer, Recorded, RecordingHandler

ROOT = Path(__file__).resolve().parents[2]

# (host as written in the URL): every one is this machine.
LOOPBACK_HOSTS = (
    "127.0.0.1",
    "127.3.4.5",  # anywhere in 127.0.0.0/8
    "localhost",
    "LocalHost",
    "localhost.",  # the fully-qualified spelling
    "lab.localhost",
    "0.0.0.0",  # what vLLM prints
    "0",
    "127.1",
    "2130706433",  # the integer form
    "0x7f.1",
    "[::1]",
    "[::]",
    "[::ffff:127.0.0.1]",  # IPv4-mapped
    "[::ffff:7f00:1]",
)
REACH_FAKE = {"127.0.0.1", "localhost", "0.0.0.0", "127.1", "2130706433", "0x7f.1"}
REMOTE_HOSTS = ("lab.example", "10.1.2.3", "[2001:db8::1]", "localhost.example", "128.0.0.1")


class _ProxyHandler(RecordingHandler):
    """Records what a proxy would be asked to forward, and refuses it."""

    def _any(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.owner.record(Recorded(self.path, dict(self.headers), self.rfile.read(length)))
        self.send_response(502)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = do_CONNECT = _any


@pytest.fixture
def proxy(monkeypatch):
    with LocalServer(_ProxyHandler) as server:
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
            monkeypatch.setenv(name, server.url)
        for name in ("NO_PROXY", "no_proxy", "all_proxy"):
            monkeypatch.delenv(name, raising=False)
        clear_clients()
        yield server
        clear_clients()


def _send(family: str, base: str) -> providers.Reply:
    if family == "anthropic":
        settings = ProviderSettings(
            "anthropic", "ok", base_url=base, api_key=TEST_KEY, max_retries=0, timeout=3.0
        )
    else:
        settings = ProviderSettings(
            "openai_compatible",
            "ok",
            base_url=base + "/v1",
            api_key=TEST_KEY,
            max_retries=0,
            timeout=3.0,
        )
    return providers.stream(make_request(), settings)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("host", LOOPBACK_HOSTS)
def test_every_loopback_spelling_skips_the_proxy(proxy, fake, family, host):
    port = fake.url.rsplit(":", 1)[1]
    reply = _send(family, f"http://{host}:{port}")
    assert proxy.requests == [], f"{host} went through HTTP_PROXY"
    if host in REACH_FAKE:  # spellings of 127.0.0.1 reach the fake server itself
        assert reply.error is None and reply.text == "Hello from the fake server."


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("host", REMOTE_HOSTS)
def test_remote_hosts_keep_the_proxy(proxy, family, host):
    reply = _send(family, f"http://{host}:8000")
    assert len(proxy.requests) == 1 and reply.error is not None


def test_the_decision_is_by_address_not_by_string():
    assert all(is_loopback(f"http://{h}:1/v1") for h in LOOPBACK_HOSTS)
    assert not any(is_loopback(f"http://{h}:1/v1") for h in REMOTE_HOSTS)
    assert is_loopback("localhost:8000/v1")  # scheme-less, as typed
    assert not is_loopback(None) and not is_loopback("http://[bad/v1")


def test_only_the_client_registry_builds_sdk_clients():
    """Every path that sends (send, batch, counting, …) gets its client from get_client, so
    the bypass decision covers it: SDK clients are built only by a family's `client` method,
    which only get_client calls; a new module building its own SDK client fails here."""
    builders = {"OpenAI", "Anthropic", "DefaultHttpxClient", "Client", "AsyncClient"}
    found, family_calls = [], []
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT)
        if rel.parts[0] in {".venv", "tests", "wip"}:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        allowed: set[int] = set()
        if rel.parts[:2] == ("providers", "families"):
            for fn in ast.walk(tree):
                if isinstance(fn, ast.FunctionDef) and fn.name == "client":
                    allowed.update(id(n) for n in ast.walk(fn))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            owner = node.func.value
            if (
                isinstance(owner, ast.Name)
                and owner.id in {"openai", "anthropic", "httpx"}
                and node.func.attr in builders
                and id(node) not in allowed
            ):
                found.append(f"{rel}:{node.lineno}")
            if node.func.attr == "client" and any(k.arg == "loopback" for k in node.keywords):
                family_calls.append(rel.as_posix())
    assert found == []
    assert family_calls == ["providers/clients.py"]
