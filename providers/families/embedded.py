"""The embedded llama.cpp server as a refinement of the OpenAI family: the app starts it
(its URL is never typed), a JSON reply is held to a compact grammar, and llama.cpp's own
fields (`cache_prompt`, `id_slot`) go in the body. Its capabilities (warm-ups, slots, a
prompt cache) are what lanes/ asks before routing a call.

May import: memory/, providers.families.base, providers.families.openai, providers.embedded.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import providers.embedded as server
from memory.types import Request
from providers.families.base import CallSettings
from providers.families.openai import OpenAIChat

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


@dataclass(frozen=True)
class EmbeddedServer(OpenAIChat):
    """The llama.cpp server this process starts, spoken to in the chat-completions format."""

    def endpoint_url(self, settings: CallSettings) -> str | None:
        """The server's URL, starting it if needed (a given base URL: another llama.cpp)."""
        return settings.base_url or server.openai_base_url()

    def json_fields(self, request: Request, settings: CallSettings) -> dict[str, Any]:
        """`grammar`: the schema's shape as compact, bounded JSON (`compact_grammar`), so the
        model can only write that and stops at the closing brace; a schema beyond that
        grammar's subset goes as `{"type": "json_object", "schema": ...}`, which the server
        turns into a grammar of the shape alone. Both with a frequency penalty."""
        if request.reply_schema is None:
            return {}
        grammar = compact_grammar(request.reply_schema)
        if grammar is not None:
            return {"grammar": grammar, "frequency_penalty": EMBEDDED_JSON_FREQUENCY_PENALTY}
        schema = copy.deepcopy(dict(request.reply_schema))
        return {
            "response_format": {"type": "json_object", "schema": schema},
            "frequency_penalty": EMBEDDED_JSON_FREQUENCY_PENALTY,
        }

    def server_fields(self, settings: CallSettings, slot: int | None) -> dict[str, Any]:
        """llama.cpp's own fields: `cache_prompt`, and `id_slot` for a routed call."""
        out: dict[str, Any] = {}
        if settings.prompt_cache is not None:
            out["cache_prompt"] = settings.prompt_cache
        if slot is not None:  # checked by build_body (Family.check_slot)
            out["id_slot"] = slot
        return out


EMBEDDED = EmbeddedServer(
    kind="embedded",
    label="the embedded model",
    wire="openai",
    sdk="openai",
    prompt_cache=True,
    app_server=True,
    warm_up=True,
    slots=True,
    unreachable_hint="the embedded model's server is not answering; restart the app",
)
