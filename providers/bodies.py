"""Pure builders of provider-native request bodies: one function per API family.

What these return is exactly what is sent (and shown in the UI): the sender passes the
dict to the official SDK unchanged. No key ever goes in a body; it travels in a header.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlparse

from memory.types import Message, Request
from providers.settings import ProviderSettings

# Put in front of a history that starts with an assistant message, because the
# Anthropic API wants the first message to come from the user.
LEADING_USER_PLACEHOLDER = "(earlier conversation omitted)"


def api_family(settings: ProviderSettings) -> str:
    """Which wire format a settings' endpoint speaks: "openai" or "anthropic"."""
    return "anthropic" if settings.kind == "anthropic" else "openai"


def is_reasoning_model(settings: ProviderSettings) -> bool:
    """OpenAI's reasoning models (o1, o3, o4-mini, gpt-5...): they take `max_completion_tokens`
    (which also covers their hidden reasoning) and refuse `temperature`."""
    name = settings.model.lower()
    if settings.kind != "openai" or name.startswith("gpt-5-chat"):
        return False
    return name.startswith(("o1", "o3", "o4", "gpt-5"))


# Sent with a schema to the embedded model. Held to the shape, SmolLM2 at temperature 0 still
# loops inside it: on FinCoach turn 1 it wrote keys monthly_expenses_total_total_... until the
# token cap cut the JSON. A frequency penalty makes a repeated token costlier, so the loop
# breaks and the grammar's closing brace comes first (bench/bench_extraction.py measures it).
EMBEDDED_JSON_FREQUENCY_PENALTY = 0.5


# The embedded model's JSON replies are held to a compact grammar (`compact_grammar`): no
# whitespace, at most this many members in an object of free keys (or items in an array), keys
# and strings this long. SmolLM2 copies the whole fact store back each turn, pretty-printed:
# the FinCoach extraction replies ran into the upkeep cap (96 tokens) mid-JSON, and a cut reply
# changes nothing. Compact and bounded they end well inside it (bench/bench_extraction.py).
COMPACT_MEMBERS = 4
COMPACT_KEY_CHARS = 40
COMPACT_STRING_CHARS = 60


def compact_grammar(schema: Mapping[str, Any]) -> str | None:
    """A llama.cpp GBNF grammar for JSON of `schema`'s shape written compactly and bounded
    (`COMPACT_*`), or None when the schema uses more than this small subset: objects with
    fixed `properties` (all required, written in order) or free keys (`additionalProperties`),
    arrays, strings, numbers, and a `type` list of those scalars."""
    rules: dict[str, str] = {
        "key": f'"\\"" [a-z] [a-z0-9_]{{0,{COMPACT_KEY_CHARS - 1}}} "\\""',
        "string": f'"\\"" [^"\\\\\\x00-\\x1F]{{0,{COMPACT_STRING_CHARS}}} "\\""',
        "number": '"-"? [0-9]{1,15} ("." [0-9]{1,6})?',
    }

    def rule(node: Any, name: str) -> str | None:
        if not isinstance(node, Mapping):
            return None
        kind = node.get("type")
        if isinstance(kind, list):
            parts = [rule({"type": k}, f"{name}-{k}") for k in kind]
            return None if None in parts else " | ".join(f"( {p} )" for p in parts if p)
        if kind == "string":
            return "string"
        if kind in ("number", "integer"):
            return "number"
        if kind == "array":
            item = rule(node.get("items"), f"{name}-item")
            if item is None:
                return None
            rules[name] = f'"[" ( {item} ( "," {item} ){{0,{COMPACT_MEMBERS - 1}}} )? "]"'
            return name
        if kind == "object" and "properties" in node:
            props = node["properties"]
            if set(node.get("required", ())) != set(props) or node.get("additionalProperties"):
                return None
            members = []
            for key, sub in props.items():
                value = rule(sub, f"{name}-{key}".replace("_", "-"))
                if value is None or not str(key).isidentifier():
                    return None
                members.append(f'"\\"{key}\\":" {value}')
            rules[name] = '"{" ' + ' "," '.join(members) + ' "}"'
            return name
        if kind == "object" and isinstance(node.get("additionalProperties"), Mapping):
            value = rule(node["additionalProperties"], f"{name}-value")
            if value is None:
                return None
            pair = f'key ":" ( {value} )'
            rules[name] = f'"{{" ( {pair} ( "," {pair} ){{0,{COMPACT_MEMBERS - 1}}} )? "}}"'
            return name
        return None

    root = rule(schema, "root")
    if root is None:
        return None
    if root != "root":
        rules["root"] = root
    return "\n".join(f"{name} ::= {body}" for name, body in rules.items()) + "\n"


def json_reply_fields(request: Request, settings: ProviderSettings) -> dict[str, Any]:
    """The chat-completions fields for a request that wants a JSON reply (none where it does
    not, or where the provider cannot be asked): `response_format` (the embedded model: a
    `grammar`), and for the embedded model also `frequency_penalty`
    (`EMBEDDED_JSON_FREQUENCY_PENALTY`).

    - the embedded llama.cpp server: `grammar`, the schema's shape as compact, bounded JSON
      (`compact_grammar`), so the model can only write that and stops at the closing brace;
      a schema beyond that grammar's subset goes as `{"type": "json_object", "schema": ...}`,
      which the server turns into a grammar of the shape alone;
    - OpenAI: `{"type": "json_object"}` (JSON mode). Strict `json_schema` cannot say "an
      object with any keys" (every object needs all its keys listed and required), which is
      what a fact store is; JSON mode needs "JSON" in the prompt, which upkeep prompts have.
      Not for o1-mini and o1-preview, which refuse `response_format`;
    - OpenAI-compatible endpoints: nothing. An unknown server may reject a field it does not
      know (or a schema it cannot compile), and that would fail every upkeep call; the prompt
      asks for JSON and the parser finds it in the reply;
    - Anthropic: the Messages API has no such field (its builder never calls this).
    """
    if request.reply_schema is None:
        return {}
    if settings.kind == "embedded":
        grammar = compact_grammar(request.reply_schema)
        if grammar is not None:
            return {"grammar": grammar, "frequency_penalty": EMBEDDED_JSON_FREQUENCY_PENALTY}
        schema = copy.deepcopy(dict(request.reply_schema))
        return {
            "response_format": {"type": "json_object", "schema": schema},
            "frequency_penalty": EMBEDDED_JSON_FREQUENCY_PENALTY,
        }
    if settings.kind == "openai" and not settings.model.lower().startswith(
        ("o1-mini", "o1-preview")
    ):
        return {"response_format": {"type": "json_object"}}
    return {}


