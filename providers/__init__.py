"""One interface over the embedded model, OpenAI, Anthropic and OpenAI-compatible endpoints.

May import: memory/. Never streamlit or any other package of this project.

    settings = preset("embedded").settings()          # or preset("openai").settings("gpt-4o-mini")
    reply = stream(request, settings, on_delta=print)  # never raises for provider failures
    reply.text, reply.usage, reply.body, reply.error

No streamlit here: the UI layer imports this, never the other way round.
"""

import providers.embedded as embedded
from providers.bodies import build_anthropic_body, build_body, build_openai_body
from providers.catalog import (
    DEFAULT_PRESET,
    PRESETS,
    PRICES_NOTE,
    ModelInfo,
    Preset,
    default_settings,
    model_info,
    preset,
)
from providers.clients import clear_clients
from providers.errors import (
    AuthError,
    BadRequest,
    ContextLengthExceeded,
    ModelNotFound,
    ProviderError,
    QuotaExceeded,
    RateLimited,
    ServerError,
    StreamInterrupted,
    Timeout,
    Unavailable,
)
from providers.send import Reply, as_model_fn, stream
from providers.settings import KINDS, Kind, ProviderSettings, mask_key

__all__ = [
    "DEFAULT_PRESET",
    "KINDS",
    "PRESETS",
    "PRICES_NOTE",
    "AuthError",
    "BadRequest",
    "ContextLengthExceeded",
    "Kind",
    "ModelInfo",
    "ModelNotFound",
    "Preset",
    "ProviderError",
    "ProviderSettings",
    "QuotaExceeded",
    "RateLimited",
    "Reply",
    "ServerError",
    "StreamInterrupted",
    "Timeout",
    "Unavailable",
    "as_model_fn",
    "build_anthropic_body",
    "build_body",
    "build_openai_body",
    "clear_clients",
    "default_settings",
    "embedded",
    "mask_key",
    "model_info",
    "preset",
    "stream",
]
