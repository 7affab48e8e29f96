"""Presets: the endpoints a lane can use, each with its key variable and a few models.

Prices are US dollars per million tokens as publicly listed by each provider (as of 2025);
they are approximate, change often, and are meant to be edited here or overridden in the
UI. Local endpoints cost nothing per token. Context windows are the model's own, except
where the serving software imposes a smaller one by default (noted per preset).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

import providers.embedded as embedded
import providers.endpoints as endpoints
from memory.types import Usage
from providers.families import FAMILIES, Family, family
from providers.settings import Kind, ProviderChoice, ProviderSettings

PRICES_NOTE = "approximate list prices in USD per million tokens (2025); edit to match your plan"


@dataclass(frozen=True)
class Price:
    """What a model costs, in US dollars per million input and output tokens."""

    model: str
    input_per_m: float
    output_per_m: float
    note: str = ""
    cached_input_per_m: float | None = None  # prompt-cache reads, where the provider lists them
    cache_write_per_m: float | None = None  # prompt-cache writes (Anthropic)

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        """USD for this many input and output tokens."""
        return (input_tokens * self.input_per_m + output_tokens * self.output_per_m) / 1_000_000


@dataclass(frozen=True)
class ModelInfo:
    """One model a preset offers: its context window and approximate prices."""

    name: str
    context_window: int | None
    input_per_m: float | None = None
    output_per_m: float | None = None
    note: str = ""
    # prompt-cache prices: tokens read from the cache, and (Anthropic) written to it
    cached_input_per_m: float | None = None
    cache_write_per_m: float | None = None

    @property
    def price(self) -> Price | None:
        """This model's Price, or None when the catalog does not price it."""
        if self.input_per_m is None or self.output_per_m is None:
            return None
        return Price(
            self.name,
            self.input_per_m,
            self.output_per_m,
            cached_input_per_m=self.cached_input_per_m,
            cache_write_per_m=self.cache_write_per_m,
        )

    def cost(self, usage: Usage | None) -> float | None:
        """What a call with this usage cost in USD, or None when prices or counts are unknown.
        Cached and cache-written input tokens are priced at the cache prices when listed."""
        if usage is None or self.input_per_m is None or self.output_per_m is None:
            return None
        if usage.input is None or usage.output is None:
            return None
        uncached, cached, written = input_split(usage)
        read_price = (
            self.input_per_m if self.cached_input_per_m is None else self.cached_input_per_m
        )
        write_price = self.input_per_m if self.cache_write_per_m is None else self.cache_write_per_m
        tokens_in = uncached * self.input_per_m + cached * read_price + written * write_price
        return (tokens_in + usage.output * self.output_per_m) / 1_000_000


def input_split(usage: Usage) -> tuple[int, int, int]:
    """A call's input tokens as (uncached, read from the prompt cache, written to it)."""
    cached = int(usage.details.get("cached_tokens", 0) or 0)
    written = int(usage.details.get("cache_write_tokens", 0) or 0)
    return max(0, (usage.input or 0) - cached - written), cached, written


@dataclass(frozen=True)
class Preset:
    """An endpoint a lane can talk to, with the defaults to build its ProviderSettings."""

    name: str
    label: str
    kind: Kind
    description: str
    base_url: str | None = None
    key_env: str | None = None
    models: tuple[ModelInfo, ...] = ()
    url_editable: bool = False
    timeout: float = 60.0  # seconds without a byte before giving up

    @property
    def family(self) -> Family:
        """The provider family this preset's endpoint speaks (providers/families/)."""
        return family(self.kind)

    @property
    def needs_key(self) -> bool:
        """Whether a call fails without a key (local endpoints do not need one)."""
        return self.key_env is not None

    @property
    def default_model(self) -> str | None:
        """The first listed model, or None when the user must name one."""
        return self.models[0].name if self.models else None

    def model(self, name: str) -> ModelInfo | None:
        """The catalog entry for a model name, if this preset lists it."""
        for info in self.models:
            if info.name == name:
                return info
        return None

    def settings(self, model: str | None = None, **overrides: Any) -> ProviderSettings:
        """ProviderSettings for this preset: the given (or default) model, plus overrides.

        The context window comes from the catalog unless given; for a model the catalog
        does not list it stays None (unknown), rather than a guess.
        """
        name = model or self.default_model
        if not name:
            raise ValueError(f"the {self.label} preset needs a model name")
        info = self.model(name)
        values: dict[str, Any] = {
            "base_url": self.base_url,
            "key_env": self.key_env,
            "context_window": info.context_window if info else None,
            "timeout": self.timeout,
        }
        values.update(overrides)
        return ProviderSettings(self.kind, name, **values)


