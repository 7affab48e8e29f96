"""A local stand-in for a provider: scripted replies, fixed latency, real streaming in chunks.

For benchmarks, fault injection and fast UI tests — never a replacement for the real path,
which the provider tests exercise with the official SDKs and the embedded model.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from memory.types import Completion, ModelFn, Request, Usage


@dataclass(frozen=True)
class FakeReply:
    """Shaped like providers.Reply."""

    text: str
    usage: Usage | None
    body: Mapping[str, Any] | None
    complete: bool = True
    error: Exception | None = None
    latency_s: float | None = None
    ttft_s: float | None = None
    model: str | None = "fake"


class FakeProviderError(Exception):
    """Raised into a Reply by the fake when a fault is injected."""


@dataclass
class FakeTransport:
    """Replies 'Reply to: <message>' (or `reply_fn`'s text) in `chunks` pieces over `latency` s."""

    latency: float = 0.0
    chunks: int = 4
    reply_fn: Callable[[Request], str] | None = None
    fail_when: Callable[[Request], bool] | None = None  # inject a failure for some requests
    summary_text: str = "The user shared some details earlier."
    calls: list[dict[str, Any]] = field(default_factory=list)

    def body(self, request: Request, settings: Any) -> dict[str, Any]:
        return {
            "model": getattr(settings, "model", "fake"),
            "messages": [{"role": "system", "content": request.system}]
            + [m.as_dict() for m in request.messages],
        }

    def stream(
        self, request: Request, settings: Any, on_delta: Callable[[str], None] | None = None
    ) -> FakeReply:
        started = time.perf_counter()
        body = self.body(request, settings)
        self.calls.append(body)
        text = (
            self.reply_fn(request) if self.reply_fn else f"Reply to: {request.messages[-1].content}"
        )
        fail = self.fail_when is not None and self.fail_when(request)
        pieces = _split(text, self.chunks)
        ttft = None
        for piece in pieces:
            time.sleep(self.latency / max(1, len(pieces)))
            if ttft is None:
                ttft = time.perf_counter() - started
            if on_delta:
                on_delta(piece)
        usage = Usage(input=request.tokens.with_overhead, output=len(text.split()))
        if fail:
            return FakeReply(
                "", None, body, complete=False, error=FakeProviderError("injected failure")
            )
        return FakeReply(text, usage, body, latency_s=time.perf_counter() - started, ttft_s=ttft)

    def as_model_fn(self, settings: Any) -> ModelFn:
        def model(request: Request) -> Completion:
            if "JSON" in request.system:
                return Completion('{"set": {}, "delete": []}')
            return Completion(self.summary_text)

        return model


def _split(text: str, n: int) -> list[str]:
    size = max(1, -(-len(text) // max(1, n)))
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]
