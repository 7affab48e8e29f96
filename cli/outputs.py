"""The one way results leave the process. Results go to stdout; progress, plans and notes
to stderr. Output files are checked up front (writable, no two outputs on one path) and
written by `write_output` (masked, then written whole to a temporary file and renamed over
the target); printed results go through `print_json` or the masked streams `cli.main`
installs, so no secret the run knew reaches a file or a terminal. Ctrl-C is `Interrupts`.

May touch: the files named by output flags, stdout and stderr, signal handlers.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from types import FrameType
from typing import IO, TYPE_CHECKING, Any, Protocol

from cli.parsing import UsageError
from providers.redaction import mask

if TYPE_CHECKING:
    pass


STDOUT = "-"  # `--json` with no file: the JSON goes to stdout instead of the text tables


OUTPUT_FLAGS = ("csv", "json")  # the result-file flags a command may have (`--csv`, `--json`)


def write_json(path: str, data: Any) -> None:
    """`--json`: on stdout, or the whole file written at once."""
    if path == STDOUT:
        print_json(data)
        return
    write_output(path, json.dumps(data, ensure_ascii=False, indent=2) + "\n", "--json")


def check_writable(path: str | None, flag: str) -> None:
    """Fail now, not after the run, if `path` cannot be written (nothing is created)."""
    if not path or path == STDOUT:
        return
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"cannot write {flag} {path}: it is a directory")
    folder = target.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise UsageError(f"cannot write {flag} {path}: {folder} is a file, not a directory")
    if target.exists() and not os.access(target, os.W_OK):
        raise UsageError(f"cannot write {flag} {path}: permission denied")
    if not os.access(folder, os.W_OK | os.X_OK):  # the temporary file is made beside it
        raise UsageError(f"cannot write {flag} {path}: {folder} is not writable")


def check_outputs(args: argparse.Namespace) -> None:
    """Every result-file flag of the command (`--csv FILE`, `--json FILE`) checked writable,
    and no two of them naming the same file, before the run starts."""
    named: dict[Path, str] = {}
    for flag in OUTPUT_FLAGS:
        path = getattr(args, flag, None)
        if not path or path == STDOUT:
            continue
        check_writable(path, f"--{flag}")
        key = Path(path).resolve()
        if key in named:
            raise UsageError(
                f"--{named[key]} and --{flag} both name {path}: one file cannot hold both"
            )
        named[key] = flag


class Writable(Protocol):
    """A result that writes itself as CSV and JSON (simulation, survival, tune)."""

    def to_csv(self) -> str: ...

    def to_json(self) -> str: ...


def report(
    args: argparse.Namespace,
    result: Writable,
    data: Callable[[], object],
    show: Callable[[], None],
) -> None:
    """`--json` alone: `data()` as JSON on stdout, else `show()` prints the text; then the
    result's CSV and JSON go to the `--csv` and `--json` files named."""
    if args.json == STDOUT:
        print_json(data())
    else:
        show()
    if getattr(args, "csv", None):
        write_output(args.csv, result.to_csv(), "--csv")
    write_output(args.json, result.to_json(), "--json")


def write_output(path: str | None, text: str, flag: str) -> None:
    """Write `text`, masked, to `path` whole or not at all (nothing when no path, or `-`,
    which means stdout elsewhere). A failure keeps any earlier file and is a UsageError
    naming the flag."""
    if not path or path == STDOUT:
        return
    try:
        atomic_write(Path(path), mask(text))
    except OSError as exc:
        raise UsageError(
            f"cannot write {flag} {path}: {exc.strerror or exc} (nothing written; an earlier "
            "file there is unchanged)"
        ) from None
    sys.stderr.write(f"wrote {path}\n")


def atomic_write(target: Path, text: str) -> None:
    """`text` as UTF-8 in `target`: written to a temporary file beside it, flushed to disk,
    then renamed over it, so a reader sees the old file or the whole new one, never a part."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        if target.exists():
            os.chmod(temp, target.stat().st_mode & 0o777)
        else:
            os.chmod(temp, 0o666 & ~_umask())
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def print_json(data: object) -> None:
    """Machine-readable results on stdout: one JSON document, masked, nothing else."""
    sys.stdout.write(mask(json.dumps(data, ensure_ascii=False, indent=2)) + "\n")
    sys.stdout.flush()


class MaskedStream:
    """A text stream that masks every known secret in each piece written to it (`print`
    writes its text in one piece, so a printed secret is never split)."""

    def __init__(self, inner: IO[str]) -> None:
        self.inner = inner

    def write(self, text: str) -> int:
        self.inner.write(mask(text))
        return len(text)

    def flush(self) -> None:
        self.inner.flush()

    def isatty(self) -> bool:
        return bool(getattr(self.inner, "isatty", lambda: False)())

    def fileno(self) -> int:
        return self.inner.fileno()

    def close(self) -> None:
        self.flush()
        self.inner.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@contextmanager
def masked_output() -> Iterator[None]:
    """stdout and stderr masked for the duration of one command."""
    out, err = sys.stdout, sys.stderr
    masked_out, masked_err = MaskedStream(out), MaskedStream(err)
    sys.stdout, sys.stderr = masked_out, masked_err
    try:
        yield
    finally:
        try:
            for stream in (masked_out, masked_err):
                with suppress(BrokenPipeError, ValueError):  # the reader left, or it closed
                    stream.flush()
        finally:
            sys.stdout, sys.stderr = out, err


def text_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain-text table: the first column left-aligned, the others right-aligned."""
    cells = [[str(h) for h in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = []
    for j, row in enumerate(cells):
        lines.append(
            "  ".join(
                c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(row)
            )
        )
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


class Interrupts:
    """Ctrl-C once: finish the calls in flight and keep the rows so far. Twice: stop now."""

    def __init__(self, cancel: threading.Event) -> None:
        self.cancel = cancel
        self.previous: Callable[[int, FrameType | None], Any] | int | None = None
        self.active = threading.current_thread() is threading.main_thread()

    def __enter__(self) -> Interrupts:
        if self.active:
            self.previous = signal.getsignal(signal.SIGINT)
            signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.cancel.is_set():
            raise KeyboardInterrupt
        self.cancel.set()
        sys.stderr.write("\ninterrupted: finishing the calls in flight, keeping the rows so far\n")

    def __exit__(self, *exc: object) -> None:
        if self.active:
            signal.signal(signal.SIGINT, self.previous)
