"""`memory-lab transcript FILE`: a conversation as the lab sees it, to check an import before
using it (system prompt, turns as user/assistant pairs, what was skipped or joined); with
`--list`, the pick list of a file of many conversations.

May touch: the file it is given (read only), stdout and stderr.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from cli.inputs import add_transcript_arguments, read_transcript_arg, source_path
from cli.outputs import STDOUT, check_outputs, write_json
from cli.parsing import EXIT_CODES_HELP, EXIT_OK, HelpFormatter, UsageError
from engines import transcripts
from memory.tokens import TokenCounter

EXAMPLES = """examples:
  memory-lab transcript chat.json
  memory-lab transcript conversations.json --list            # a ChatGPT or Claude.ai export
  memory-lab transcript conversations.json --list --search goa
  memory-lab transcript conversations.json --conversation 3 --json
  memory-lab transcript runs.jsonl --conversation thread-a --skip-bad-lines

"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Read a transcript file in any format the lab imports (OpenAI or Anthropic messages, "
        "User:/Assistant: text, ChatGPT and Claude.ai exports, ShareGPT, OpenAI chat JSONL or "
        "Batch input, LangChain messages_to_dict, LangSmith runs, OpenTelemetry GenAI spans, "
        "a Memory Lab export) and print it as the lab sees it."
    )
    p.epilog = EXAMPLES + EXIT_CODES_HELP
    p.formatter_class = HelpFormatter
    add_transcript_arguments(
        p, file_help="the transcript file", json_help="print (or write to FILE) the result as JSON"
    )
    p.add_argument("--list", action="store_true", help="list the file's conversations")
    p.add_argument("--search", metavar="TEXT", help="with --list: only titles or ids with TEXT")


def listing(
    path: str, *, skip_bad_lines: bool, search: str | None
) -> list[transcripts.Conversation]:
    p = source_path(path)
    try:
        found = transcripts.list_conversations(p, name=p.name, keep_bad_lines=skip_bad_lines)
    except transcripts.TranscriptError as exc:
        raise UsageError(f"{path}: {exc}") from None
    if search:
        needle = search.casefold()
        found = [c for c in found if needle in c.title.casefold() or needle in c.id.casefold()]
    return found


def list_data(path: str, found: list[transcripts.Conversation]) -> dict[str, Any]:
    """`--list --json`."""
    return {
        "file": Path(path).name,
        "count": len(found),
        "conversations": [c.as_dict() for c in found],
    }


def transcript_data(t: transcripts.Transcript, counter: TokenCounter) -> dict[str, Any]:
    """`memory-lab transcript FILE --json`: the conversation, and the lab's token counts per
    turn beside those a trace reported."""
    data = t.as_dict()
    data["format_title"] = transcripts.FORMATS.get(t.format, t.format)
    data["system_tokens"] = counter.count(t.system or "")
    for i, turn in enumerate(data["turns"]):
        turn["user_tokens"] = counter.count(turn["user"])
        turn["assistant_tokens"] = counter.count(turn["assistant"] or "")
        if t.usage and t.usage[i] is not None:
            turn["reported"] = data["usage"][i]
    data.pop("usage", None)
    return data


def _clip(text: str, width: int = 0) -> str:
    return text if not width or len(text) <= width else text[: width - 1] + "…"


def print_transcript(t: transcripts.Transcript, counter: TokenCounter) -> None:
    name = f"{t.title!r} " if t.title else ""
    ident = f"(id {t.id}) " if t.id else ""
    print(f"{transcripts.FORMATS.get(t.format, t.format)} · conversation {t.number} {name}{ident}"
          + (f"· {t.created}" if t.created else ""))  # fmt: skip
    print(t.describe())
    for note in t.notes:
        print(f"note: {note}")
    print()
    if t.system:
        print(f"System prompt ({counter.count(t.system)} tokens):")
        print("  " + t.system.replace("\n", "\n  "))
        print()
    for i, (user, reply) in enumerate(t.turns, start=1):
        line = f"Turn {i} (user {counter.count(user)} tokens"
        if reply is not None:
            line += f", reply {counter.count(reply)} tokens"
        if t.usage and t.usage[i - 1] is not None:
            u = t.usage[i - 1]
            assert u is not None
            line += f"; the trace reported {u.input_tokens} in / {u.output_tokens} out"
        print(line + ")")
        print("  user: " + user.replace("\n", "\n        "))
        print("  assistant: " + ("(no recorded reply)" if reply is None
                                 else reply.replace("\n", "\n             ")))  # fmt: skip


def print_list(path: str, found: list[transcripts.Conversation]) -> None:
    print(f"{Path(path).name}: {len(found)} conversation(s)")
    rows = [["#", "date", "turns", "title", "id"]]
    for c in found:
        title = _clip(c.title or "(untitled)", 50) + (
            f"  [cannot be read: {c.error}]" if c.error else ""
        )
        rows.append([str(c.number), c.created[:10] or "-", str(c.turns), title, c.id or "-"])
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for j, r in enumerate(rows):
        cells = [r[0].rjust(widths[0]), r[1].ljust(widths[1]), r[2].rjust(widths[2]),
                 r[3].ljust(widths[3]), r[4]]  # fmt: skip
        print("  ".join(cells).rstrip())
        if j == 0:
            print("  ".join("-" * w for w in widths) + "  --")


def run(args: argparse.Namespace) -> int:
    check_outputs(args)
    if args.list:
        found = listing(args.file, skip_bad_lines=args.skip_bad_lines, search=args.search)
        if args.json:
            write_json(args.json, list_data(args.file, found))
        if args.json != STDOUT:
            print_list(args.file, found)
        return EXIT_OK
    if args.search:
        raise UsageError("--search filters the list: use it with --list")
    t = read_transcript_arg(args)
    counter = TokenCounter()
    if args.json:
        write_json(args.json, transcript_data(t, counter))
    if args.json != STDOUT:
        print_transcript(t, counter)
    return EXIT_OK
