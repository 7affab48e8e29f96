"""The standard long-memory benchmarks' files, loaded natively: LoCoMo and LongMemEval (and the
lab's own long-conversation format, scenarios/longmem.py), as conversations of numbered turns
whose questions point at the turns holding their evidence.

* **LoCoMo**, in each form it is shipped: the release's zip of per-conversation files, the
  folder it unpacks to, one such file (the conversation's keys at the top, beside ``qa``;
  named by its file name), and the combined list of ``{sample_id, conversation: {speaker_a,
  speaker_b, session_N: [{speaker, dia_id, text, blip_caption?}], session_N_date_time},
  qa: [{question, answer, category, evidence: ["D1:3", ...]}]}``. A file of the zip or
  folder that cannot be used is skipped with its reason. Speaker A is the user, B the
  assistant; a shared image's caption joins its line's text as LoCoMo's evaluation words
  it (``… and shared <caption>``);
  consecutive lines of one speaker are joined into one message (noted) and each turn keeps
  the ``dia_id``s it holds, so evidence maps onto turns. A turn that opens with speaker B
  gets the user text ``[no message from A]``. Categories are named as LoCoMo's evaluation
  code numbers them (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial);
  adversarial questions are reported apart. An evidence id that matches no line is kept as
  unresolved and reported.
* **LongMemEval** (a list of ``{question_id, question_type, question, answer,
  question_date, haystack_dates, haystack_session_ids?, haystack_sessions: [[{role,
  content, has_answer?}]], answer_session_ids}``): every question has its own haystack, so
  each is a conversation of its own. Evidence: the turns holding a ``has_answer`` message,
  and the sessions in ``answer_session_ids``. Questions whose id ends ``_abs`` (abstention)
  are reported apart.

May import: scenarios/ and memory/ only (data and text, no model, no network); reads the
files and folders it is given.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ijson

from memory.jsontext import parse_json
from scenarios.longmem import LongMemFormatError, parse_conversation

LOCOMO_CATEGORIES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
DATASETS = ("locomo", "longmemeval", "memorylab")
_SESSION = re.compile(r"^session_(\d+)$")
_DIA = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")


class BenchmarkFormatError(LongMemFormatError):
    """A benchmark file that cannot be used; says which sample or question and which field."""


@dataclass(frozen=True)
class BenchQuestion:
    """A question, when it is asked, and the turns (and sessions) that hold its answer."""

    id: str
    category: str
    question: str
    answer: str
    evidence: tuple[int, ...]  # turn numbers, from 1
    evidence_ids: tuple[str, ...] = ()  # as the file wrote them (dia_ids, session ids)
    unresolved: tuple[str, ...] = ()  # evidence ids that match no line or session
    evidence_sessions: tuple[int, ...] = ()  # session numbers, from 1
    after_turn: int | None = None  # None: after the last turn
    apart: bool = False  # adversarial (LoCoMo) or abstention (LongMemEval): reported apart


@dataclass(frozen=True)
class BenchConversation:
    """One conversation of numbered turns, each turn's source ids and session, its questions."""

    id: str
    system: str
    turns: tuple[tuple[str, str], ...]
    turn_ids: tuple[tuple[str, ...], ...]
    turn_sessions: tuple[int, ...]
    questions: tuple[BenchQuestion, ...]
    session_dates: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def asked_at(self, q: BenchQuestion) -> int:
        return len(self.turns) if q.after_turn is None else q.after_turn


@dataclass(frozen=True)
class Dataset:
    """A benchmark file's conversations."""

    name: str  # locomo, longmemeval, memorylab
    conversations: tuple[BenchConversation, ...]
    skipped: tuple[str, ...] = ()  # files (or conversations) left out, each with its reason

    @property
    def questions(self) -> int:
        return sum(len(c.questions) for c in self.conversations)


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


# ---- LoCoMo ------------------------------------------------------------------------------


def _is_bare_locomo(data: Any) -> bool:
    """A conversation as the release's zip holds it: the sessions at the top, beside `qa`."""
    return isinstance(data, Mapping) and "speaker_a" in data and "conversation" not in data


