"""The request plumbing both fake endpoints share: a local threaded HTTP server, a handler base
that records each request and answers JSON, and the record of one request."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


@dataclass(frozen=True)
class Recorded:
    """One request as it reached the server."""

    path: str
    headers: dict[str, str]
    raw: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.raw)


class LocalServer:
    """Serves a handler class on 127.0.0.1 (a free port) in a daemon thread.

    start(), url, stop() (or `with server:`); `lock` guards what the handlers write;
    `cleared()` is one test's view, records reset before and after. The handler sees this
    object as its `owner`.
    """

    def __init__(
        self,
        handler: type[RecordingHandler],
        server_class: type[ThreadingHTTPServer] = ThreadingHTTPServer,
    ) -> None:
        self.requests: list[Recorded] = []
        self.lock = threading.Lock()
        bound = type("Handler", (handler,), {"owner": self})
        self.httpd = server_class(("127.0.0.1", 0), bound)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> Self:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def reset(self) -> None:
        with self.lock:
            self.requests.clear()

    @contextlib.contextmanager
    def cleared(self) -> Iterator[Self]:
        self.reset()
        yield self
        self.reset()

    def record(self, rec: Recorded) -> None:
        with self.lock:
            self.requests.append(rec)


class RecordingHandler(BaseHTTPRequestHandler):
    """HTTP/1.1, silent, with the two things every fake route does: read and record the
    request body, and answer JSON."""

    owner: LocalServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def _recorded(self) -> Recorded:
        """The request as it came (its body read here); the caller records it."""
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        return Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, raw)

    def _send(self, status: int, raw: bytes, ctype: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def _json(self, status: int, payload: Any) -> None:
        self._send(status, json.dumps(payload).encode())
