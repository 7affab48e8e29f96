"""Pure parts: body builders, settings and key resolution, the preset catalog."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from memory.maintenance import FACT_UPDATE_SCHEMA, extraction_request
from memory.tokens import TokenCounter
from memory.types import Turn, Usage
from providers import (
    KINDS,
    PRESETS,
    AuthError,
    ProviderSettings,
    build_anthropic_body,
    build_body,
    build_openai_body,
    default_settings,
    embedded,
    mask_key,
    model_info,
    preset,
)
from providers.catalog import Price, choice_for, prices, settings_for
from providers.families.anthropic import LEADING_USER_PLACEHOLDER
from providers.families.embedded import (
    COMPACT_MEMBERS,
    EMBEDDED_JSON_FREQUENCY_PENALTY,
    compact_grammar,
)
from providers.settings import NO_KEY, ProviderChoice
from tests.providers.conftest import make_request

HISTORY = make_request(
    ("user", "I am Chiru."),
    ("assistant", "Hi Chiru."),
    ("user", "I earn 5000."),
    system="Be kind.",
)


def test_openai_body_puts_the_system_message_first():
    body = build_openai_body(HISTORY, ProviderSettings("openai", "gpt-4o-mini", max_tokens=99))
    assert body == {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": "Be kind."},
            {"role": "user", "content": "I am Chiru."},
            {"role": "assistant", "content": "Hi Chiru."},
            {"role": "user", "content": "I earn 5000."},
        ],
        "temperature": 0.0,
        "max_tokens": 99,
        "stream": True,
        "stream_options": {"include_usage": True},
    }


def test_openai_body_without_system_text_has_no_system_message():
    body = build_openai_body(make_request(("user", "Hi"), system=""), default_settings())
    assert [m["role"] for m in body["messages"]] == ["user"]


def test_anthropic_body_keeps_system_apart_and_always_sets_max_tokens():
    settings = ProviderSettings("anthropic", "m", base_url="http://127.0.0.1:9", temperature=0.2)
    body = build_anthropic_body(HISTORY, settings)
    assert body == {
        "model": "m",
        "max_tokens": 256,
        "system": "Be kind.",
        "messages": [
            {"role": "user", "content": "I am Chiru."},
            {"role": "assistant", "content": "Hi Chiru."},
            {"role": "user", "content": "I earn 5000."},
        ],
        "temperature": 0.2,
        "stream": True,
    }


def test_anthropic_body_alternates_roles_and_starts_with_the_user():
    request = make_request(
        ("assistant", "Earlier answer."),
        ("user", "First."),
        ("user", "Second."),
        ("assistant", "A."),
        ("assistant", "B."),
        ("user", "Now?"),
    )
    body = build_anthropic_body(request, ProviderSettings("anthropic", "m", api_key="k"))
    assert body["messages"] == [
        {"role": "user", "content": LEADING_USER_PLACEHOLDER},
        {"role": "assistant", "content": "Earlier answer."},
        {"role": "user", "content": "First.\n\nSecond."},
        {"role": "assistant", "content": "A.\n\nB."},
        {"role": "user", "content": "Now?"},
    ]


@pytest.mark.parametrize(
    "base_url", [None, "https://api.anthropic.com", "https://eu.api.anthropic.com/"]
)
def test_anthropic_api_gets_no_temperature(base_url):
    # API version 2026-10-21 (anthropic SDK 2.x) answers 400 to any sampling parameter.
    settings = ProviderSettings("anthropic", "claude-haiku-4-5", base_url=base_url, temperature=0.0)
    assert "temperature" not in build_anthropic_body(HISTORY, settings)
    # the rule lives in the body builder alone: settings from every path keep the value
    for made in (
        preset("anthropic").settings(temperature=0.3),
        settings_for(ProviderChoice("anthropic", "claude-haiku-4-5", temperature=0.3)),
    ):
        assert made.temperature == 0.3
        assert "temperature" not in build_body(HISTORY, made)


def test_one_conversion_pair_round_trips_a_choice_without_its_key():
    choice = ProviderChoice(
        "ollama", "qwen2.5:7b", base_url="http://127.0.0.1:9/v1", api_key="k" * 20, max_tokens=77
    )
    saved = choice.as_saved()
    assert "api_key" not in saved and "k" * 20 not in str(saved) and "k" * 20 not in repr(choice)
    assert ProviderChoice.from_saved(saved, api_key=choice.api_key) == choice
    settings = settings_for(choice)
    assert (settings.base_url, settings.api_key, settings.max_tokens) == (
        "http://127.0.0.1:9/v1",
        "k" * 20,
        77,
    )
    # a preset's own endpoint comes back as that preset; another URL as the Custom URL preset
    back = choice_for(settings_for(ProviderChoice("ollama", "qwen2.5:7b")).public_dict())
    assert back == ProviderChoice("ollama", "qwen2.5:7b", base_url=preset("ollama").base_url)
    moved = choice_for(settings.public_dict())
    assert moved == ProviderChoice(
        "custom", "qwen2.5:7b", base_url="http://127.0.0.1:9/v1", max_tokens=77
    )
    assert choice_for({"kind": "nope"}) is None


def test_a_custom_endpoint_sends_the_key_typed_for_it():
    custom = ProviderChoice("custom", "m", base_url="http://127.0.0.1:9/v1", api_key="c" * 24)
    assert settings_for(custom).resolve_key() == "c" * 24
    assert settings_for(ProviderChoice("custom", "m")).resolve_key() == NO_KEY


def test_prices_come_from_the_catalog_once():
    table = {p.model: p for p in prices()}
    assert table["gpt-4o-mini"] == Price("gpt-4o-mini", 0.15, 0.60, "OpenAI", 0.075)
    assert table["llama-3.1-8b-instant (Groq)"].input_per_m == 0.05
    assert preset("openai").model("gpt-4.1").price.cost(1_000_000, 1_000_000) == 10.0
    assert preset("custom").models == () and preset("openai").model("nope") is None


def test_build_body_picks_the_family_and_never_holds_the_key():
    key = "sk-never-in-a-body-0123456789"
    for kind in KINDS:
        base = None if kind in ("openai", "anthropic", "embedded") else "http://127.0.0.1:1/v1"
        settings = ProviderSettings(kind, "m", base_url=base, api_key=key)  # type: ignore[arg-type]
        body = build_body(HISTORY, settings)
        assert ("system" in body) == (kind == "anthropic")
        assert key not in repr(body)


def test_settings_validate_their_fields():
    with pytest.raises(ValueError, match="unknown provider kind"):
        ProviderSettings("gemini", "m")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="base_url"):
        ProviderSettings("openai_compatible", "m")
    with pytest.raises(ValueError, match="max_tokens"):
        ProviderSettings("openai", "m", max_tokens=0)
    with pytest.raises(TypeError):
        ProviderSettings("openai", "m", None)  # type: ignore[misc]  # options are keyword-only


def test_key_resolution_order(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "from-env-0123456789")
    assert ProviderSettings("openai", "m", api_key="explicit").resolve_key() == "explicit"
    assert ProviderSettings("openai", "m").resolve_key() == "from-env-0123456789"
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(AuthError, match="set OPENAI_API_KEY") as info:
        ProviderSettings("openai", "m").resolve_key()
    assert info.value.env_var == "OPENAI_API_KEY"


@pytest.mark.parametrize(
    ("name", "env"),
    [("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY"), ("groq", "GROQ_API_KEY")],
)
def test_presets_that_need_a_key_name_their_variable(monkeypatch, name, env):
    monkeypatch.delenv(env, raising=False)
    settings = preset(name).settings()
    assert preset(name).needs_key and settings.needed_key_env == env
    with pytest.raises(AuthError, match=f"set {env}"):
        settings.resolve_key()
    assert settings.key_hint == f"missing: set {env}"


@pytest.mark.parametrize("name", ["embedded", "ollama", "vllm", "lmstudio", "custom"])
def test_local_presets_need_no_key(name):
    p = preset(name)
    settings = p.settings(p.default_model or "some-model")
    assert not p.needs_key
    assert settings.resolve_key() == NO_KEY
    assert settings.key_hint == "not needed"
    if p.base_url:
        assert p.base_url.startswith("http://127.0.0.1:")


def test_catalog_lists_the_expected_presets_with_prices_and_windows():
    assert list(PRESETS)[0] == "embedded"
    assert {
        "embedded",
        "openai",
        "anthropic",
        "groq",
        "ollama",
        "vllm",
        "lmstudio",
        "custom",
    } <= set(PRESETS)
    for p in PRESETS.values():
        for info in p.models:
            assert info.context_window is None or info.context_window > 0
            assert info.input_per_m is not None and info.output_per_m is not None
    assert preset("groq").base_url == "https://api.groq.com/openai/v1"
    with pytest.raises(KeyError, match="unknown preset"):
        preset("nope")


def test_embedded_preset_reports_the_per_request_window():
    p = preset("embedded")
    settings = p.settings()
    assert settings.kind == "embedded" and settings.model == embedded.MODEL_NAME
    assert settings.context_window == embedded.context_window() == p.models[0].context_window
    assert "small local model (SmolLM2-135M)" in p.description
    assert default_settings() == settings
    assert settings.timeout == 300.0  # 8 lanes on 2 cores can wait a while for a first token


def test_preset_settings_and_model_info():
    settings = preset("openai").settings("gpt-4o-mini", max_tokens=64)
    assert settings.context_window == 128_000 and settings.max_tokens == 64
    info = model_info(settings)
    assert info is not None and info.cost(Usage(1_000_000, 1_000_000)) == pytest.approx(0.75)
    assert info.cost(Usage(None, 5)) is None
    unknown = preset("ollama").settings("my-own-model")
    assert unknown.context_window is None and model_info(unknown) is None
    assert preset("custom").default_model is None
    with pytest.raises(ValueError, match="needs a model name"):
        preset("custom").settings()


def test_mask_key():
    assert mask_key(None) == "not set"
    assert mask_key("short") == "****"
    assert mask_key("sk-abcdefghijklmnop1234") == "sk-…1234"
    assert mask_key("abcdefghijklmnopqrstu9876") == "…9876"


def test_with_changes_a_copy():
    a = ProviderSettings("openai", "gpt-4o-mini", api_key="k" * 20)
    b = a.with_(model="gpt-4.1-nano")
    assert (a.model, b.model, b.api_key) == ("gpt-4o-mini", "gpt-4.1-nano", "k" * 20)


def test_prompt_cache_goes_in_the_body_only_for_the_embedded_server():
    request = make_request(("user", "hi"), system="s")
    on = preset("embedded").settings(prompt_cache=True)
    assert build_body(request, on)["cache_prompt"] is True
    assert "cache_prompt" not in build_body(request, preset("embedded").settings())
    assert "cache_prompt" not in build_body(request, preset("groq").settings(prompt_cache=True))


EXTRACTION = extraction_request(
    TokenCounter("o200k_base"), {}, Turn(1, "I'm Chiru, I earn ₹1,20,000.", "Hello Chiru.")
)


def test_a_json_reply_is_asked_for_where_the_provider_can_hold_the_model_to_it():
    embedded_body = build_body(EXTRACTION, preset("embedded").settings())
    assert embedded_body["grammar"] == compact_grammar(FACT_UPDATE_SCHEMA)
    assert "response_format" not in embedded_body
    assert embedded_body["frequency_penalty"] == EMBEDDED_JSON_FREQUENCY_PENALTY > 0
    # a shape beyond the compact grammar's subset goes as a schema the server compiles
    odd = replace(EXTRACTION, reply_schema={"type": "object", "patternProperties": {}})
    odd_body = build_body(odd, preset("embedded").settings())
    assert odd_body["response_format"] == {"type": "json_object", "schema": odd.reply_schema}
    assert odd_body["response_format"]["schema"] is not odd.reply_schema  # a copy
    openai_body = build_body(EXTRACTION, ProviderSettings("openai", "gpt-4o-mini"))
    assert openai_body["response_format"] == {"type": "json_object"}  # JSON mode: any keys
    assert "json" in openai_body["messages"][0]["content"].lower()  # JSON mode requires it
    assert "response_format" in build_body(EXTRACTION, ProviderSettings("openai", "o3-mini"))


@pytest.mark.parametrize(
    "settings",
    [
        ProviderSettings("openai", "o1-mini"),  # refuses response_format
        ProviderSettings("openai_compatible", "llama3", base_url="http://127.0.0.1:9/v1"),
        ProviderSettings("anthropic", "claude-haiku-4-5"),
        ProviderSettings("anthropic", "smollm2", base_url="http://127.0.0.1:9"),
    ],
    ids=["o1-mini", "openai-compatible", "anthropic", "anthropic-format-server"],
)
def test_no_response_format_where_it_is_unknown_or_refused(settings):
    body = build_body(EXTRACTION, settings)
    assert "response_format" not in body and "schema" not in json.dumps(body)


@pytest.mark.parametrize(
    "settings", [preset("embedded").settings(), ProviderSettings("openai", "gpt-4o-mini")]
)
def test_a_request_without_a_reply_schema_gets_no_response_format(settings):
    body = build_body(HISTORY, settings)
    assert "response_format" not in body and "frequency_penalty" not in body


def test_the_compact_grammar_covers_the_fact_update_and_refuses_what_it_cannot_bound():
    grammar = compact_grammar(FACT_UPDATE_SCHEMA)
    assert grammar is not None
    lines = dict(line.split(" ::= ", 1) for line in grammar.strip().splitlines())
    assert lines["root"] == '"{" "\\"set\\":" root-set "," "\\"delete\\":" root-delete "}"'
    assert f"{{0,{COMPACT_MEMBERS - 1}}}" in lines["root-set"]  # at most COMPACT_MEMBERS facts
    assert '" "' not in lines["root-set"] and "ws" not in lines  # no whitespace rule anywhere
    for schema in (
        {"type": "object", "properties": {"a": {"type": "string"}}},  # a key not required
        {"type": "object", "patternProperties": {}},
        {"type": "boolean"},
        {"type": "array", "items": {"type": "object"}},
    ):
        assert compact_grammar(schema) is None, schema