def _locomo_sample(data: Any, number: int, name: str = "") -> BenchConversation:
    if not isinstance(data, Mapping):
        raise BenchmarkFormatError(f"sample {number}: must be an object, not {type(data).__name__}")
    sample = _text(data.get("sample_id")) or name or f"sample {number}"
    where = f"sample {sample!r}"
    conv = data if _is_bare_locomo(data) else data.get("conversation")
    if not isinstance(conv, Mapping):
        raise BenchmarkFormatError(f"{where}: 'conversation' must be an object")
    if _is_bare_locomo(data) and "qa" not in data:
        raise BenchmarkFormatError(f"{where}: 'qa' is missing (the conversation's questions)")
    a, b = conv.get("speaker_a"), conv.get("speaker_b")
    if not isinstance(a, str) or not isinstance(b, str):
        raise BenchmarkFormatError(f"{where}: 'speaker_a' and 'speaker_b' must be names")
    sessions = sorted((int(m.group(1)), key) for key in conv if (m := _SESSION.match(str(key))))
    if not sessions:
        raise BenchmarkFormatError(f"{where}: 'conversation' has no session_N lists")
    turns: list[list[Any]] = []  # [user, reply, ids, session]
    dates: list[str] = []
    notes: list[str] = []
    joined = 0
    last_role = ""
    for n, key in sessions:
        lines = conv[key]
        dates.append(_text(conv.get(f"{key}_date_time")))
        if not isinstance(lines, list):
            raise BenchmarkFormatError(f"{where}: {key} must be a list of lines")
        for i, line in enumerate(lines):
            lw = f"{where} {key}[{i}]"
            if not isinstance(line, Mapping):
                raise BenchmarkFormatError(f"{lw}: a line must be an object")
            speaker = line.get("speaker")
            text = _text(line.get("text"))
            if isinstance(line.get("blip_caption"), str):  # an image shared in the chat:
                # worded as LoCoMo's own evaluation renders it ("… and shared <caption>")
                text = f"{text} and shared {line['blip_caption']}".strip()
            if speaker not in (a, b):
                raise BenchmarkFormatError(f"{lw}: speaker {speaker!r} is neither {a!r} nor {b!r}")
            if not text.strip():
                raise BenchmarkFormatError(f"{lw}: the line has no text")
            dia = _text(line.get("dia_id")) or f"D{n}:{i + 1}"
            role = "user" if speaker == a else "assistant"
            if role == "user" and last_role == "user":
                turns[-1][0] += "\n" + text
                joined += 1
            elif role == "user":
                turns.append([text, "", [], n])
            elif not turns:
                turns.append([f"[no message from {a}]", text, [], n])
            elif last_role == "assistant":
                turns[-1][1] += "\n" + text
                joined += 1
            else:
                turns[-1][1] = text
            turns[-1][2].append(dia)
            last_role = role
    if joined:
        notes.append(
            f"{joined} line{'' if joined == 1 else 's'} joined to the line before (same speaker)"
        )
    where_of = {dia: t for t, (_, _, ids, _) in enumerate(turns, start=1) for dia in ids}
    qa = data.get("qa") or []
    if not isinstance(qa, list):
        raise BenchmarkFormatError(f"{where}: 'qa' must be a list")
    questions = []
    for i, raw in enumerate(qa):
        qw = f"{where} qa[{i}]"
        if not isinstance(raw, Mapping):
            raise BenchmarkFormatError(f"{qw}: must be an object")
        question = _text(raw.get("question"))
        if not question.strip():
            raise BenchmarkFormatError(f"{qw}: 'question' is missing")
        category = raw.get("category")
        name = (
            LOCOMO_CATEGORIES.get(category, str(category))
            if isinstance(category, int)
            else _text(category) or "uncategorised"
        )
        evidence_raw = raw.get("evidence") or []
        if not isinstance(evidence_raw, list):
            raise BenchmarkFormatError(f"{qw}: 'evidence' must be a list of dialogue ids")
        ids: list[str] = []
        for e in evidence_raw:
            found = _DIA.findall(_text(e))
            ids += [f"D{s}:{d}" for s, d in found] if found else [_text(e)]
        resolved = sorted({where_of[i] for i in ids if i in where_of})
        unresolved = tuple(i for i in ids if i not in where_of)
        answer = _text(raw.get("answer", raw.get("adversarial_answer", "")))
        questions.append(
            BenchQuestion(
                id=f"{sample}:{i + 1}",
                category=name,
                question=question,
                answer=answer,
                evidence=tuple(resolved),
                evidence_ids=tuple(ids),
                unresolved=unresolved,
                evidence_sessions=tuple(
                    sorted({int(i[1:].split(":")[0]) for i in ids if i in where_of})
                ),
                apart=category == 5 or name == "adversarial",
            )
        )
    return BenchConversation(
        id=sample,
        system="",
        turns=tuple((u, r) for u, r, _, _ in turns),
        turn_ids=tuple(tuple(ids) for _, _, ids, _ in turns),
        turn_sessions=tuple(s for _, _, _, s in turns),
        questions=tuple(questions),
        session_dates=tuple(dates),
        notes=tuple(notes),
    )


