"""The one endpoint policy: where a request goes is decided by the person at the keyboard,
never by a file.

A saved or imported session (a colleague's export, a shared store's row, the recorded demo,
a saved sweep) names the provider, model and base URL it ran with. That name is shown, never
obeyed: every load path asks `follow` what a saved choice runs on, and it answers with the
choice typed in this session (the sidebar's, the CLI's flags) unless the file names that very
endpoint, in which case only its model and sampling are taken. Adopting the file's endpoint
is an explicit act (`adopt`, behind a button) and even then a typed key goes only to the
endpoint it was typed for. Saved call settings (sweeps) are called with a key only at an
endpoint nobody can edit (an official API, a fixed preset URL) or one typed now
(`sweep_settings`). Which URLs anyone may type at all is the gate's (providers/endpoints.py).

May import: providers/ (the catalog of presets). No streamlit, no I/O.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from providers import catalog
from providers.families import family
from providers.settings import ProviderChoice, ProviderSettings, check_base_url


@dataclass(frozen=True)
class Endpoint:
    """Where calls go: a preset and the base URL it calls (None: the SDK's own)."""

    preset: str
    base_url: str | None


def endpoint(choice: ProviderChoice) -> Endpoint:
    """The endpoint a choice calls (its URL only where the preset lets a person edit it)."""
    chosen = catalog.PRESETS.get(choice.preset)
    if chosen is None:  # an unknown preset in a file: it names nothing we would call
        return Endpoint(choice.preset, choice.base_url)
    url = choice.base_url if chosen.url_editable and choice.base_url else chosen.base_url
    return Endpoint(chosen.name, _norm(url))


def _norm(url: str | None) -> str | None:
    return url.strip().rstrip("/") if url else None


@dataclass(frozen=True)
class Followed:
    """What a saved choice runs on now, and whether it is what the file named."""

    runs: ProviderChoice
    named: ProviderChoice | None  # what the file named (no key), None: it named nothing
    same: bool  # the file named the endpoint the user chose: its model and sampling are kept

    @property
    def differs(self) -> bool:
        """The file named another endpoint (shown, adoptable by a button)."""
        return self.named is not None and not self.same


def follow(named: ProviderChoice | None, typed: ProviderChoice) -> Followed:
    """What a choice saved in a file runs on: the user's `typed` choice (with its key) —
    the file's model and sampling only when it names the same endpoint."""
    if named is None:
        return Followed(typed, None, True)
    named = dataclasses.replace(named, api_key=None)
    if endpoint(named) == endpoint(typed) and named.preset in catalog.PRESETS:
        return Followed(dataclasses.replace(named, api_key=typed.api_key), named, True)
    return Followed(typed, named, False)


def adopt(named: ProviderChoice, typed: ProviderChoice) -> ProviderChoice:
    """The file's choice, taken by an explicit act of the user; the typed key goes with it
    only to the endpoint it was typed for."""
    if named.preset not in catalog.PRESETS:
        raise ValueError(f"the saved provider {named.preset!r} is not one this app knows")
    check_base_url(named.base_url)  # a file's ftp:// or file:// is refused, not adopted
    same = endpoint(named) == endpoint(typed)
    return dataclasses.replace(named, api_key=typed.api_key if same else None)


def describe(choice: ProviderChoice) -> str:
    """An endpoint as plain text for a notice (to be escaped where drawn)."""
    from providers.redaction import safe_url

    found = endpoint(choice)
    preset = catalog.PRESETS.get(found.preset)
    name = preset.label if preset else found.preset
    where = f" at {safe_url(found.base_url)}" if found.base_url else ""
    model = f" · {choice.model}" if choice.model else ""
    return f"{name}{model}{where}"


def saved_settings(public: Mapping[str, Any] | None) -> ProviderSettings:
    """Call settings rebuilt from their saved public form, for a caller that typed none
    (the library's `Store.continue_session`): the endpoint (`base_url`) and the key variable
    (`key_env`) come from the catalog preset whose endpoint the data names exactly; any
    other URL raises ValueError (its provider must be chosen to continue)."""
    from providers.redaction import safe_url

    if not isinstance(public, Mapping) or "kind" not in public or "model" not in public:
        raise ValueError("the saved session does not say which provider it used")
    names = {f.name for f in fields(ProviderSettings)} - {"api_key", "kind", "model", "key_env"}
    values = {k: v for k, v in public.items() if k in names}
    kind, url = public["kind"], public.get("base_url")
    trusted = catalog.presets_at(kind, url)
    if not trusted and family(kind).needs_base_url:
        raise ValueError(
            f"this session ran against a custom endpoint ({safe_url(url)}): choose the "
            "provider to continue it with (a saved file never decides where a request goes)"
        )
    values["base_url"] = trusted[0].base_url if trusted else None
    values["key_env"] = trusted[0].key_env if trusted else None
    try:
        return ProviderSettings(kind, public["model"], **values)
    except TypeError as exc:
        raise ValueError(f"the saved provider settings are not usable: {exc}") from None


def fixed_urls() -> frozenset[str | None]:
    """Endpoints no file can move: the SDKs' own (None) and the presets' fixed URLs."""
    return frozenset(
        {None} | {_norm(p.base_url) for p in catalog.PRESETS.values() if not p.url_editable}
    )


class EndpointNotTyped(ValueError):
    """Saved call settings name an endpoint nobody typed in this run: it must be typed again."""


def sweep_settings(
    public: Mapping[str, Any],
    *,
    api_key: str | None = None,
    typed_urls: Iterable[str | None] = (),
    key_env: str | None = None,
) -> ProviderSettings:
    """A saved sweep's call settings (its public form) as they may be called now. At an
    endpoint nobody can edit (the SDK's own, a fixed preset URL) they run with `api_key`, else
    `key_env`, else the catalog's key variable for that endpoint (never one the file names).
    At a URL typed in this run (`typed_urls`: the CLI's --base-url, the Sweeps page's field)
    they run with `api_key` or the key variable typed or saved with them. Any other URL
    raises EndpointNotTyped naming it: a saved sweep never chooses where a request goes."""
    from providers.redaction import safe_url

    if not isinstance(public, Mapping) or "kind" not in public or "model" not in public:
        raise ValueError("the saved sweep does not say which provider it used")
    names = {f.name for f in fields(ProviderSettings)} - {
        "api_key", "kind", "model", "key_env", "base_url",
    }  # fmt: skip
    values = {k: v for k, v in public.items() if k in names}
    kind, url = public["kind"], _norm(public.get("base_url"))
    if url in fixed_urls():
        presets = [
            p for p in catalog.PRESETS.values() if p.kind == kind and _norm(p.base_url) == url
        ]
        env = key_env or (presets[0].key_env if presets else None)
    elif url in {_norm(u) for u in typed_urls}:
        env = key_env or public.get("key_env")
    else:
        raise EndpointNotTyped(
            f"this sweep ran against {safe_url(url)}: type that endpoint again to reach it "
            "(--base-url, or the Sweeps page's Base URL field); a saved sweep never chooses "
            "where a request goes or which key it carries"
        )
    return ProviderSettings(
        kind, public["model"], base_url=url, api_key=api_key, key_env=env, **values
    )
