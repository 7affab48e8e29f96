"""Binding a provider preset to the callables the lab's engines take (no UI here).

`bind("embedded")` gives a `send(request, on_delta)` for probes and replies and a model
function for upkeep calls (summaries, fact extraction), both through providers/ like the
main page's lanes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lanes.lane import ReplyLike, Sender
from memory.types import ModelFn, Request

if TYPE_CHECKING:
    from providers.settings import ProviderSettings

UPKEEP_MAX_TOKENS = 256  # summaries and fact JSON need more room than a short reply


def preset_settings(
    provider: str,
    *,
    model: str | None = None,
    base_url: str | None = None,
    max_tokens: int = 96,
    temperature: float | None = 0.0,
) -> ProviderSettings:
    """ProviderSettings for a catalog preset; ValueError names the presets that exist."""
    from providers.catalog import PRESETS

    if provider not in PRESETS:
        raise ValueError(f"unknown provider {provider!r}; choose one of: {', '.join(PRESETS)}")
    preset = PRESETS[provider]
    overrides: dict[str, Any] = {"max_tokens": max_tokens, "temperature": temperature}
    if base_url:
        overrides["base_url"] = base_url
    return preset.settings(model, **overrides)


def bind_settings(
    settings: ProviderSettings, upkeep: ProviderSettings | None = None
) -> tuple[Sender, ModelFn]:
    """(send, upkeep model function) for settings (upkeep may use other, cheaper settings)."""
    import providers

    upkeep = upkeep or settings.with_(max_tokens=max(settings.max_tokens, UPKEEP_MAX_TOKENS))

    def send(request: Request, on_delta: Callable[[str], None] | None = None) -> ReplyLike:
        return providers.stream(request, settings, on_delta)

    return send, providers.as_model_fn(upkeep)


def describe(settings: ProviderSettings) -> str:
    """'Embedded (offline) · smollm2-135m' — safe to print (no key)."""
    from providers.catalog import presets_at

    for preset in presets_at(settings.kind, settings.base_url):
        return f"{preset.label} · {settings.model}"
    return f"{settings.kind} · {settings.model}"


def bind(
    provider: str,
    *,
    model: str | None = None,
    base_url: str | None = None,
    max_tokens: int = 96,
    temperature: float | None = 0.0,
) -> tuple[Sender, ModelFn, str]:
    """(send, upkeep model function, description) for a catalog preset."""
    settings = preset_settings(
        provider, model=model, base_url=base_url, max_tokens=max_tokens, temperature=temperature
    )
    send, model_fn = bind_settings(settings)
    return send, model_fn, describe(settings)
