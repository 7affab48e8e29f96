"""Dense sentence vectors from the static word embeddings shipped inside the `wordllama` wheel.

`embedder()` loads WordLlama's 256-d weights and tokenizer from the installed package's own
folder with downloads disabled (no network, ever); None when the package is not installed.
A vector is the normalised mean of the text's token embeddings, so a turn is embedded once,
when it is learnt, and a query costs one matrix-vector product over the older turns.
May import: nothing from the project.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

Embed = Callable[[Sequence[str]], Any]  # texts -> float32 array (len(texts), dim), unit rows
_lock = threading.Lock()


def available() -> bool:
    """True when the `wordllama` package is installed."""
    return importlib.util.find_spec("wordllama") is not None


@lru_cache(maxsize=1)
def embedder() -> Embed | None:
    """The embedding function of the packaged WordLlama model (loaded once), or None."""
    if not available():
        return None
    import wordllama  # noqa: PLC0415 (optional, loaded on first use)

    folder = Path(wordllama.__file__).parent
    model = wordllama.WordLlama.load(cache_dir=folder, disable_download=True)

    def embed(texts: Sequence[str]) -> Any:
        with _lock:  # the tokenizer is shared
            return model.embed(list(texts), norm=True)

    return embed
