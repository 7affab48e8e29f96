"""`memory-lab app`: start the Streamlit app with the project's offline-safe flags.

Where the app lives: `app.py` and `pages/` sit beside the `cli` package, both in a checkout
and in an installed copy (the wheel ships them as the top-level module `app` and the folder
`pages/`), so the same lookup works for `pip install .`, `pip install -e .` and `python -m cli`.
May touch: the process itself (it becomes Streamlit); nothing else.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from cli.parsing import EXIT_OK, HelpFormatter, UsageError, host_address, in_range

HOME = Path(__file__).resolve().parent.parent
PORTS = (1, 65535)
port_number = in_range(*PORTS)

# The settings of .streamlit/config.toml, as flags: an installed copy has no such file, and
# these are what keep the app local and quiet (loopback only, no usage statistics, no browser).
OFFLINE_FLAGS: tuple[str, ...] = (
    "--server.headless", "true",
    "--browser.gatherUsageStats", "false",
    "--runner.parallelMaxWorkers", "10",
    "--client.toolbarMode", "minimal",
)  # fmt: skip


def app_script() -> Path:
    """The main page script; UsageError when the installed copy lacks it."""
    script = HOME / "app.py"
    if not script.is_file() or not (HOME / "pages").is_dir():
        raise UsageError(f"the app is not installed beside the cli package (looked in {HOME})")
    return script


def _port(args: argparse.Namespace) -> int:
    if args.port is not None:
        return int(args.port)
    raw = os.environ.get("PORT", "").strip() or "8501"
    if not raw.isdigit() or not PORTS[0] <= int(raw) <= PORTS[1]:
        raise UsageError(f"PORT={raw!r} is not a port number (1-65535): use --port N")
    return int(raw)


def command(args: argparse.Namespace) -> list[str]:
    """The Streamlit command line `memory-lab app` runs."""
    return [
        sys.executable, "-m", "streamlit", "run", str(app_script()),
        "--server.address", args.address,
        "--server.port", str(_port(args)),
        *OFFLINE_FLAGS,
        *args.streamlit_args,
    ]  # fmt: skip


def exposure_warning(address: str) -> str | None:
    """The warning printed when the app listens beyond loopback (None on loopback): it has
    no authentication, so anyone who reaches the port can use it and its endpoints."""
    from providers import endpoints
    from providers.clients import host_address

    host = address.strip().strip("[]").lower().rstrip(".")
    found = host_address(host)
    if host == "localhost" or (found is not None and found.is_loopback):
        return None
    if endpoints.fixed_mode():
        limits = f"base URLs are fixed ({endpoints.FIXED_ENV})"
    elif endpoints.allowed_urls() is not None:
        limits = f"lanes may call only the endpoints in {endpoints.ALLOW_ENV}"
    else:
        limits = (
            f"any user can point a lane at any host: set {endpoints.ALLOW_ENV}=URL,URL "
            f"(an allowlist) or {endpoints.FIXED_ENV}=1 (no editable URLs)"
        )
    return (
        f"warning: listening on {address}, beyond this machine: the app has no "
        f"authentication, so anyone who can reach the port can use it; {limits}. "
        "See docs/scaling.md."
    )


def run(args: argparse.Namespace) -> int:
    argv = command(args)
    if args.print_command:
        print(shlex.join(argv))
        return EXIT_OK
    warning = exposure_warning(args.address)
    if warning:
        sys.stderr.write(warning + "\n")
    sys.stderr.write(f"Memory Lab on http://{args.address}:{_port(args)} (Ctrl-C stops it)\n")
    sys.stderr.flush()
    os.execv(sys.executable, argv)  # Streamlit owns the process (and Ctrl-C) from here


def add_arguments(a: argparse.ArgumentParser) -> None:
    """`memory-lab app`'s arguments."""
    a.description = (
        "Start the Memory Lab app on this machine: loopback only, no usage "
        "statistics, no browser opened for you. Any argument after `--` goes to Streamlit."
    )
    a.epilog = (
        "examples:\n"
        "  memory-lab app                      # http://127.0.0.1:8501\n"
        "  memory-lab app --port 8600\n"
        "  memory-lab app -- --logger.level debug"
    )
    a.formatter_class = HelpFormatter
    a.add_argument("--port", type=port_number, help="port (default: $PORT, else 8501)")
    a.add_argument(
        "--address", default="127.0.0.1", type=host_address, help="address to listen on (127.0.0.1)"
    )
    a.add_argument(
        "--print-command", action="store_true", help="print the Streamlit command and stop"
    )
    a.add_argument("streamlit_args", nargs="*", help="extra Streamlit flags, after `--`")
