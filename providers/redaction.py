"""The one place that decides what a secret looks like, and masks it.

Used by the session store (before anything reaches the database), the exports, provider
error messages and logs. Pure: no streamlit, no network, imports nothing of this project.

What is redacted, and nothing else (ordinary text is never rewritten):

* the exact secrets passed in (the session's typed keys, provider key variables' values);
* key-shaped tokens standing on their own: ``sk-…``, ``sk-ant-…``, ``gsk_…``, ``xai-…``,
  ``hf_…``, ``AIza…`` and ``Bearer <token>`` (anchored: ``risk-management-…`` is text);
* the value of a JSON field named like a credential (``"api_key": "…"``) in JSON text.

URLs get their own cleaner, `safe_url`: userinfo and secret-looking query parameters go.

The secrets policy of the whole run lives here too: every secret the process learns (a typed
key, a key variable's value, the password of a base URL or of the database URL) is told to
`remember` / `remember_url` where it enters, and `redact` and `mask` always mask those as well
as the ones passed in. Every writer (the stores, the exports, the CLI's files) and every
printer (the CLI's stdout and stderr, error messages) goes through `redact` or `mask`, and
`mask_logs` puts every log record of the process (any logger, any handler) through it too.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import traceback
from collections.abc import Iterable
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

REDACTED = "[redacted]"

# The environment variables the providers read keys from. Their values are secrets; other
# variables (PIP_KEYRING_PROVIDER=subprocess, …) are not, whatever their names contain.
KEY_ENV_NAMES: tuple[str, ...] = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GROQ_API_KEY",
    "XAI_API_KEY",
    "HF_TOKEN",
)
MIN_SECRET = 8  # shorter values are not treated as secrets (they would mask ordinary words)

_EDGE = r"(?<![A-Za-z0-9_\-])"  # a key starts a token: never the tail of a word
_KEY_SHAPES = re.compile(
    _EDGE + r"(?:sk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{16,}"
    r"|gsk_[A-Za-z0-9]{16,}"
    r"|xai-[A-Za-z0-9]{16,}"
    r"|hf_[A-Za-z0-9]{30,}"
    r"|AIza[0-9A-Za-z_\-]{35})"
    r"|\b(?i:bearer)\s+[A-Za-z0-9._~+/\-]{16,}=*"
)
_KEY_FIELDS = re.compile(
    r'("(?i:api[_-]?key|x-api-key|authorization|password|secret|client_secret|access_token)"'
    r'\s*:\s*)"(?:[^"\\]|\\.)*"'
)
_MARKERS = ("sk-", "gsk_", "xai-", "hf_", "AIza", "earer", "EARER")
_FIELD_MARKERS = ("key", "KEY", "Key", "uthorization", "UTHORIZATION", "assword", "ecret", "token")
_SECRET_PARAMS = re.compile(
    r"(?i)^(?:.*[_-])?(?:key|apikey|api_key|token|secret|password|passwd|pwd|auth|"
    r"authorization|signature|sig|credential|credentials|session)$"
)


def env_key_values(extra_names: Iterable[str | None] = ()) -> set[str]:
    """Values of the provider key variables (and of `extra_names`) set in the environment."""
    found = set()
    for name in (*KEY_ENV_NAMES, *extra_names):
        value = os.environ.get(name, "").strip() if name else ""
        if len(value) >= MIN_SECRET:
            found.add(value)
    return found


def secrets_of(*settings: object) -> set[str]:
    """The keys that `settings` objects hold or read (typed keys, their key variables)."""
    found = env_key_values(getattr(s, "key_env", None) for s in settings)
    for s in settings:
        key = getattr(s, "api_key", None)
        if isinstance(key, str) and len(key.strip()) >= 4:
            found.add(key.strip())
    return found


_KNOWN: set[str] = set()
_KNOWN_LOCK = threading.Lock()


def remember(*secrets: str | None) -> None:
    """Add secrets the run knows (a typed key, a password) to the ones every output masks.
    Values shorter than MIN_SECRET are ignored: they would mask ordinary words."""
    found = {s.strip() for s in secrets if s and len(s.strip()) >= MIN_SECRET}
    if found - _KNOWN:
        with _KNOWN_LOCK:
            _KNOWN.update(found)


def remember_url(url: str | None) -> None:
    """Remember the credentials a URL carries: the password of ``user:pass@``, and the value
    of a secret-looking query parameter (``?password=``, ``?api_key=``, ``token``...), both as
    written and percent-decoded. A URL without a scheme (``user:pw@host/v1``) counts too."""
    if not url or ("@" not in url and "?" not in url):
        return
    try:
        parts = urlsplit(url if "//" in url else f"//{url}")
        netloc, query = parts.netloc, parts.query
    except ValueError:  # malformed: whatever stands before the last @ may be a password
        scheme = _SCHEME.match(url)
        netloc = url[scheme.end() if scheme else 0 :].partition("?")[0]
        query = url.partition("?")[2]
    values: list[str] = []
    userinfo = netloc.rpartition("@")[0] if "@" in netloc else ""
    if userinfo:
        values.append(userinfo.partition(":")[2])
    for key, value in parse_qsl(query, keep_blank_values=True):
        if _SECRET_PARAMS.match(key):
            values.append(value)
    remember(*values, *(unquote(v) for v in values))


def known_secrets() -> frozenset[str]:
    """Every secret the run knows now: the remembered ones and the key variables' values."""
    with _KNOWN_LOCK:
        return frozenset(_KNOWN | env_key_values())