def _embedded_preset() -> Preset:
    window = embedded.context_window()
    return Preset(
        name="embedded",
        label="Embedded (offline)",
        kind="embedded",
        timeout=300.0,  # 8 lanes re-reading long prompts on 2 cores can take a minute
        description=(
            "small local model (SmolLM2-135M), runs inside the app with no key and no "
            f"internet; {window:,}-token context per request. It is weak: it may ignore facts "
            "that are right in its prompt and invents confident answers."
        ),
        models=(
            ModelInfo(
                embedded.MODEL_NAME,
                window,
                0.0,
                0.0,
                note=f"SmolLM2-135M-Instruct Q4_1 via llama.cpp; {window:,} tokens per lane",
            ),
        ),
    )


LOCAL_TIMEOUT = 300.0  # local models can be slow to load and to read a long prompt


def _hosted(
    name: str, label: str, kind: Kind, key_env: str, description: str, *models: ModelInfo
) -> Preset:
    """A hosted API: its SDK's own endpoint (or `base_url` in `kind`'s format) and its key."""
    return Preset(name, label, kind, description, key_env=key_env, models=models)


def _local(name: str, label: str, base_url: str, description: str, *models: ModelInfo) -> Preset:
    """An OpenAI-compatible server on this machine: no key needed, URL editable, patient."""
    return Preset(
        name,
        label,
        "openai_compatible",
        description,
        base_url=base_url,
        models=models,
        url_editable=True,
        timeout=LOCAL_TIMEOUT,
    )


_OLLAMA_CTX = "Ollama's default num_ctx"

_PRESETS: tuple[Preset, ...] = (
    _embedded_preset(),
    _hosted(
        "openai",
        "OpenAI",
        "openai",
        "OPENAI_API_KEY",
        "OpenAI chat completions; needs OPENAI_API_KEY.",
        ModelInfo("gpt-4.1-nano", 1_047_576, 0.10, 0.40, cached_input_per_m=0.025),
        ModelInfo("gpt-4o-mini", 128_000, 0.15, 0.60, cached_input_per_m=0.075),
        ModelInfo("gpt-4.1-mini", 1_047_576, 0.40, 1.60, cached_input_per_m=0.10),
        ModelInfo("gpt-4.1", 1_047_576, 2.00, 8.00, cached_input_per_m=0.50),
        ModelInfo("o4-mini", 200_000, 1.10, 4.40, "reasoning: no temperature", 0.275),
        ModelInfo("gpt-5-mini", 400_000, 0.25, 2.00, "reasoning: no temperature", 0.025),
        ModelInfo("gpt-4o", 128_000, 2.50, 10.00, cached_input_per_m=1.25),
    ),
    _hosted(
        "anthropic",
        "Anthropic",
        "anthropic",
        "ANTHROPIC_API_KEY",
        "Anthropic messages API; needs ANTHROPIC_API_KEY. Temperature is not sent.",
        ModelInfo("claude-haiku-4-5", 200_000, 1.00, 5.00, "", 0.10, 1.25),
        ModelInfo("claude-sonnet-4-5", 200_000, 3.00, 15.00, "", 0.30, 3.75),
        ModelInfo("claude-opus-4-5", 200_000, 5.00, 25.00, "", 0.50, 6.25),
    ),
    replace(
        _hosted(
            "groq",
            "Groq",
            "openai_compatible",
            "GROQ_API_KEY",
            "Groq's OpenAI-compatible API; needs GROQ_API_KEY.",
            ModelInfo("llama-3.1-8b-instant", 131_072, 0.05, 0.08),
            ModelInfo("llama-3.3-70b-versatile", 131_072, 0.59, 0.79),
            ModelInfo("openai/gpt-oss-20b", 131_072, 0.10, 0.50),
            ModelInfo("openai/gpt-oss-120b", 131_072, 0.15, 0.75),
        ),
        base_url="https://api.groq.com/openai/v1",
    ),
    _local(
        "ollama",
        "Ollama (local)",
        "http://127.0.0.1:11434/v1",
        "Ollama on this machine; no key. Ollama serves a 4,096-token context unless "
        "num_ctx is raised, whatever the model supports.",
        ModelInfo("llama3.2:3b", 4_096, 0.0, 0.0, note=_OLLAMA_CTX),
        ModelInfo("qwen2.5:7b", 4_096, 0.0, 0.0, note=_OLLAMA_CTX),
        ModelInfo("gemma3:4b", 4_096, 0.0, 0.0, note=_OLLAMA_CTX),
    ),
    _local(
        "vllm",
        "vLLM (local)",
        "http://127.0.0.1:8000/v1",
        "A vLLM server on this machine; no key. Name the model it serves.",
        ModelInfo("Qwen/Qwen2.5-1.5B-Instruct", 32_768, 0.0, 0.0),
        ModelInfo("meta-llama/Llama-3.1-8B-Instruct", 131_072, 0.0, 0.0),
    ),
    _local(
        "lmstudio",
        "LM Studio (local)",
        "http://127.0.0.1:1234/v1",
        "LM Studio's local server; no key. Name the model loaded in LM Studio.",
        ModelInfo("qwen2.5-7b-instruct", 4_096, 0.0, 0.0, note="LM Studio default"),
    ),
    replace(
        _local(
            "custom",
            "Custom URL",
            "http://127.0.0.1:8080/v1",
            "Any OpenAI-compatible endpoint: give its base URL (…/v1), model and key.",
        ),
        timeout=60.0,
    ),
)


