"""A fake batch endpoint for the real openai and anthropic SDKs: files, batches, results.

Kept apart from fake_server.py (the streaming endpoint and its faults); both stand on
local_server.py. It listens on 127.0.0.1 in a thread, records every request, and speaks:

    POST /v1/files                         (multipart, purpose=batch)     OpenAI
    POST /v1/batches, GET /v1/batches/{id}, GET /v1/files/{id}/content    OpenAI
    POST /v1/messages/batches, GET /v1/messages/batches/{id}[/results]    Anthropic
    POST /v1/messages/count_tokens                                        Anthropic
    POST /v1/responses/input_tokens                                       OpenAI

A batch answers "in progress" to its first `polls_before_done` retrieves, then ends. Each
line's answer is `answer(body)`: by default the text of every message in the body, so a
reply "recalls" a fact exactly when the fact is in the payload. Faults, per custom_id or
per model name:

    errored / model fault-400    the line fails with an invalid-request error
    expired / model batch-expire the line is never run: the batch expires (OpenAI status
                                 "expired", Anthropic result type "expired")
    server.fail_next             custom_ids failing in the NEXT batch only (then they succeed)
    server.expire_next           custom_ids expiring in the NEXT batch only

Two providers' batch protocols in one fake, so tests and the bench start one server for both.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tests.providers.local_server import LocalServer, RecordingHandler


def echo(body: Mapping[str, Any]) -> str:
    """Every message's text (and the system prompt), joined: the default 'model'."""
    parts: list[str] = []
    system = body.get("system")
    if isinstance(system, str):
        parts.append(system)
    for message in body.get("messages") or ():
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
    return "Recalled: " + " | ".join(parts[:-1])


def token_count(body: Mapping[str, Any]) -> int:
    """A stand-in token count: words of every message, plus 3 per message."""
    messages = body.get("messages") or ()
    words = sum(len(str(m.get("content", "")).split()) for m in messages)
    return words + 3 * len(messages) + len(str(body.get("system", "")).split())


@dataclass
class FakeBatch:
    """One batch as the server holds it."""

    id: str
    family: str
    lines: list[dict[str, Any]]  # {"custom_id", "body"}
    polls: int = 0
    outcome: dict[str, str] = field(default_factory=dict)  # custom_id -> ok/errored/expired
    input_file_id: str | None = None


class FakeBatchServer(LocalServer):
    """start(), url, requests, batches, reset(), stop(); `answer` decides each reply's text."""

    def __init__(self, answer: Callable[[Mapping[str, Any]], str] = echo) -> None:
        super().__init__(_Handler)
        self.answer = answer
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, FakeBatch] = {}
        self.polls_before_done = 1
        self.fail_next: set[str] = set()
        self.expire_next: set[str] = set()
        self.busy_s = 0.0  # time spent handling requests (the provider's side of the work)
        self._ids = itertools.count(1)

    def reset(self) -> None:
        with self.lock:
            self.requests.clear()
            self.files.clear()
            self.batches.clear()
            self.polls_before_done = 1
            self.fail_next.clear()
            self.expire_next.clear()

    def new_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids):06d}"

    def add_batch(self, family: str, lines: list[dict[str, Any]]) -> FakeBatch:
        with self.lock:
            batch = FakeBatch(self.new_id("msgbatch_" if family == "anthropic" else "batch_"),
                              family, lines)  # fmt: skip
            for line in lines:
                cid, model = line["custom_id"], str(line["body"].get("model", ""))
                if cid in self.fail_next or model == "fault-400":
                    batch.outcome[cid] = "errored"
                elif cid in self.expire_next or model == "batch-expire":
                    batch.outcome[cid] = "expired"
                else:
                    batch.outcome[cid] = "ok"
            self.fail_next.clear()
            self.expire_next.clear()
            self.batches[batch.id] = batch
            return batch

    def done(self, batch: FakeBatch) -> bool:
        return batch.polls > self.polls_before_done


def _completion(model: str, text: str, prompt: int) -> dict[str, Any]:
    return {
        "id": "chatcmpl-batch",
        "object": "chat.completion",
        "created": 1700000000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": len(text.split()),
            "total_tokens": prompt + len(text.split()),
            "prompt_tokens_details": {"cached_tokens": 0},
        },
    }


def _message(model: str, text: str, prompt: int) -> dict[str, Any]:
    return {
        "id": "msg_batch",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": prompt - 4,
            "cache_read_input_tokens": 4,
            "cache_creation_input_tokens": 0,
            "output_tokens": len(text.split()),
        },
    }


