"""No log line carries a secret (issue 36 class 3): with every logger the process has set to
DEBUG and a handler on each, a run of the CLI against an endpoint whose URL carries a
password, and a run of the app, write no secret. The masking is made once per record, when
it is made (providers/redaction.py `mask_logs`), so handlers added later, by a library or by
a user, are covered without being listed here.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest
from streamlit.testing.v1 import AppTest

from cli import main as cli_main
from providers.redaction import REDACTED, forget_all
from tests.providers.fake_server import FakeLLMServer
from tests.ui.conftest import APP

PASSWORD = "url-pass-secret-8c1d4e"
KEY = "log-key-secret-77b0aa"


@pytest.fixture
def every_log() -> Iterator[io.StringIO]:
    """Every logger at DEBUG, each writing to one buffer; the default record factory first
    (so a test sees only what its own entry point installs), everything restored after."""
    factory = logging.getLogRecordFactory()
    logging.setLogRecordFactory(logging.LogRecord)
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setLevel(logging.DEBUG)
    handler.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
    loggers = [
        logging.getLogger(),
        *(logging.getLogger(n) for n in logging.root.manager.loggerDict),
    ]
    saved = [(lg, lg.level, lg.disabled) for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.DEBUG)
        lg.disabled = False
        if lg is logging.getLogger() or not lg.propagate:
            lg.addHandler(handler)
    try:
        yield buffer
    finally:
        for lg, level, disabled in saved:
            lg.setLevel(level)
            lg.disabled = disabled
            lg.removeHandler(handler)
        logging.setLogRecordFactory(factory)
        forget_all()


def test_a_password_in_the_base_url_never_reaches_a_log_line(every_log, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with FakeLLMServer() as server:
        url = server.url.replace("://", f"://alice:{PASSWORD}@", 1) + "/v1"
        code = cli_main.main(
            [
                "survival",
                "--provider",
                "openai",
                "--base-url",
                url,
                "--model",
                "m",
                "--strategy",
                "full",
                "--probe-turns",
                "2",
                "--quiet",
            ]  # fmt: skip
        )
    out, err = capsys.readouterr()
    logged = every_log.getvalue()
    assert code == 0, err
    assert "HTTP Request: POST" in logged, "httpx logged no request: the walk saw nothing"
    for where, text in {"log": logged, "stdout": out, "stderr": err}.items():
        assert PASSWORD not in text, f"the URL's password is in the {where}"
        assert KEY not in text, f"the key is in the {where}"
    assert f"alice:{REDACTED}@" in logged


def test_a_library_logging_a_url_the_run_never_saw_is_masked_too(every_log):
    with pytest.raises(SystemExit):
        cli_main.main(["--version"])  # the CLI installs the masking whatever it runs
    logging.getLogger("some.library").warning("connecting to postgresql://bob:%s@db/x", PASSWORD)
    try:
        raise RuntimeError(f"cannot reach https://bob:{PASSWORD}@host/")
    except RuntimeError:
        logging.getLogger("another").exception("failed")
    logged = every_log.getvalue()
    assert "connecting to postgresql://bob:" in logged and "RuntimeError" in logged
    assert PASSWORD not in logged


def test_the_app_masks_every_log_line_from_its_first_page(every_log):
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    logging.getLogger("httpx").info("HTTP Request: POST http://alice:%s@host/v1", PASSWORD)
    logged = every_log.getvalue()
    assert "HTTP Request: POST http://alice:" in logged
    assert PASSWORD not in logged