class _Presets(Mapping[str, Preset]):
    """The catalog's presets, then those of families registered later (read live)."""

    def _all(self) -> dict[str, Preset]:
        found = {p.name: p for p in _PRESETS}
        for f in FAMILIES.values():
            found.update((p.name, p) for p in f.presets if p.name not in found)
        return found

    def __getitem__(self, name: str) -> Preset:
        return self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


PRESETS: Mapping[str, Preset] = _Presets()
endpoints.add_preset_urls(p.base_url for p in _PRESETS)  # they always pass the gate
DEFAULT_PRESET = "embedded"


def preset(name: str) -> Preset:
    """The preset registered under `name`."""
    try:
        return PRESETS[name]
    except KeyError:
        raise KeyError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}") from None


def default_settings(**overrides: Any) -> ProviderSettings:
    """Settings for the default, offline embedded model."""
    return PRESETS[DEFAULT_PRESET].settings(**overrides)


def prices() -> list[Price]:
    """Every model the catalog prices, once by name (an OpenAI-compatible service's models
    are named with the service, "llama-3.1-8b-instant (Groq)"): the one price table."""
    found: dict[str, Price] = {}
    for p in PRESETS.values():
        for info in p.models:
            if info.price is None:
                continue
            name = info.name if family(p.kind).hosted else f"{info.name} ({p.label})"
            found.setdefault(name, replace(info.price, model=name, note=p.label))
    return list(found.values())


def presets_at(kind: str | None, base_url: str | None) -> list[Preset]:
    """The presets of provider `kind` whose endpoint is exactly `base_url`."""
    return [p for p in PRESETS.values() if p.kind == kind and p.base_url == base_url]


def batch_presets() -> list[str]:
    """The presets of hosted APIs with a batch API: what a sweep is sent to."""
    return [name for name, p in PRESETS.items() if p.family.hosted and p.family.has_batch]


def model_info(settings: ProviderSettings) -> ModelInfo | None:
    """The catalog entry matching these settings' endpoint and model, if any."""
    for p in presets_at(settings.kind, settings.base_url):
        found = p.model(settings.model)
        if found:
            return found
    return None


def settings_for(
    choice: ProviderChoice, model: str | None = None, *, api_key: str | None = None
) -> ProviderSettings:
    """The ProviderSettings a choice calls with (`model`: another model of the same preset,
    e.g. the maintenance model). The key: the choice's own, else `api_key`, else the
    environment variable the provider reads itself."""
    chosen = preset(choice.preset)
    overrides: dict[str, Any] = {
        "max_tokens": choice.max_tokens,
        "temperature": choice.temperature,  # bodies.py leaves it out where it is refused
    }
    if family(chosen.kind).prompt_cache:  # llama.cpp's cache, Anthropic's prompt cache
        overrides["prompt_cache"] = choice.prompt_cache
    if choice.base_url and chosen.url_editable:
        overrides["base_url"] = choice.base_url
    key = choice.api_key or api_key
    if key:
        overrides["api_key"] = key
    return chosen.settings(model or choice.model, **overrides)


def choice_for(public: Mapping[str, Any] | None) -> ProviderChoice | None:
    """The choice behind saved public ProviderSettings (sessions saved without the main
    page's settings: imports, the CLI, tests); None when no preset speaks that API."""
    if not public:
        return None
    kind, url = public.get("kind"), public.get("base_url")
    exact = presets_at(kind, url)
    editable = [p for p in PRESETS.values() if p.kind == kind and p.url_editable]
    chosen = exact[0] if exact else editable[-1] if editable else None
    if chosen is None:
        return None
    return ProviderChoice.from_saved(
        {
            "preset": chosen.name,
            "model": public.get("model"),
            "base_url": url if chosen.url_editable else None,
            "temperature": public.get("temperature"),
            "max_tokens": public.get("max_tokens"),
        }
    )
