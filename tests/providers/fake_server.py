"""A fake LLM endpoint for the provider tests: OpenAI and Anthropic wire formats, with faults.

It listens on 127.0.0.1 in a thread, records every request (path, headers, raw body) and
answers with canned server-sent events. The model name picks the behaviour:

    ok (or anything else)   stream CANNED in a few chunks, then usage
    fault-401               bad key (the message echoes the key, as some servers do)
    fault-404               unknown model
    fault-429xN             N rate-limit answers, then ok (counted per model name)
    fault-429-always        rate-limited every time
    fault-quota             429 with OpenAI's insufficient_quota code
    fault-500               internal server error
    fault-timeout           sleeps SLOW_S before answering
    fault-stall             two chunks, then silence for SLOW_S
    fault-cut               two chunks, then the connection is dropped mid-body
    fault-early-end         two chunks, then a clean end without finish / message_stop
    fault-overloaded        (anthropic) an error event inside the 200 stream, before any text
    fault-400               a plain invalid-request error
    fault-context           the provider's own context-length error (400)
    echo-key                a reply that repeats the key it was sent (a careless endpoint)

Any path but /v1/chat/completions and /v1/messages answers 404.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import time
from collections import defaultdict
from http.server import ThreadingHTTPServer
from typing import Any

from tests.providers.local_server import LocalServer, Recorded, RecordingHandler

CANNED = ("Hello", " from", " the fake", " server.")
SLOW_S = 1.5
PROMPT_TOKENS = 42
CONTEXT_PROMPT = 130_000
CONTEXT_WINDOW = 128_000


class FakeLLMServer(LocalServer):
    """The server object: start(), url, requests, reset(), stop()."""

    def __init__(self) -> None:
        super().__init__(_Handler, _QuietServer)
        self.counts: dict[str, int] = defaultdict(int)

    def reset(self) -> None:
        with self.lock:
            self.requests.clear()
            self.counts.clear()

    def count(self, rec: Recorded) -> int:
        """Record a request; how many requests its model name has had, this one included."""
        with self.lock:
            self.requests.append(rec)
            model = str(json.loads(rec.raw).get("model", "")) if rec.raw else ""
            self.counts[model] += 1
            return self.counts[model]


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients hanging up (timeouts, cut streams) are part of the tests


def _sse_openai(model: str, text: str | None = None, *, finish: str | None = None) -> bytes:
    chunk: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "delta": {"content": text} if text is not None else {},
                "finish_reason": finish,
            }
        ],
    }
    return f"data: {json.dumps(chunk)}\n\n".encode()


def _sse_openai_usage(model: str, completion: int) -> bytes:
    chunk = {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": model,
        "choices": [],
        "usage": {
            "prompt_tokens": PROMPT_TOKENS,
            "completion_tokens": completion,
            "total_tokens": PROMPT_TOKENS + completion,
            "prompt_tokens_details": {"cached_tokens": 10},
            "completion_tokens_details": {"reasoning_tokens": 3},
        },
    }
    return f"data: {json.dumps(chunk)}\n\n".encode()


def _sse_anthropic(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def _anthropic_start(model: str) -> list[bytes]:
    return [
        _sse_anthropic(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_fake",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": PROMPT_TOKENS - 10,
                        "cache_read_input_tokens": 10,
                        "cache_creation_input_tokens": 0,
                        "output_tokens": 1,
                    },
                },
            },
        ),
        _sse_anthropic(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        _sse_anthropic("ping", {"type": "ping"}),
    ]


def _anthropic_delta(text: str) -> bytes:
    return _sse_anthropic(
        "content_block_delta",
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
    )


def _anthropic_end(completion: int) -> list[bytes]:
    return [
        _sse_anthropic("content_block_stop", {"type": "content_block_stop", "index": 0}),
        _sse_anthropic(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": completion},
            },
        ),
        _sse_anthropic("message_stop", {"type": "message_stop"}),
    ]


class _Handler(RecordingHandler):
    owner: FakeLLMServer

    # -- plumbing -------------------------------------------------------------------------

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _end_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _drop(self) -> None:
        """Close the socket mid-body: the client sees a broken chunked stream."""
        self.wfile.flush()
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def _error(
        self, family: str, status: int, kind: str, message: str, code: str | None = None
    ) -> None:
        if family == "anthropic":
            payload: dict[str, Any] = {"type": "error", "error": {"type": kind, "message": message}}
        else:
            payload = {"error": {"message": message, "type": kind, "param": None, "code": code}}
        self._json(status, payload)

    # -- the endpoint ---------------------------------------------------------------------

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        rec = self._recorded()
        raw = rec.raw
        nth = self.owner.count(rec)
        if self.path == "/v1/chat/completions":
            family = "openai"
        elif self.path == "/v1/messages":
            family = "anthropic"
        else:
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        body = json.loads(raw)
        model = str(body.get("model", ""))
        auth = self.headers.get("Authorization", "") or self.headers.get("x-api-key", "")
        key = auth.removeprefix("Bearer ").strip()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self._serve(family, model, key, nth)

    def _serve(self, family: str, model: str, key: str, nth: int) -> None:
        if model == "fault-401":
            self._error(
                family,
                401,
                "authentication_error" if family == "anthropic" else "invalid_request_error",
                f"Incorrect API key provided: {key}. You can find your API key in your account.",
                "invalid_api_key",
            )
            return
        if model == "fault-404":
            if family == "anthropic":
                self._error(family, 404, "not_found_error", f"model: {model}")
            else:
                self._error(
                    family,
                    404,
                    "invalid_request_error",
                    f"The model `{model}` does not exist or you do not have access to it.",
                    "model_not_found",
                )
            return
        limited = re.fullmatch(r"fault-429x(\d+)", model)
        if model == "fault-429-always" or (limited and nth <= int(limited.group(1))):
            self._error(
                family,
                429,
                "rate_limit_error" if family == "anthropic" else "requests",
                "Rate limit reached: 3 requests per minute. Please try again in 20ms.",
                "rate_limit_exceeded",
            )
            return
        if model == "fault-quota":
            self._error(
                family,
                429,
                "insufficient_quota",
                "You exceeded your current quota, please check your plan and billing details.",
                "insufficient_quota",
            )
            return
        if model == "fault-500":
            self._error(
                family,
                500,
                "api_error" if family == "anthropic" else "server_error",
                "The server had an error while processing your request.",
            )
            return
        if model == "fault-400":
            self._error(
                family,
                400,
                "invalid_request_error",
                "Invalid value for 'max_tokens': must be at most 4096.",
                "invalid_value",
            )
            return
        if model == "fault-context":
            if family == "anthropic":
                self._error(
                    family,
                    400,
                    "invalid_request_error",
                    f"prompt is too long: {CONTEXT_PROMPT} tokens > {CONTEXT_WINDOW} maximum",
                )
            else:
                self._error(
                    family,
                    400,
                    "invalid_request_error",
                    f"This model's maximum context length is {CONTEXT_WINDOW} tokens. However, "
                    f"your messages resulted in {CONTEXT_PROMPT} tokens. Please reduce the "
                    "length of the messages.",
                    "context_length_exceeded",
                )
            return
        if model == "fault-timeout":
            time.sleep(SLOW_S)
        echoed = ("Your key is ", key, ".") if model == "echo-key" else None
        self._stream(family, model, echoed)

    def _stream(self, family: str, model: str, echoed: tuple[str, ...] | None = None) -> None:
        self._start_stream()
        partial = model in ("fault-stall", "fault-cut", "fault-early-end")
        pieces = echoed or (CANNED[:2] if partial else CANNED)
        if family == "anthropic":
            for event in _anthropic_start(model):
                self._chunk(event)
            if model == "fault-overloaded":
                self._chunk(
                    _sse_anthropic(
                        "error",
                        {
                            "type": "error",
                            "error": {"type": "overloaded_error", "message": "Overloaded"},
                        },
                    )
                )
                self._end_stream()
                return
            for piece in pieces:
                self._chunk(_anthropic_delta(piece))
        else:
            for piece in pieces:
                self._chunk(_sse_openai(model, piece))
        if model == "fault-stall":
            time.sleep(SLOW_S)
            self._end_stream()
            return
        if model == "fault-cut":
            self._drop()
            return
        if model == "fault-early-end":
            self._end_stream()
            return
        if family == "anthropic":
            for event in _anthropic_end(len(pieces)):
                self._chunk(event)
        else:
            self._chunk(_sse_openai(model, finish="stop"))
            self._chunk(_sse_openai_usage(model, len(pieces)))
            self._chunk(b"data: [DONE]\n\n")
        self._end_stream()
