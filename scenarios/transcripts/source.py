"""A file's contents as a stream of JSON records, never all parsed at once.

`open_document` reads bytes, text or a binary file object in chunks, checks the encoding
(UTF-8, or UTF-16 with its byte-order mark) and NUL bytes, and says what container the file
is: one JSON object, a JSON list (read one element at a time with the standard library's C
decoder, so a 200 MB export is listed one conversation at a time), JSON lines (one value a
line; a broken line is an error naming it, or skipped and noted when asked), a sequence of
pretty-printed JSON objects (what OpenTelemetry's console exporter prints), or plain text.
"""

from __future__ import annotations

import codecs
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from scenarios.transcripts.core import MAX_CHARS, TranscriptError

CHUNK = 1 << 22  # characters read at a time
MAX_RECORD = 256 * 1024 * 1024  # characters one JSON element may take (one conversation)
_WS = " \t\r\n"
_DECODER = json.JSONDecoder()
_MAGIC = {
    b"PK\x03\x04": "a ZIP archive (unzip the export and pick conversations.json)",
    b"\x1f\x8b": "a gzip file (unpack it first)",
    b"%PDF": "a PDF document",
    b"SQLite format 3": "an SQLite database",
    b"\x89PNG": "a PNG image",
    b"\xff\xd8\xff": "a JPEG image",
}

Source = bytes | str | IO[bytes] | Path


@dataclass(frozen=True)
class Record:
    """One top-level JSON value: a list element (`index`, from 0) or a line (`line`, from 1)."""

    value: Any
    line: int | None = None
    index: int | None = None

    @property
    def where(self) -> str:
        if self.index is not None:
            return f"item {self.index + 1}"
        return f"line {self.line}"


@dataclass
class Document:
    """The container of a file and its records (consumed once, as they are read)."""

    container: str  # "object", "list", "lines" or "text"
    records: Iterator[Record]
    text: str = ""  # the whole text, for plain-text files only
    notes: list[str] = field(default_factory=list)  # lines skipped while reading, etc.


class _Chunks:
    """Decoded text in chunks with a running count of lines before the current buffer."""

    def __init__(self, source: Source) -> None:
        self._stream: IO[bytes] | None = None
        self._text: str | None = None
        self._pos = 0
        self._bytes_read = 0
        self._lines_read = 0
        if isinstance(source, Path):
            self._stream = source.open("rb")
        elif isinstance(source, bytes | bytearray | memoryview):
            self._stream = io.BytesIO(bytes(source))
        elif isinstance(source, str):
            self._text = source.removeprefix("\ufeff")
        else:
            self._stream = source
        self._decoder: codecs.IncrementalDecoder | None = None
        self.first = True
        self.done = False

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()

    def _choose_decoder(self, head: bytes) -> bytes:
        for magic, what in _MAGIC.items():
            if head.startswith(magic):
                raise TranscriptError(f"this is {what}, not a transcript")
        if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
            self._decoder = codecs.getincrementaldecoder("utf-16")()
            return head
        self._decoder = codecs.getincrementaldecoder("utf-8-sig")()
        return head

    def read(self) -> str:
        """The next chunk of text ('' at the end)."""
        if self.done:
            return ""
        if self._text is not None:
            chunk = self._text[self._pos : self._pos + CHUNK]
            self._pos += len(chunk)
            if not chunk:
                self.done = True
            self._check_nul(chunk, None)
            self.first = False
            return chunk
        assert self._stream is not None
        raw = self._stream.read(CHUNK)
        if self.first:
            raw = self._choose_decoder(raw)
        assert self._decoder is not None
        try:
            chunk = self._decoder.decode(raw, final=not raw)
        except UnicodeDecodeError as exc:
            line = self._lines_read + raw[: max(exc.start, 0)].count(b"\n") + 1
            offset = self._bytes_read + max(exc.start, 0)
            raise TranscriptError(
                f"not UTF-8 text (byte 0x{raw[exc.start : exc.start + 1].hex()} at offset "
                f"{offset:,}); save the file as UTF-8",
                line=line,
            ) from None
        self._check_nul(chunk, raw)
        self._bytes_read += len(raw)
        self._lines_read += raw.count(b"\n")
        self.first = False
        if not raw:
            self.done = True
        return chunk

    def _check_nul(self, chunk: str, raw: bytes | None) -> None:
        at = chunk.find("\x00")
        if at < 0:
            return
        line = chunk.count("\n", 0, at) + 1
        if self.first:
            raise TranscriptError(
                "this looks like a binary file (a NUL byte near the start), not a transcript",
                line=line,
            )
        raise TranscriptError(
            "a NUL byte (\\0) inside the text: the file is damaged or not text"
            + ("" if raw is None else " (or not UTF-8)")
        )