def load_locomo(text: str | bytes) -> Dataset:
    """LoCoMo as released: the combined list (`locomo10.json`), one conversation's file
    (`26.json`), or the bytes of the release's zip (one file per conversation)."""
    if isinstance(text, bytes) and text.startswith(ZIP_MAGIC):
        return load_locomo_files(zip_members(text))
    data = parse_json(text, "the LoCoMo file", BenchmarkFormatError)
    samples = data if isinstance(data, list) else [data]
    if not samples:
        raise BenchmarkFormatError("the LoCoMo file holds no samples")
    return Dataset("locomo", tuple(_locomo_sample(s, i) for i, s in enumerate(samples, start=1)))


ZIP_MAGIC = b"PK\x03\x04"
MAX_MEMBER_BYTES = 200_000_000  # a LoCoMo conversation's file is well under 1 MB


def zip_members(data: bytes) -> list[tuple[str, bytes]]:
    """(name, bytes) of each file in a zip's bytes, folders left out, in name order."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = sorted(
                (i for i in archive.infolist() if not i.is_dir()), key=lambda i: i.filename
            )
            if any(i.file_size > MAX_MEMBER_BYTES for i in infos):
                raise BenchmarkFormatError("the zip holds a file over 200 MB: not a LoCoMo release")
            return [(i.filename, archive.read(i)) for i in infos]
    except (zipfile.BadZipFile, OSError) as exc:
        raise BenchmarkFormatError(f"not a readable zip file: {exc}") from None


def load_locomo_files(files: Sequence[tuple[str, bytes]]) -> Dataset:
    """LoCoMo from several files (the release's zip or its folder): each `.json` file one
    conversation (or a list of them); a file that cannot be used is skipped and said so,
    the rest load. BenchmarkFormatError when none can be used."""
    conversations: list[BenchConversation] = []
    skipped: list[str] = []
    for name, raw in files:
        stem = name.rsplit("/", 1)[-1]
        if not stem.endswith(".json") or stem.startswith("."):
            skipped.append(f"{name}: not a .json file")
            continue
        try:
            data = parse_json(raw, name, BenchmarkFormatError)
            samples = data if isinstance(data, list) else [data]
            conversations += [
                _locomo_sample(s, len(conversations) + i, stem.removesuffix(".json"))
                for i, s in enumerate(samples, start=1)
            ]
        except BenchmarkFormatError as exc:
            skipped.append(f"{name}: {exc}")
    if not conversations:
        reasons = "; ".join(skipped[:3]) or "no files"
        raise BenchmarkFormatError(f"no LoCoMo conversation could be read ({reasons})")
    return Dataset("locomo", tuple(conversations), skipped=tuple(skipped))


def folder_files(folder: Path) -> list[tuple[str, bytes]]:
    """(name, bytes) of each file directly in `folder`, in name order."""
    return [(p.name, p.read_bytes()) for p in sorted(folder.iterdir()) if p.is_file()]


def load_path(path: Path, name: str = "auto") -> Dataset:
    """A benchmark from a path as its authors ship it: a file, a zip, or a folder of
    LoCoMo's per-conversation files. `name` is a dataset of DATASETS, or auto (detected)."""
    if path.is_dir():
        if name not in ("auto", "locomo"):
            raise BenchmarkFormatError(f"a folder is read as LoCoMo's files, not as {name}")
        return load_locomo_files(folder_files(path))
    data = path.read_bytes()
    return load(detect(data) if name == "auto" else name, data)


# ---- LongMemEval -------------------------------------------------------------------------


def _longmemeval_question(data: Any, number: int) -> BenchConversation:
    if not isinstance(data, Mapping):
        raise BenchmarkFormatError(f"question {number}: must be an object")
    qid = _text(data.get("question_id")) or f"q{number}"
    where = f"question {qid!r}"
    sessions = data.get("haystack_sessions")
    if not isinstance(sessions, list) or not sessions:
        raise BenchmarkFormatError(f"{where}: 'haystack_sessions' must be a non-empty list")
    session_ids = [_text(s) for s in data.get("haystack_session_ids") or []]
    dates = [_text(d) for d in data.get("haystack_dates") or []]
    turns: list[list[Any]] = []  # [user, reply, ids, session, has_answer]
    notes: list[str] = []
    for n, session in enumerate(sessions, start=1):
        if not isinstance(session, list):
            raise BenchmarkFormatError(
                f"{where} haystack_sessions[{n - 1}]: must be a list of messages"
            )
        sid = session_ids[n - 1] if n - 1 < len(session_ids) else f"session {n}"
        last = ""
        for i, m in enumerate(session):
            mw = f"{where} haystack_sessions[{n - 1}][{i}]"
            if not isinstance(m, Mapping) or m.get("role") not in ("user", "assistant"):
                raise BenchmarkFormatError(f"{mw}: needs 'role' user or assistant and 'content'")
            content = _text(m.get("content"))
            hit = bool(m.get("has_answer"))
            if m["role"] == "user":
                if last == "user":
                    turns[-1][0] += "\n" + content
                    turns[-1][4] = turns[-1][4] or hit
                else:
                    turns.append([content, "", [f"{sid}:{i}"], n, hit])
            elif last == "user":
                turns[-1][1] = content
                turns[-1][4] = turns[-1][4] or hit
            elif last == "assistant":
                turns[-1][1] += "\n" + content
                turns[-1][4] = turns[-1][4] or hit
            else:
                turns.append(["[no user message]", content, [f"{sid}:{i}"], n, hit])
            last = m["role"]
    answer_ids = [_text(s) for s in data.get("answer_session_ids") or []]
    answer_sessions = sorted({session_ids.index(s) + 1 for s in answer_ids if s in session_ids})
    unresolved = tuple(s for s in answer_ids if s not in session_ids)
    evidence = [t for t, row in enumerate(turns, start=1) if row[4]]
    if not evidence and answer_sessions:
        evidence = [t for t, row in enumerate(turns, start=1) if row[3] in answer_sessions]
        notes.append(f"{where}: no has_answer turn; every turn of the answer sessions is evidence")
    question = BenchQuestion(
        id=qid,
        category=_text(data.get("question_type")) or "uncategorised",
        question=_text(data.get("question")),
        answer=_text(data.get("answer")),
        evidence=tuple(evidence),
        evidence_ids=tuple(answer_ids),
        unresolved=unresolved,
        evidence_sessions=tuple(answer_sessions or sorted({turns[t - 1][3] for t in evidence})),
        apart=qid.endswith("_abs"),
    )
    if not question.question.strip():
        raise BenchmarkFormatError(f"{where}: 'question' is missing")
    return BenchConversation(
        id=qid,
        system="",
        turns=tuple((u, r) for u, r, _, _, _ in turns),
        turn_ids=tuple(tuple(ids) for _, _, ids, _, _ in turns),
        turn_sessions=tuple(s for _, _, _, s, _ in turns),
        questions=(question,),
        session_dates=tuple(dates),
        notes=tuple(notes),
    )


def stream_longmemeval(
    path: Path, *, on_read: Callable[[float], None] | None = None
) -> Iterator[BenchConversation | str]:
    """LongMemEval's questions read one at a time from `path` (ijson), so a release file of
    several hundred MB or GB is never held whole: each question's conversation, or, for one
    that cannot be used, a line saying which question and why (the rest go on). A file that
    ends early yields that line last. `on_read(share)`: the share of the file read so far,
    told before each question is yielded."""
    number = 0
    size = path.stat().st_size or 1
    with path.open("rb") as handle:
        try:
            for number, data in enumerate(ijson.items(handle, "item", use_float=True), start=1):
                if on_read is not None:
                    on_read(min(1.0, handle.tell() / size))
                try:
                    yield _longmemeval_question(data, number)
                except BenchmarkFormatError as exc:
                    yield f"{path.name}: {exc}"
        except ijson.JSONError as exc:
            yield f"{path.name}: the file ends or breaks after question {number} ({_why(exc)})"


def _why(exc: Exception) -> str:
    """A JSON parser's error without the file's text it quotes (the page may be shown a file
    its viewer could not read otherwise): its first line."""
    return (str(exc).splitlines() or [type(exc).__name__])[0].strip()


def sniff(path: Path) -> str:
    """Which dataset a file is, from its first bytes and its first record's keys, without
    reading it whole (LongMemEval's release files are large)."""
    with path.open("rb") as handle:
        head = handle.read(len(ZIP_MAGIC))
        if head == ZIP_MAGIC:
            return "locomo"
        handle.seek(0)
        keys: set[str] = set()
        try:
            for prefix, event, value in ijson.parse(handle):
                if event == "map_key" and prefix in ("", "item"):
                    keys.add(value)
                elif event == "end_map" and prefix in ("", "item"):
                    break
        except ijson.JSONError as exc:
            raise BenchmarkFormatError(f"not a JSON file ({_why(exc)})") from None
    if "haystack_sessions" in keys:
        return "longmemeval"
    if "qa" in keys and ("conversation" in keys or "speaker_a" in keys):
        return "locomo"
    if "sessions" in keys:
        return "memorylab"
    raise BenchmarkFormatError(
        "not a LoCoMo, LongMemEval or Memory Lab long-conversation file (see the format help)"
    )


def load_longmemeval(text: str | bytes) -> Dataset:
    """A LongMemEval file: a list of questions, each with its own haystack."""
    data = parse_json(text, "the LongMemEval file", BenchmarkFormatError)
    if not isinstance(data, list) or not data:
        raise BenchmarkFormatError("a LongMemEval file is a non-empty list of questions")
    return Dataset("longmemeval", tuple(_longmemeval_question(q, i) for i, q in enumerate(data, 1)))


# ---- the lab's own format ----------------------------------------------------------------


def load_memorylab(text: str | bytes) -> Dataset:
    """The lab's long-conversation file (scenarios/longmem.py) in the same shape."""
    conv = parse_conversation(text)
    turns: list[tuple[str, str]] = []
    sessions: list[int] = []
    for n, s in enumerate(conv.sessions, start=1):
        turns += s.turns
        sessions += [n] * len(s.turns)
    questions = tuple(
        BenchQuestion(
            id=q.id,
            category=q.kind,
            question=q.question,
            answer=q.answer,
            evidence=q.evidence,
            evidence_sessions=tuple(sorted({sessions[e - 1] for e in q.evidence})),
            after_turn=q.after_turn,
        )  # fmt: skip
        for q in conv.questions
    )
    return Dataset("memorylab", (BenchConversation(
        id="conversation", system=conv.system, turns=tuple(turns),
        turn_ids=tuple((str(i),) for i in range(1, len(turns) + 1)),
        turn_sessions=tuple(sessions), questions=questions,
        session_dates=tuple(s.date for s in conv.sessions),
    ),))  # fmt: skip


LOADERS = {"locomo": load_locomo, "longmemeval": load_longmemeval, "memorylab": load_memorylab}


def load(name: str, text: str | bytes) -> Dataset:
    """A benchmark file by its dataset name (one of DATASETS)."""
    if name not in LOADERS:
        raise BenchmarkFormatError(f"unknown dataset {name!r}: one of {', '.join(DATASETS)}")
    return LOADERS[name](text)


def detect(text: str | bytes) -> str:
    """Which dataset a file is, from its shape (for uploads that do not say)."""
    if isinstance(text, bytes) and text.startswith(ZIP_MAGIC):
        return "locomo"  # the release's zip of per-conversation files
    data = parse_json(text, "the file", BenchmarkFormatError)
    first = data[0] if isinstance(data, list) and data else data
    if isinstance(first, Mapping):
        if "qa" in first and ("conversation" in first or _is_bare_locomo(first)):
            return "locomo"
        if "haystack_sessions" in first:
            return "longmemeval"
        if "sessions" in first:
            return "memorylab"
    raise BenchmarkFormatError(
        "not a LoCoMo, LongMemEval or Memory Lab long-conversation file (see the format help)"
    )


def session_of(conv: BenchConversation, turns: Sequence[int]) -> tuple[int, ...]:
    return tuple(sorted({conv.turn_sessions[t - 1] for t in turns}))
