"""A team server is not an open relay (issue 24, class 5).

The gate (providers/endpoints.py) is checked where settings are made and again in
`get_client`, which every sending path uses (tests/providers/test_loopback.py checks no other
module builds an SDK client). This test iterates the sending entry points — lanes, upkeep
and the tuner's model functions, the senders survival/replay/CLI bind, batch sweeps, token
counting, every CLI command taking --base-url, saved sweeps and saved sessions — with
settings made *before* the allowlist was set, and requires each to refuse without a single
request reaching the endpoint. Also: an endpoint's error body is shown only when it spoke the
model API, and `memory-lab app` beyond loopback warns that it has no authentication."""

from __future__ import annotations

import json

import pytest

import providers
from cli import app as app_cli
from cli.main import main
from engines.sweep_run import open_sweep
from lanes import endpoint_policy
from lanes.binding import bind_settings
from lanes.session import ProvidersTransport, Session
from memory.lane_spec import LaneSpec
from providers import ProviderSettings, batch, counting
from providers.endpoints import ALLOW_ENV, FIXED_ENV, EndpointRefused
from providers.errors import EndpointNotAllowed
from storage.sweeps import SweepStore
from tests.providers.conftest import TEST_KEY, make_request
from tests.providers.local_server import LocalServer, Recorded, RecordingHandler
from tests.providers.test_base_urls import NEEDS, _base_url_commands

BODY_SECRET = "INTERNAL-PAGE-7731"


class _Other(RecordingHandler):
    """Any host that is not a model API: records, answers 400 with its own body."""

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        self.owner.record(Recorded(self.path, dict(self.headers), self.rfile.read(length)))
        if not self.path.startswith("/html/"):
            self._send(400, json.dumps({"message": BODY_SECRET, "status": 400}), "application/json")
        else:
            self._send(403, f"<html><body>{BODY_SECRET}</body></html>", "text/html")

    do_GET = do_POST

    def _send(self, status: int, text: str, ctype: str) -> None:
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def other():
    with LocalServer(_Other) as server:
        yield server


def _settings(url: str, kind: str = "openai_compatible") -> ProviderSettings:
    base = url + "/v1" if kind == "openai_compatible" else url
    return ProviderSettings(kind, "m", base_url=base, api_key=TEST_KEY, max_retries=0, timeout=3.0)


def _lane(settings: ProviderSettings) -> str | None:
    session = Session(system_prompt="s", lanes=[LaneSpec("full")], provider=settings,
                      transport=ProvidersTransport())  # fmt: skip
    session.run_turn("hi")
    return session.lanes["full"].turns[-1].error_kind


def _raises(call):
    def run(settings: ProviderSettings) -> str | None:
        try:
            call(settings)
        except EndpointNotAllowed as exc:
            return exc.kind
        return None

    return run


def _bound_sender(settings: ProviderSettings) -> str | None:
    try:
        send = bind_settings(settings)[0]
    except EndpointRefused:  # refused while binding (its upkeep settings are made anew)
        return "EndpointNotAllowed"
    reply = send(make_request(), None)
    return reply.error.kind if reply.error else None


ENTRY_POINTS = {
    "lane (main page, sessions continued)": _lane,
    "providers.stream": lambda s: (providers.stream(make_request(), s).error or Exception()).kind,
    "upkeep / tuner model function": _raises(lambda s: providers.as_model_fn(s)(make_request())),
    "survival, replay and CLI senders (lanes.binding)": _bound_sender,
    "batch sweeps (submit, poll, collect)": _raises(lambda s: batch._client(s)),
    "token counting": _raises(lambda s: counting.count_body({"model": "m", "messages": []}, s)),
}


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_every_sending_path_refuses_an_endpoint_off_the_allowlist(entry, other, fake, monkeypatch):
    kind = "anthropic" if entry.startswith("token counting") else "openai_compatible"
    made_before = _settings(other.url, kind)  # settings from before the allowlist was set
    monkeypatch.setenv(ALLOW_ENV, f"{fake.url}/v1")
    assert ENTRY_POINTS[entry](made_before) == "EndpointNotAllowed"
    assert other.requests == []
    with pytest.raises(EndpointRefused, match=ALLOW_ENV):
        _settings(other.url)
    assert _settings(fake.url).base_url == f"{fake.url}/v1"  # an allowed one is made


def test_every_cli_command_with_base_url_refuses_it(other, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv(ALLOW_ENV, "http://127.0.0.1:1/v1")
    for command in _base_url_commands():
        argv = [*command, *NEEDS[tuple(command)](tmp_path), "--base-url", other.url + "/v1"]
        try:
            code = main(argv)
        except SystemExit as exc:  # refused by the parser (cli/parsing.py base_url)
            code = exc.code
        assert code == 2, argv
        assert ALLOW_ENV in capsys.readouterr().err
    assert other.requests == []


def test_saved_sweeps_and_sessions_never_pass_the_gate(other, monkeypatch, tmp_path):
    store = SweepStore(f"sqlite:///{tmp_path / 'sw.sqlite3'}")
    sid = store.create(name="s", settings={"kind": "openai", "model": "m", "base_url": other.url},
                       config={}, plan={}, upkeep={}, requests=[])  # fmt: skip
    monkeypatch.setenv(FIXED_ENV, "1")
    with pytest.raises(endpoint_policy.EndpointNotTyped):  # the saved URL is not obeyed
        open_sweep(store, sid, TEST_KEY)
    with pytest.raises(EndpointRefused, match=FIXED_ENV):  # and typed again, the gate holds
        open_sweep(store, sid, TEST_KEY, typed_urls=[other.url])
    saved = endpoint_policy.saved_settings({"kind": "openai", "model": "m", "base_url": other.url})
    assert saved.base_url is None  # a saved session's URL is never the one called
    assert providers.preset("openai").settings("gpt-4o-mini").base_url is None  # presets pass


@pytest.mark.parametrize("shape", ["html", "json"])
def test_an_error_body_is_shown_only_when_the_endpoint_spoke_the_model_api(other, fake, shape):
    path = "/v1" if shape == "json" else "/html/v1"
    settings = ProviderSettings("openai_compatible", "m", base_url=other.url + path,
                                api_key=TEST_KEY, max_retries=0, timeout=3.0)  # fmt: skip
    reply = providers.stream(make_request(), settings)
    shown = f"{reply.error} {reply.error.detail if reply.error else ''}"
    assert BODY_SECRET not in shown and ("400" in shown or "403" in shown), shown
    api = ProviderSettings("openai_compatible", "fault-400", base_url=fake.url + "/v1",
                           api_key=TEST_KEY, max_retries=0, timeout=3.0)  # fmt: skip
    spoke = providers.stream(make_request(), api)
    assert "must be at most 4096" in str(spoke.error)  # the model API's own message


@pytest.mark.parametrize("address", ["0.0.0.0", "::", "192.168.1.20", "lab.example"])
def test_the_app_beyond_loopback_warns_it_has_no_authentication(address, monkeypatch, capsys):
    assert "no authentication" in (app_cli.exposure_warning(address) or "")

    def stop(*_: object) -> None:
        raise SystemExit(0)

    monkeypatch.setattr(app_cli.os, "execv", stop)
    with pytest.raises(SystemExit):
        main(["app", "--address", address])
    err = capsys.readouterr().err
    assert "no authentication" in err and ALLOW_ENV in err and FIXED_ENV in err


@pytest.mark.parametrize("address", ["127.0.0.1", "localhost", "::1", "127.0.0.2"])
def test_the_app_on_loopback_does_not_warn(address):
    assert app_cli.exposure_warning(address) is None