class _Buffer:
    """A sliding window over the chunks, with line numbers for any position in it."""

    def __init__(self, chunks: _Chunks) -> None:
        self.chunks = chunks
        self.buf = ""
        self.pos = 0
        self.eof = False
        self._line = 1  # line number at `_line_pos`
        self._line_pos = 0
        self.total = 0

    def more(self) -> bool:
        if self.eof:
            return False
        chunk = self.chunks.read()
        if not chunk:
            self.eof = True
            return False
        self.total += len(chunk)
        if self.pos > CHUNK:  # drop what was consumed
            self.line_at(self.pos)
            self.buf = self.buf[self.pos :]
            self._line_pos -= self.pos
            self.pos = 0
        self.buf += chunk
        return True

    def line_at(self, pos: int) -> int:
        if pos >= self._line_pos:
            self._line += self.buf.count("\n", self._line_pos, pos)
        else:
            self._line -= self.buf.count("\n", pos, self._line_pos)
        self._line_pos = pos
        return self._line

    def skip_ws(self) -> str:
        """The next non-space character ('' at the end), `pos` left on it."""
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in _WS:
                self.pos += 1
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.more():
                return ""

    def value(self, *, index: int | None) -> tuple[Any, int]:
        """The JSON value at `pos` (reading more as needed), and the line it starts on."""
        start_line = self.line_at(self.pos)
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                cut = exc.pos >= len(self.buf) - 64 or exc.msg.startswith("Unterminated string")
                if cut and len(self.buf) - self.pos < MAX_RECORD and self.more():
                    continue
                if len(self.buf) - self.pos >= MAX_RECORD:
                    raise TranscriptError(
                        f"one element is over {MAX_RECORD:,} characters (or a string is never "
                        "closed)",
                        line=start_line,
                    ) from None
                line = self.line_at(exc.pos)
                column = exc.pos - (self.buf.rfind("\n", 0, exc.pos) + 1) + 1
                where = f" (in item {index + 1})" if index is not None else ""
                problem = "the file ends too soon" if self.eof and cut else exc.msg
                raise TranscriptError(
                    f"not valid JSON (column {column}){where}: {problem}", line=line
                ) from None
            except RecursionError:
                raise TranscriptError(
                    "the JSON nests too deeply to read", line=start_line
                ) from None
            if end == len(self.buf) and not self.eof and self.more():
                continue  # a number cut at the chunk's end would read short: read on
            self.pos = end
            return value, start_line


