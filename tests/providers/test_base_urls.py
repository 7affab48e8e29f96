"""Base URLs (issue 24, class 3): one that is not http(s) is refused at every entry with a
clear error, and no URL keeps its password through `safe_url` into saved settings, the HTML
report, a lane error or a log line.

Entries walked: the library (`ProviderSettings`, `lanes.binding.bind`), every CLI command
that takes --base-url (found by walking the parser, so a new one is covered), saved settings
(`endpoint_policy.saved_settings`), an adopted file's choice (`endpoint_policy.adopt`) and
the sidebar's Base URL fields (tests/ui/test_base_url_field.py)."""

from __future__ import annotations

import argparse
import logging
from types import SimpleNamespace

import pytest

import providers
from cli.main import COMMANDS, build_parser, main
from lanes import endpoint_policy
from lanes.binding import bind
from present import export
from providers import ProviderSettings
from providers.redaction import forget_all, safe_url
from providers.sdk_errors import map_error
from providers.settings import ProviderChoice, check_base_url
from tests.providers.conftest import TEST_KEY, make_request

PW = "pw-Secret-77zq"
REFUSED = ("ftp://lab/v1", "file:///etc/passwd", "javascript:alert(1)", "gopher://h:70/",
           "localhost:8000/v1", f"u:{PW}@host/v1", "http:///v1", "http://[::1/v1",
           "http://host:99999999/v1")  # fmt: skip
# URLs whose password must never survive safe_url (scheme-less, malformed, ordinary)
WITH_PASSWORD = (f"u:{PW}@host/v1", f"http://u:{PW}@host:8000/v1", f"http://u:{PW}@[bad/v1",
                 f"http://u:{PW}@host:99999999/v1", f"https://host/v1?api_key={PW}",
                 f"host:8000/v1?token={PW}", f"http://a:{PW}@b@host/v1",
                 f"ftp://u:{PW}@host/v1")  # fmt: skip


@pytest.fixture(autouse=True)
def _fresh_registry():
    forget_all()  # the masking must not be what hides the password: safe_url must
    yield
    forget_all()


@pytest.mark.parametrize("url", WITH_PASSWORD)
def test_safe_url_never_keeps_a_password(url):
    assert PW not in (safe_url(url) or "")


def test_safe_url_keeps_ordinary_urls_exactly():
    for url in ("http://localhost:8000/v1", "https://api.example/v1?x=1", "host:1/v1", None):
        assert safe_url(url) == url


@pytest.mark.parametrize("url", REFUSED)
def test_the_library_refuses_a_url_that_is_not_http(url):
    with pytest.raises(ValueError, match=r"http:// or https://|not a valid URL") as failed:
        ProviderSettings("openai_compatible", "m", base_url=url)
    assert PW not in str(failed.value)
    with pytest.raises(ValueError):
        bind("custom", model="m", base_url=url)


def test_http_and_https_urls_are_accepted():
    for url in ("http://127.0.0.1:8000/v1", "HTTPS://api.example/v1", "http://[::1]:9/v1"):
        assert check_base_url(url) == url
        ProviderSettings("openai_compatible", "m", base_url=url)


def _base_url_commands() -> list[list[str]]:
    parser = build_parser([], load=list(COMMANDS))
    found: list[list[str]] = []

    def walk(p: argparse.ArgumentParser, path: list[str]) -> None:
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, [*path, name])
            elif action.dest == "base_url":
                found.append(path)

    walk(parser, [])
    return found


def _transcript(tmp_path) -> str:
    path = tmp_path / "t.json"
    path.write_text('[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]')
    return str(path)


# what each command needs besides --base-url to reach its provider (a new command that
# takes --base-url fails the walk until it is listed here)
NEEDS = {
    ("survival",): lambda tmp: ["--provider", "openai"],
    ("sweep", "plan"): lambda tmp: ["--provider", "openai"],
    ("sweep", "start"): lambda tmp: ["--provider", "openai"],
    ("replay",): lambda tmp: [_transcript(tmp), "--provider", "openai"],
    ("sweep", "collect"): lambda tmp: ["nosuchsweep"],  # the URL is checked before the lookup
    ("sweep", "resubmit"): lambda tmp: ["nosuchsweep"],
}


def test_every_cli_command_with_base_url_refuses_a_url_that_is_not_http(tmp_path, capsys):
    commands = _base_url_commands()
    assert {tuple(c) for c in commands} == set(NEEDS), "list the new command in NEEDS"
    for command in commands:
        for url in ("ftp://lab/v1", f"u:{PW}@host/v1"):
            argv = [*command, *NEEDS[tuple(command)](tmp_path), "--base-url", url]
            try:
                code = main(argv)
            except SystemExit as exc:  # refused by the parser (cli/parsing.py base_url)
                code = exc.code
            err = capsys.readouterr().err
            assert code == 2, (argv, err)
            assert "http:// or https://" in err and PW not in err, (argv, err)


def test_saved_settings_and_an_adopted_choice_refuse_it():
    for url in ("ftp://lab/v1", "file:///etc/passwd"):
        with pytest.raises(ValueError):
            endpoint_policy.saved_settings(
                {"kind": "openai_compatible", "model": "m", "base_url": url}
            )
        named = ProviderChoice("custom", model="m", base_url=url)
        with pytest.raises(ValueError, match="http:// or https://"):
            endpoint_policy.adopt(named, ProviderChoice())


def test_no_password_in_saved_settings_the_report_or_a_lane_error():
    settings = ProviderSettings("openai_compatible", "m", base_url=f"http://u:{PW}@127.0.0.1:9/v1")
    forget_all()  # only safe_url may hide it now
    assert PW not in str(settings.public_dict()) and PW not in repr(settings)
    choice = ProviderChoice("custom", model="m", base_url=f"http://u:{PW}@127.0.0.1:9/v1")
    forget_all()
    assert PW not in endpoint_policy.describe(choice)
    err = map_error(ConnectionRefusedError("refused"), settings, url=settings.base_url)
    assert PW not in str(err)
    for url in (f"u:{PW}@host/v1", f"http://u:{PW}@[bad/v1"):  # an imported file's own
        provider = {"kind": "openai_compatible", "model": "m", "base_url": url}
        assert PW not in export._provider_line(SimpleNamespace(settings={"provider": provider}))


def test_send_never_logs_a_url_raw(caplog):
    settings = ProviderSettings(
        "openai_compatible", "m", base_url=f"http://u:{PW}@127.0.0.1:9/v1?api_key={PW}",
        api_key=TEST_KEY, max_retries=0, timeout=2.0,
    )  # fmt: skip
    forget_all()
    with caplog.at_level(logging.DEBUG, logger="providers.send"):
        reply = providers.stream(make_request(), settings)
    assert reply.error is not None and caplog.records
    assert all(PW not in r.getMessage() for r in caplog.records)
    assert PW not in str(reply.public_dict())