def forget_all() -> None:
    """Forget the remembered secrets (for tests that need a clean registry)."""
    with _KNOWN_LOCK:
        _KNOWN.clear()


def mask(text: str) -> str:
    """`text` with every secret the run knows, and every key-shaped token, masked: what the
    CLI's files and printed results go through."""
    return redact(text)


def redact(text: str, secrets: Iterable[str | None] = (), *, mask: str = REDACTED) -> str:
    """`text` with every given secret, every secret the run knows (`known_secrets`),
    standalone key-shaped token and key field masked."""
    chosen = {s for s in secrets if s and len(s) >= 4} | known_secrets()
    for secret in sorted(chosen, key=len, reverse=True):  # a longer secret before its parts
        if secret in text:
            text = text.replace(secret, mask)
    if any(m in text for m in _MARKERS):
        text = _KEY_SHAPES.sub(mask, text)
    if any(m in text for m in _FIELD_MARKERS):
        text = _KEY_FIELDS.sub(lambda m: f'{m.group(1)}"{mask}"', text)
    return text


def safe_url(url: str | None) -> str | None:
    """`url` without userinfo (``user:pass@``) and without secret-looking query parameters
    (``?api_key=…``, ``token``, ``sig``…); anything else is left exactly as written. A URL
    without a scheme (``user:pw@host/v1``) is read as a host, and one too malformed to parse
    loses everything up to its last ``@`` and its whole query: never a password kept."""
    if not url or ("@" not in url and "?" not in url):
        return url
    bare = "//" not in url
    try:
        parts = urlsplit(f"//{url}" if bare else url)
        parts.port  # noqa: B018 - raises ValueError for a malformed port
    except ValueError:
        return redact(_rough_clean(url))
    netloc = parts.netloc.rpartition("@")[2]
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        kept = [(k, v) for k, v in pairs if not _SECRET_PARAMS.match(k)]
        if len(kept) != len(pairs):
            query = urlencode(kept)
    cleaned = urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    return cleaned[2:] if bare and cleaned.startswith("//") else cleaned


_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")


def _rough_clean(url: str) -> str:
    """A URL that does not parse, without anything that could be a credential: the text up
    to its last ``@`` (after the scheme) and its query."""
    scheme = _SCHEME.match(url)
    head = scheme.group() if scheme else ""
    rest = url[len(head) :].rpartition("@")[2]
    return head + rest.partition("?")[0]


_USERINFO = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s/@:]*:)[^\s/@]+@")


def mask_log_text(text: str) -> str:
    """A log line as it may be written: `mask`ed, and a URL's password masked even when the
    run never learned it (a library logging a URL it was given)."""
    text = mask(text)
    return _USERINFO.sub(rf"\1{REDACTED}@", text) if "@" in text else text


def mask_logs() -> None:
    """Have every log record this process makes, by any logger (httpx, the SDKs, streamlit,
    this app's), masked when it is made, so no handler (one a library or a user installs,
    pytest's) can write a secret. Idempotent; the app and the CLI call it when they start."""
    previous = logging.getLogRecordFactory()
    if getattr(previous, "masks_secrets", False):
        return

    def factory(*args: object, **kwargs: object) -> logging.LogRecord:
        return _masked(previous(*args, **kwargs))

    factory.masks_secrets = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(factory)


def _masked(record: logging.LogRecord) -> logging.LogRecord:
    try:
        message = record.getMessage()
    except Exception:  # noqa: BLE001 (a malformed call: logging reports it when it formats)
        return record
    masked = mask_log_text(message)
    if masked != message:
        record.msg, record.args = masked, ()
    if record.exc_info and record.exc_info[0] is not None:
        record.exc_text = mask_log_text("".join(traceback.format_exception(*record.exc_info)))
        record.exc_text = record.exc_text.rstrip("\n")
    if record.stack_info:
        record.stack_info = mask_log_text(record.stack_info)
    return record
