"""How the parts of a lane's turns that grow with the conversation are stored once, so a
session's rows grow with its length, not with its square. Used by storage/writes.py (packing)
and storage/repository.py (unpacking); touches no table itself.

* **Request bodies.** Each message of a body's ``messages`` list is kept once per session, in
  ``ml_messages``, under the hash of its stored JSON; each lane has a log (``ml_lane_log``)
  of the hashes in the order it first sent them. The body column holds the body with its
  ``messages`` replaced by ``{"plan": [[i, j], ...]}``: the messages are the log's ``i:j``
  slices, in order (the whole history is one slice, a window two). A row packed so has
  ``body_format`` = ``PACKED``; NULL is a body stored whole (older rows). Rebuilt bodies are
  equal to what was sent, key order included, so they dump to the same JSON.
* **Turn lists.** A record's kept, dropped, summarised and retrieved turns and its parts'
  turns are stored as runs, in order: ``[1, [3, 40], 45]`` is 1, 3..40, 45.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from storage.errors import SessionFormatError
from storage.records import dumps

PACKED = 1
TURN_LISTS = ("kept", "dropped", "summarised", "retrieved")


def runs(turns: Sequence[int]) -> list[int | list[int]]:
    """`turns` with each ascending run of three or more consecutive numbers as [first, last]."""
    out: list[int | list[int]] = []
    i = 0
    while i < len(turns):
        j = i
        while j + 1 < len(turns) and turns[j + 1] == turns[j] + 1:
            j += 1
        if j - i >= 2:
            out.append([turns[i], turns[j]])
        else:
            out.extend(turns[i : j + 1])
        i = j + 1
    return out


def expand(items: Iterable[Any]) -> list[Any]:
    """The turn numbers `runs` packed (plain numbers pass through: older rows)."""
    out: list[Any] = []
    for item in items:
        if isinstance(item, list) and len(item) == 2 and all(type(v) is int for v in item):
            out.extend(range(item[0], item[1] + 1))
        else:
            out.append(item)
    return out


def pack_record(data: dict[str, Any]) -> dict[str, Any]:
    """A record's dict (storage.records.record_data) with its turn lists as runs."""
    account = data.get("account")
    if not isinstance(account, dict):
        return data
    packed = {**account}
    for name in TURN_LISTS:
        if isinstance(packed.get(name), list):
            packed[name] = runs(packed[name])
    packed["parts"] = [[*p[:2], runs(p[2])] if len(p) == 3 else p for p in packed.get("parts", [])]
    return {**data, "account": packed}


def unpack_record(data: Any) -> Any:
    """`pack_record` undone (anything else is left for the codec to judge)."""
    account = data.get("account") if isinstance(data, dict) else None
    if not isinstance(account, dict):
        return data
    for name in TURN_LISTS:
        if isinstance(account.get(name), list):
            account[name] = expand(account[name])
    parts = account.get("parts")
    if isinstance(parts, list):
        account["parts"] = [
            [*p[:2], expand(p[2])] if isinstance(p, list) and len(p) == 3 and isinstance(p[2], list)
            else p
            for p in parts
        ]  # fmt: skip
    return data


def message_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


@dataclass(frozen=True)
class Packed:
    """One body packed: its column JSON and format, the messages it adds to the session (by
    hash) and the hashes it appends to the lane's log (from `start` on)."""

    text: str
    body_format: int | None
    new: Mapping[str, str] = field(default_factory=dict)
    start: int = 0
    appended: tuple[str, ...] = ()
    learnt: tuple[tuple[tuple[str, str], str], ...] = ()


