"""Start the real app with `streamlit run` and drive it in Debian's headless Chromium.

Shared by every browser test. Never `playwright install`: the browser is /usr/bin/chromium,
installed by scripts/setup.sh --test.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_healthy(url: str, timeout_s: float, alive: Callable[[], bool] = lambda: True) -> bool:
    """Whether the Streamlit server at `url` answered its health check within `timeout_s`
    (False as soon as `alive()` is False: its process ended)."""
    deadline = time.monotonic() + timeout_s
    while alive() and time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return True
        except OSError:
            pass
        time.sleep(0.3)
    return False


@contextlib.contextmanager
def running_app(
    script: str = "app.py", *, env: dict[str, str] | None = None, log: Path | None = None
) -> Iterator[str]:
    """Serve `script` on a free loopback port; yields its URL; stops it afterwards."""
    port = free_port()
    log = log or ARTIFACTS / f"streamlit-{port}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable, "-m", "streamlit", "run", script,
        "--server.address", "127.0.0.1", "--server.port", str(port),
        "--server.headless", "true", "--browser.gatherUsageStats", "false",
        "--server.fileWatcherType", "none",
    ]  # fmt: skip
    with log.open("w") as out:
        proc = subprocess.Popen(
            command,
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
        )
        url = f"http://127.0.0.1:{port}"
        try:
            if not wait_healthy(url, 60, alive=lambda: proc.poll() is None):
                raise RuntimeError(f"the app did not start; see {log}")
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()


@contextlib.contextmanager
def chromium(width: int = 1600, height: int = 1300) -> Iterator[object]:
    """A fresh headless Chromium page."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser.new_page(viewport={"width": width, "height": height})
        finally:
            browser.close()


def wait_for_chat_input(page, timeout_ms: int) -> None:
    """Wait until the chat input takes messages again (every lane has ended its turn)."""
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=stChatInputTextArea]').disabled",
        timeout=timeout_ms,
    )


def wait_for_idle(page, quiet_ms: int = 800, timeout_ms: int = 60_000) -> None:
    """Wait until the app has run no script for `quiet_ms` in a row. A click that reruns the
    app and then calls st.rerun() runs the script twice; widgets drawn by the first run can
    be replaced by the second (new keys), and text typed between the two is lost."""
    page.wait_for_function(
        """(quiet) => {
            const app = document.querySelector('[data-testid=stApp]');
            const idle = app && app.getAttribute('data-test-script-state') === 'notRunning';
            const now = performance.now();
            if (!idle) { window.__memoryLabBusyAt = now; return false; }
            return now - (window.__memoryLabBusyAt ?? 0) >= quiet;
        }""",
        arg=quiet_ms,
        timeout=timeout_ms,
        polling=100,
    )