class _Handler(RecordingHandler):
    owner: FakeBatchServer

    def _read(self) -> bytes:
        rec = self._recorded()
        self.owner.record(rec)
        return rec.raw

    def handle_one_request(self) -> None:
        started = time.perf_counter()
        try:
            super().handle_one_request()
        finally:
            with self.owner.lock:
                self.owner.busy_s += time.perf_counter() - started

    def do_POST(self) -> None:  # noqa: N802
        raw = self._read()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            path = self.path.split("?")[0]
            if path == "/v1/files":
                self._upload(raw)
            elif path == "/v1/batches":
                self._openai_create(json.loads(raw))
            elif path == "/v1/messages/batches":
                self._anthropic_create(json.loads(raw))
            elif path == "/v1/messages/count_tokens":
                self._json(200, {"input_tokens": token_count(json.loads(raw))})
            elif path == "/v1/responses/input_tokens":
                payload = json.loads(raw)
                count = token_count({"messages": payload.get("input") or []})
                self._json(200, {"object": "response.input_tokens", "input_tokens": count})
            else:
                self._json(404, {"error": {"message": f"no route {path}", "type": "not_found"}})

    def do_GET(self) -> None:  # noqa: N802
        self._read()
        path = self.path.split("?")[0]
        parts = path.strip("/").split("/")
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            if parts[:2] == ["v1", "batches"] and len(parts) == 3:
                self._openai_retrieve(parts[2])
            elif parts[:2] == ["v1", "files"] and len(parts) == 4 and parts[3] == "content":
                data = self.owner.files.get(parts[2])
                if data is None:
                    self._json(404, {"error": {"message": "no such file", "type": "not_found"}})
                else:
                    self._send(200, data, "application/octet-stream")
            elif parts[:3] == ["v1", "messages", "batches"] and len(parts) == 4:
                self._anthropic_retrieve(parts[3])
            elif parts[:3] == ["v1", "messages", "batches"] and len(parts) == 5:
                self._anthropic_results(parts[3])
            else:
                self._json(404, {"error": {"message": f"no route {path}", "type": "not_found"}})

    # -- OpenAI ---------------------------------------------------------------------------

    def _upload(self, raw: bytes) -> None:
        # a plain multipart split (the email parser takes seconds on a 30 MB batch file)
        boundary = self.headers["Content-Type"].split("boundary=", 1)[1].strip('"').encode()
        data, purpose = b"", ""
        for part in raw.split(b"--" + boundary):
            head, sep, payload = part.partition(b"\r\n\r\n")
            if not sep:
                continue
            payload = payload.removesuffix(b"\r\n")
            if b'name="file"' in head:
                data = payload
            elif b'name="purpose"' in head:
                purpose = payload.decode()
        file_id = self.owner.new_id("file-")
        self.owner.files[file_id] = data
        self._json(
            200,
            {
                "id": file_id,
                "object": "file",
                "bytes": len(data),
                "created_at": 1700000000,
                "filename": "sweep.jsonl",
                "purpose": purpose,
                "status": "processed",
            },
        )

    def _openai_create(self, payload: dict[str, Any]) -> None:
        data = self.owner.files.get(payload.get("input_file_id", ""))
        if data is None:
            self._json(400, {"error": {"message": "unknown input file", "type": "invalid_request_error"}})  # fmt: skip
            return
        lines = []
        for text in data.decode().splitlines():
            item = json.loads(text)
            if item.get("url") != "/v1/chat/completions" or item.get("method") != "POST":
                self._json(400, {"error": {"message": "bad line", "type": "invalid_request_error"}})  # fmt: skip
                return
            if item["body"].get("stream"):
                self._json(400, {"error": {"message": "stream is not supported in batches", "type": "invalid_request_error"}})  # fmt: skip
                return
            lines.append({"custom_id": item["custom_id"], "body": item["body"]})
        batch = self.owner.add_batch("openai", lines)
        batch.input_file_id = payload["input_file_id"]
        self._json(200, self._openai_batch(batch))

    def _openai_retrieve(self, batch_id: str) -> None:
        batch = self.owner.batches.get(batch_id)
        if batch is None:
            self._json(404, {"error": {"message": "no such batch", "type": "not_found"}})
            return
        batch.polls += 1
        self._json(200, self._openai_batch(batch))

    def _openai_batch(self, batch: FakeBatch) -> dict[str, Any]:
        done = self.owner.done(batch)
        expired = any(v == "expired" for v in batch.outcome.values())
        status = "validating" if batch.polls == 0 else "in_progress"
        output_id = error_id = None
        ok = sum(v == "ok" for v in batch.outcome.values())
        bad = len(batch.lines) - ok
        if done:
            status = "expired" if expired else "completed"
            output_id, error_id = self._openai_files(batch)
        return {
            "id": batch.id,
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "errors": None,
            "input_file_id": batch.input_file_id,
            "completion_window": "24h",
            "status": status,
            "output_file_id": output_id,
            "error_file_id": error_id,
            "created_at": 1700000000,
            "request_counts": {
                "total": len(batch.lines),
                "completed": ok if done else 0,
                "failed": bad if done else 0,
            },
            "metadata": None,
        }

    def _openai_files(self, batch: FakeBatch) -> tuple[str | None, str | None]:
        out, err = [], []
        for n, line in enumerate(batch.lines):
            cid, body = line["custom_id"], line["body"]
            outcome = batch.outcome[cid]
            rid = f"batch_req_{n}"
            if outcome == "ok":
                text = self.owner.answer(body)
                response = {"status_code": 200, "request_id": rid,
                            "body": _completion(body["model"], text, token_count(body))}  # fmt: skip
                out.append({"id": rid, "custom_id": cid, "response": response, "error": None})
            elif outcome == "errored":
                response = {"status_code": 400, "request_id": rid, "body": {"error": {
                    "message": "Invalid value for 'max_tokens'.", "type": "invalid_request_error",
                    "param": "max_tokens", "code": None}}}  # fmt: skip
                err.append({"id": rid, "custom_id": cid, "response": response, "error": None})
            else:
                err.append({"id": rid, "custom_id": cid, "response": None, "error": {
                    "code": "batch_expired", "message": "This request could not be executed "
                    "before the completion window expired."}})  # fmt: skip
        ids: list[str | None] = []
        for items in (out, err):
            if not items:
                ids.append(None)
                continue
            file_id = f"file-{batch.id}-{'out' if items is out else 'err'}"
            self.owner.files[file_id] = "".join(json.dumps(i) + "\n" for i in items).encode()
            ids.append(file_id)
        return ids[0], ids[1]

    # -- Anthropic ------------------------------------------------------------------------

    def _anthropic_create(self, payload: dict[str, Any]) -> None:
        lines = []
        for item in payload.get("requests") or ():
            if item["params"].get("stream"):
                self._json(400, {"type": "error", "error": {"type": "invalid_request_error",
                                 "message": "stream is not supported in batches"}})  # fmt: skip
                return
            lines.append({"custom_id": item["custom_id"], "body": item["params"]})
        batch = self.owner.add_batch("anthropic", lines)
        self._json(200, self._anthropic_batch(batch))

    def _anthropic_retrieve(self, batch_id: str) -> None:
        batch = self.owner.batches.get(batch_id)
        if batch is None:
            self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": "no such batch"}})  # fmt: skip
            return
        batch.polls += 1
        self._json(200, self._anthropic_batch(batch))

    def _anthropic_batch(self, batch: FakeBatch) -> dict[str, Any]:
        done = self.owner.done(batch)
        counts = {"processing": len(batch.lines), "succeeded": 0, "errored": 0,
                  "canceled": 0, "expired": 0}  # fmt: skip
        if done:
            counts["processing"] = 0
            for outcome in batch.outcome.values():
                counts["succeeded" if outcome == "ok" else outcome] += 1
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": "ended" if done else "in_progress",
            "request_counts": counts,
            "ended_at": "2026-11-30T12:00:00Z" if done else None,
            "created_at": "2026-11-30T11:00:00Z",
            "expires_at": "2026-12-01T11:00:00Z",
            "cancel_initiated_at": None,
            "archived_at": None,
            "results_url": f"{self.owner.url}/v1/messages/batches/{batch.id}/results"
            if done
            else None,
        }

    def _anthropic_results(self, batch_id: str) -> None:
        batch = self.owner.batches.get(batch_id)
        if batch is None or not self.owner.done(batch):
            self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": "no results"}})  # fmt: skip
            return
        out = []
        for line in reversed(batch.lines):  # results come in no particular order
            cid, body = line["custom_id"], line["body"]
            outcome = batch.outcome[cid]
            if outcome == "ok":
                message = _message(body["model"], self.owner.answer(body), token_count(body))
                result: dict[str, Any] = {"type": "succeeded", "message": message}
            elif outcome == "errored":
                result = {"type": "errored", "error": {"type": "error", "error": {
                    "type": "invalid_request_error", "message": "max_tokens: too large"}}}  # fmt: skip
            else:
                result = {"type": "expired"}
            out.append(json.dumps({"custom_id": cid, "result": result}) + "\n")
        self._send(200, "".join(out).encode(), "application/binary")