class LanePacker:
    """Packs one lane's bodies. It holds the lane's log (every message hash in the order the
    lane first sent it: ``ml_lane_log``) and the hashes of messages it has seen, so a turn
    costs what its new messages cost. `load` the lane's stored log before the first `pack`;
    `commit` once the packed row is written, so a write that fails leaves it as it was."""

    def __init__(self, log: Iterable[str] = ()) -> None:
        self.log: list[str] = []
        self._first: dict[str, int] = {}
        self._known: dict[tuple[str, str], str] = {}
        self._secrets: frozenset[str] = frozenset()
        self._extend(log)

    def _extend(self, hashes: Iterable[str]) -> None:
        for h in hashes:
            self._first.setdefault(h, len(self.log))
            self.log.append(h)

    def pack(self, body: Any, secrets: Iterable[str]) -> Packed:
        messages = body.get("messages") if isinstance(body, dict) else None
        if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
            return Packed(dumps(body, secrets), None)
        secrets = frozenset(secrets)
        if secrets != self._secrets:  # a key learnt since: texts are masked anew
            self._known.clear()
            self._secrets = secrets
        new: dict[str, str] = {}
        learnt: list[tuple[tuple[str, str], str]] = []
        log = _Pending(self.log, self._first)
        plan: list[list[int]] = []
        for message in messages:
            h = self._hash(message, secrets, new, learnt)
            if plan and log.at(plan[-1][1]) == h:  # the run goes on
                plan[-1][1] += 1
                continue
            p = log.position(h)
            if plan and plan[-1][1] == p:
                plan[-1][1] += 1
            else:
                plan.append([p, p + 1])
        packed = {k: ({"plan": plan} if k == "messages" else v) for k, v in body.items()}
        return Packed(dumps(packed, secrets), PACKED, new, len(self.log), tuple(log.added),
                      tuple(learnt))  # fmt: skip

    def commit(self, packed: Packed) -> None:
        """The packed row is written: its appended hashes are in the log, its messages known."""
        if packed.start == len(self.log):
            self._extend(packed.appended)
        self._known.update(packed.learnt)

    def _hash(
        self,
        message: dict[str, Any],
        secrets: frozenset[str],
        new: dict[str, str],
        learnt: list[tuple[tuple[str, str], str]],
    ) -> str:
        role, content = message.get("role"), message.get("content")
        simple = list(message) == ["role", "content"]
        key = (
            (role, content)
            if simple and isinstance(role, str) and isinstance(content, str)
            else None
        )
        known = self._known.get(key) if key is not None else None
        if known is not None:
            return known
        text = dumps(message, secrets)
        digest = message_hash(text)
        new[digest] = text
        if key is not None:
            learnt.append((key, digest))
        return digest


class _Pending:
    """A lane's log as one body's packing sees it: the stored log, then what it appends."""

    def __init__(self, log: list[str], first: Mapping[str, int]) -> None:
        self.log, self.first = log, first
        self.added: list[str] = []
        self._added_at: dict[str, int] = {}

    def at(self, i: int) -> str | None:
        if i < len(self.log):
            return self.log[i]
        j = i - len(self.log)
        return self.added[j] if j < len(self.added) else None

    def position(self, h: str) -> int:
        """Where `h` first is in the log, appending it if it is not."""
        p = self.first.get(h, self._added_at.get(h))
        if p is None:
            p = self._added_at[h] = len(self.log) + len(self.added)
            self.added.append(h)
        return p


class LaneUnpacker:
    """Rebuilds one lane's bodies from their column JSON, the lane's log and the session's
    messages (each parsed once and shared by the bodies that hold it: bodies are never
    mutated). A body needs no other row, so a lost row costs only itself."""

    def __init__(self, lane: str, log: Sequence[str], messages: Mapping[str, str]) -> None:
        self.lane = lane
        self._log = log
        self._texts = messages
        self._parsed: dict[str, Any] = {}

    def body(self, turn: int, text: str | None, body_format: int | None) -> Any:
        if text is None:
            return None
        body = json.loads(text)
        if body_format is None:
            return body
        where = f"lanes[{self.lane!r}].turns (turn {turn}).body"
        spec = body.get("messages") if isinstance(body, dict) else None
        if body_format != PACKED or not isinstance(spec, dict):
            raise SessionFormatError(f"{where}: a stored body this version cannot read")
        out: list[Any] = []
        for item in spec.get("plan", []):
            if not (isinstance(item, list) and len(item) == 2
                    and all(type(v) is int for v in item)
                    and 0 <= item[0] <= item[1] <= len(self._log)):  # fmt: skip
                raise SessionFormatError(f"{where}: a plan item {item!r} names no messages")
            out += [self._message(h, where) for h in self._log[item[0] : item[1]]]
        body["messages"] = out
        return body

    def _message(self, digest: str, where: str) -> Any:
        parsed = self._parsed.get(digest)
        if parsed is None:
            text = self._texts.get(digest)
            if text is None:
                raise SessionFormatError(f"{where}: message {digest} is missing")
            parsed = self._parsed[digest] = json.loads(text)
        return parsed