def greedy(settings: ProviderSettings) -> bool:
    """Whether the bodies built for `settings` ask for temperature 0: the reply then depends on
    the request alone (lanes/sharing.py sends byte-identical requests once). Not for OpenAI's
    reasoning models nor Anthropic's own API, which are sent no temperature and sample."""
    if settings.temperature != 0:
        return False
    if settings.kind == "anthropic":
        return not _is_anthropic_api(settings.base_url)
    return not is_reasoning_model(settings)


def build_openai_body(
    request: Request, settings: ProviderSettings, slot: int | None = None
) -> dict[str, Any]:
    """A streaming chat-completions body: the system message first, then the history;
    `slot`: the embedded server's slot to run in (a per-call routing option)."""
    messages: list[dict[str, str]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    messages.extend(m.as_dict() for m in request.messages)
    body: dict[str, Any] = {"model": settings.model, "messages": messages}
    body.update(json_reply_fields(request, settings))
    if is_reasoning_model(settings):
        body["max_completion_tokens"] = settings.max_tokens
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
        return body
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    body["max_tokens"] = settings.max_tokens
    body["stream"] = True
    body["stream_options"] = {"include_usage": True}
    if settings.kind == "embedded" and settings.prompt_cache is not None:
        body["cache_prompt"] = settings.prompt_cache  # llama.cpp's own field
    if slot is not None:
        body["id_slot"] = check_slot(settings, slot)  # llama.cpp's own field
    return body


def _is_anthropic_api(base_url: str | None) -> bool:
    if base_url is None:
        return True
    host = urlparse(base_url).hostname or ""
    return host == "anthropic.com" or host.endswith(".anthropic.com")


def alternate(messages: tuple[Message, ...]) -> list[dict[str, str]]:
    """Messages as strict user/assistant alternation, starting with the user.

    Consecutive messages of one role are joined with a blank line; a history that opens
    with an assistant message gets a short user placeholder in front of it.
    """
    out: list[dict[str, str]] = []
    for message in messages:
        if out and out[-1]["role"] == message.role:
            out[-1] = {
                "role": message.role,
                "content": out[-1]["content"] + "\n\n" + message.content,
            }
        else:
            out.append(message.as_dict())
    if out and out[0]["role"] != "user":
        out.insert(0, {"role": "user", "content": LEADING_USER_PLACEHOLDER})
    return out


def build_anthropic_body(request: Request, settings: ProviderSettings) -> dict[str, Any]:
    """A streaming messages body: `system` apart, alternating messages, `max_tokens` set.

    `temperature` is sent when set, except to Anthropic's own API: its current version
    (2026-10-21, what SDK 2.x sends) rejects every sampling parameter with HTTP 400.
    Other servers speaking this format (the embedded llama.cpp) still honour it.
    A request's `reply_schema` adds nothing: the Messages API has no response-format field,
    so a JSON reply rests on the prompt (which asks for JSON) and on the parser.
    """
    body: dict[str, Any] = {"model": settings.model, "max_tokens": settings.max_tokens}
    if request.system:
        body["system"] = request.system
    body["messages"] = alternate(request.messages)
    if settings.temperature is not None and not _is_anthropic_api(settings.base_url):
        body["temperature"] = settings.temperature
    if settings.prompt_cache and settings.kind == "anthropic":
        _mark_cache_breakpoints(body)
    body["stream"] = True
    return body


EPHEMERAL = {"type": "ephemeral"}


def _mark_cache_breakpoints(body: dict[str, Any]) -> None:
    """Anthropic's prompt cache: the system prompt and the newest message become cache
    breakpoints (text blocks with `cache_control`), so the next turn reads the unchanged
    prefix from the cache. Prompts under the model's minimum (1,024-4,096 tokens) are
    simply not cached."""
    if isinstance(body.get("system"), str):
        body["system"] = [{"type": "text", "text": body["system"], "cache_control": EPHEMERAL}]
    if body["messages"]:
        last = body["messages"][-1]
        block = {"type": "text", "text": last["content"], "cache_control": EPHEMERAL}
        body["messages"][-1] = {"role": last["role"], "content": [block]}


def build_body(
    request: Request, settings: ProviderSettings, slot: int | None = None
) -> dict[str, Any]:
    """The body for this endpoint's API family (the one function every sender uses);
    `slot`: the embedded server's slot to run in, for that server only."""
    if api_family(settings) == "anthropic":
        check_slot(settings, slot)
        return build_anthropic_body(request, settings)
    return build_openai_body(request, settings, slot)


def check_slot(settings: ProviderSettings, slot: int | None) -> int | None:
    """`slot` if it is a slot number of the embedded server; ValueError otherwise."""
    if slot is not None and (settings.kind != "embedded" or isinstance(slot, bool) or slot < 0):
        raise ValueError("slot is a slot number (0 or more) of the embedded server")
    return slot