def open_document(source: Source, *, name: str = "", keep_bad_lines: bool = False) -> Document:
    """What container `source` holds, and its records as they are read."""
    chunks = _Chunks(source)
    buffer = _Buffer(chunks)
    first = buffer.skip_ws()
    suffix = name.lower().rsplit(".", 1)[-1] if "." in name else ""
    if not first:
        chunks.close()
        raise TranscriptError("the file is empty", line=1)
    if suffix in ("txt", "md") or first not in "[{":
        return Document("text", iter(()), text=_all_text(buffer, chunks))
    if first == "[":
        return Document("list", _list_records(buffer, chunks))
    value, start_line = buffer.value(index=None)
    multi_line = buffer.line_at(buffer.pos) > start_line
    nxt = buffer.skip_ws()
    if not nxt:
        chunks.close()
        return Document("object", iter([Record(value, line=1)]))
    if nxt != "{":
        line = buffer.line_at(buffer.pos)
        chunks.close()
        raise TranscriptError(
            f"unexpected {nxt!r} after the first JSON object (JSON lines hold one object a line)",
            line=line,
        )
    notes: list[str] = []
    if multi_line:
        return Document("lines", _value_records(value, buffer, chunks), notes=notes)
    return Document(
        "lines", _line_records(value, buffer, chunks, keep_bad_lines, notes), notes=notes
    )


def _all_text(buffer: _Buffer, chunks: _Chunks) -> str:
    while buffer.more():
        if len(buffer.buf) > MAX_CHARS:
            chunks.close()
            raise TranscriptError(f"the file is larger than {MAX_CHARS:,} characters")
    chunks.close()
    return buffer.buf


def _list_records(buffer: _Buffer, chunks: _Chunks) -> Iterator[Record]:
    try:
        buffer.pos += 1  # the '['
        index = 0
        while True:
            ch = buffer.skip_ws()
            if ch == "]" and index == 0:
                buffer.pos += 1
                break
            if index:
                if ch == "]":
                    buffer.pos += 1
                    break
                if ch != ",":
                    line = buffer.line_at(buffer.pos)
                    problem = (
                        "the file ends too soon" if not ch else f"expected ',' or ']', got {ch!r}"
                    )
                    raise TranscriptError(
                        f"not valid JSON (after item {index}): {problem}", line=line
                    )
                buffer.pos += 1
                buffer.skip_ws()
            value, line = buffer.value(index=index)
            yield Record(value, line=line, index=index)
            index += 1
        rest = buffer.skip_ws()
        if rest:
            raise TranscriptError(
                f"unexpected {rest!r} after the end of the list", line=buffer.line_at(buffer.pos)
            )
    finally:
        chunks.close()


def _value_records(first: Any, buffer: _Buffer, chunks: _Chunks) -> Iterator[Record]:
    try:
        yield Record(first, line=1)
        while buffer.skip_ws():
            value, line = buffer.value(index=None)
            yield Record(value, line=line)
    finally:
        chunks.close()


def _iter_lines(pending: str, chunks: _Chunks) -> Iterator[str]:
    tail = pending
    while True:
        chunk = chunks.read()
        if not chunk:
            break
        tail += chunk
        parts = tail.split("\n")
        tail = parts.pop()
        yield from parts
    yield from tail.split("\n")


def _line_records(
    first: Any, buffer: _Buffer, chunks: _Chunks, keep_bad: bool, notes: list[str]
) -> Iterator[Record]:
    """JSON lines after the first: each line parsed alone, so one bad line is named and, when
    asked, skipped while the others are kept."""
    try:
        yield Record(first, line=1)
        number = buffer.line_at(buffer.pos) - 1
        pending = buffer.buf[buffer.pos :]
        buffer.buf, buffer.pos = "", 0
        for text in _iter_lines(pending, chunks):
            number += 1
            if not text.strip():
                continue
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                short = exc.pos >= len(text.rstrip()) - 1 or exc.msg.startswith("Unterminated")
                problem = "the line is cut short" if short else exc.msg
                if keep_bad:
                    notes.append(f"line {number} skipped: not valid JSON ({problem})")
                    continue
                raise TranscriptError(
                    f"not valid JSON (column {exc.colno}): {problem} (to keep the other lines, "
                    "skip the bad ones: --skip-bad-lines)",
                    line=number,
                ) from None
            except RecursionError:
                raise TranscriptError("the JSON nests too deeply to read", line=number) from None
            yield Record(value, line=number)
    finally:
        chunks.close()
