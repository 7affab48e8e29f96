"""What a provider family is: one API's body, client, stream reading, counting and batch
format, plus what it can do (`Family`'s capability fields).

A family never reads `ProviderSettings` by type: it is handed anything with the fields
of `CallSettings` (providers.settings asks the registry, so it cannot be imported here).

May import: memory/. Never providers.settings, providers.catalog or the modules that
dispatch to families (bodies, clients, send, counting, batch, sdk_errors).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from memory.types import Request, Usage

BatchState = Literal["running", "ended", "failed"]
OutcomeState = Literal["succeeded", "errored", "expired", "canceled"]


class CallSettings(Protocol):
    """The fields of `ProviderSettings` a family reads."""

    @property
    def kind(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def base_url(self) -> str | None: ...
    @property
    def temperature(self) -> float | None: ...
    @property
    def max_tokens(self) -> int: ...
    @property
    def prompt_cache(self) -> bool | None: ...


class Collected:
    """What one streamed attempt gathered: text pieces, model, usage and how it ended."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.first_at: float | None = None
        self.finish_reason: str | None = None
        self.finished = False
        self.model: str | None = None
        self.usage: Usage | None = None

    @property
    def text(self) -> str:
        return "".join(self.parts)


@dataclass(frozen=True)
class BatchLine:
    """One request of a batch: its id (unique within the batch) and the body to send."""

    custom_id: str
    body: Mapping[str, Any]
    body_json: str | None = None  # the body already as compact JSON (written as is)

    def params(self) -> dict[str, Any]:
        """The body as a dict (parsed from `body_json` when only that was given)."""
        return dict(self.body) if self.body or not self.body_json else json.loads(self.body_json)


@dataclass(frozen=True)
class BatchStatus:
    """Where a submitted batch is, in the same words for every family."""

    batch_id: str
    family: str  # the wire format: "openai" or "anthropic"
    state: BatchState
    raw_status: str
    total: int
    succeeded: int
    failed: int
    output_file_id: str | None = None
    error_file_id: str | None = None
    detail: str | None = None

    @property
    def ended(self) -> bool:
        """True when results can be collected (or the batch failed as a whole)."""
        return self.state != "running"


@dataclass(frozen=True)
class BatchOutcome:
    """One batch result as a family reads it; providers.batch turns it into a Reply."""

    custom_id: str
    state: OutcomeState
    text: str = ""
    usage: Usage | None = None
    model: str | None = None
    finish: str | None = None
    status: int | None = None  # an errored line: the HTTP status its error stands for
    error: Any = None  # an errored line's error body, as the provider gave it
    detail: str | None = None


def count_of(counts: Any, name: str) -> int:
    """An integer counter of a batch's `request_counts` (0 when absent)."""
    value = getattr(counts, name, 0)
    return value if isinstance(value, int) else 0


def opt_int(value: Any) -> int | None:
    """`value` if it is an int (not a bool), else None: usage fields may be missing."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class Family:
    """One provider API. The capability fields are what the rest of the app asks instead of
    comparing kind names; the methods are what differs on the wire."""

    kind: str  # ProviderSettings.kind
    label: str  # how error messages name it: "OpenAI", "the embedded model"
    wire: str  # the request format: "openai" (chat completions) or "anthropic" (messages)
    sdk: str  # the SDK module its client comes from
    key_env: str | None = None  # the key variable when the SDK's own endpoint is used
    needs_base_url: bool = False  # no default endpoint: a base URL must be given
    hosted: bool = False  # a provider's own API: catalog prices, a token-counting endpoint
    batch_lines: int = 0  # its batch API's per-batch limit; 0: no batch API
    batch_per_model: bool = False  # one model per batch (OpenAI's batch input files)
    prompt_cache: bool = False  # takes the session's prompt-cache switch
    app_server: bool = False  # the app starts this server: never typed, shares this machine
    warm_up: bool = False  # can prefill a prompt before its call (llama.cpp slots)
    slots: bool = False  # a call can be routed to one of the server's slots
    unreachable_hint: str = "is the server running and the URL right?"
    presets: tuple[Any, ...] = ()  # catalog presets it brings (built-ins live in catalog.py)

    @property
    def has_batch(self) -> bool:
        """Whether sweeps can be sent through this family's batch API."""
        return self.batch_lines > 0

    def check_slot(self, slot: int | None) -> int | None:
        """`slot` when this family routes calls to server slots and it is a slot number;
        ValueError otherwise (None passes: the server picks)."""
        if slot is not None and (
            not self.slots or isinstance(slot, bool) or not isinstance(slot, int) or slot < 0
        ):
            raise ValueError("slot is a slot number (0 or more) of the embedded server")
        return slot

    def endpoint_url(self, settings: CallSettings) -> str | None:
        """The base URL a call goes to (None: the SDK's default)."""
        return settings.base_url

    def greedy(self, settings: CallSettings) -> bool:
        """Whether its bodies ask for temperature 0 (the reply depends on the request alone)."""
        return settings.temperature == 0

    def build_body(
        self, request: Request, settings: CallSettings, slot: int | None = None
    ) -> dict[str, Any]:
        """The streaming request body, exactly as sent."""
        raise NotImplementedError

    def client(self, base_url: str | None, key: str, *, loopback: bool) -> Any:
        """A new SDK client (`loopback`: never through a proxy)."""
        raise NotImplementedError

    def create(self, client: Any) -> Callable[..., Any]:
        """The client's streaming create call."""
        raise NotImplementedError

    def read_event(self, event: Any, got: Collected) -> str:
        """Fold one stream event into `got`; the text it carries."""
        raise NotImplementedError

    def count(self, client: Any, body: Mapping[str, Any], timeout: float) -> tuple[int, str]:
        """The provider's own input-token count of `body` and which endpoint gave it."""
        raise NotImplementedError(f"{self.label} has no token-counting endpoint")

    def batch_submit(
        self,
        client: Any,
        lines: Sequence[BatchLine],
        *,
        timeout: float,
        metadata: Mapping[str, str] | None,
    ) -> Any:
        """Create one batch; the provider's batch object."""
        raise NotImplementedError(f"{self.label} has no batch API")

    def batch_retrieve(self, client: Any, batch_id: str, *, timeout: float) -> Any:
        """The provider's batch object, fetched again."""
        raise NotImplementedError(f"{self.label} has no batch API")

    def batch_status(self, batch: Any) -> BatchStatus:
        """A provider's batch object in common words."""
        raise NotImplementedError(f"{self.label} has no batch API")

    def batch_results(
        self, client: Any, status: BatchStatus, *, timeout: float
    ) -> Iterator[BatchOutcome]:
        """Every result of an ended batch."""
        raise NotImplementedError(f"{self.label} has no batch API")
