"""Uploaded files handed to engines that read from a path (a benchmark streamed from disk).

`as_file` writes an upload's bytes once per content under the system's temporary folder, in
a folder named by their hash, keeping the uploaded name (reduced to a plain file name) so
messages about the file name what the user picked. Touches only that folder."""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path

FOLDER = "memory-lab-uploads"
_UNSAFE = re.compile(r"[^\w.\-]+")


def file_name(name: str) -> str:
    """An uploaded name as one plain file name: no folders, no leading dot."""
    base = _UNSAFE.sub("_", Path(name.replace("\\", "/")).name)[:120].lstrip(".")
    return base or "upload"


def as_file(name: str, data: bytes) -> Path:
    """The upload as a file on disk: the same bytes give the same path (written once)."""
    folder = Path(tempfile.gettempdir()) / FOLDER / hashlib.sha256(data).hexdigest()[:20]
    path = folder / file_name(name)
    if path.is_file() and path.stat().st_size == len(data):
        return path
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / f".{path.name}.{os.getpid()}.part"
    partial.write_bytes(data)
    os.replace(partial, path)
    return path
