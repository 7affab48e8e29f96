"""`memory-lab recall PATH`: the standard long-memory
benchmarks, natively and with no model: which strategy settings keep the evidence turns
each question needs, with the benchmarks' own metrics beside the lab's (engines/benchmarks.py).

PATH is a file, LoCoMo's release zip or the folder it unpacks to; its form is told from its
shape unless `--dataset` says. May touch: the dataset files (read only), the `--json` file,
stdout and stderr.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from cli.inputs import add_transcript_arguments, source_path
from cli.outputs import STDOUT, check_outputs, write_json
from cli.parsing import EXIT_CODES_HELP, EXIT_OK, HelpFormatter, UsageError, strategies
from cli.progress import ProgressBar
from engines.benchmarks import (
    DEFAULT_SETTINGS,
    BenchReport,
    Checkpoint,
    run_path,
    streams,
    table_rows,
)
from memory.errors import MemoryLabError
from memory.lane_spec import LaneSpec
from memory.registry import REGISTRY
from scenarios.benchmarks import DATASETS, BenchmarkFormatError

EXAMPLES = """examples:
  memory-lab recall locomo10.zip                    LoCoMo's release, as downloaded
  memory-lab recall locomo10/                       ... the folder it unpacks to, or one file
  memory-lab recall --dataset locomo locomo10.json
  memory-lab recall --dataset longmemeval longmemeval_s.json --strategy retrieval:top_k=10
  memory-lab recall --dataset locomo locomo10.json --strategy full --strategy window:k=20 --json

"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Run a LoCoMo, LongMemEval or Memory Lab long-conversation file through strategy "
        "settings with no model: evidence turns in the payload (LoCoMo's retrieval recall of "
        "dia_ids), questions with all evidence, LongMemEval's turn- and session-level recall@k "
        "for retrieving strategies, answer in payload, mean prompt tokens and %% of the full "
        "buffer, per category; adversarial and abstention questions apart."
    )
    p.epilog = EXAMPLES + EXIT_CODES_HELP
    p.formatter_class = HelpFormatter
    add_transcript_arguments(
        p,
        file_help="the dataset: a JSON file, LoCoMo's zip or its folder",
        json_help="print (or write to FILE) the rows as JSON",
        picks=False,
    )
    p.add_argument("--dataset", choices=(*DATASETS, "auto"), default="auto",
                   help="the file's format (default: told from its shape)")  # fmt: skip
    p.add_argument("--strategy", action="append", metavar="NAME[:k=v,...]",
                   help="a strategy setting, repeatable (default: six settings from full to "
                   f"retrieval). Names: {', '.join(REGISTRY)}")  # fmt: skip
    p.add_argument("--limit", type=int, metavar="N", help="only the first N conversations")
    p.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    p.add_argument("--resume", metavar="FILE", help="LongMemEval: keep each finished question "
                   "in FILE; run again with it to go on where an interrupted run stopped")  # fmt: skip


def _settings(values: list[str] | None) -> list[LaneSpec]:
    if not values:
        return list(DEFAULT_SETTINGS)
    return list(strategies(values, ()))


def format_table(report: BenchReport) -> str:
    rows = table_rows(report)
    header: list[str] = []
    for row in rows:
        header += [k for k in row if k not in header]
    cells = [header] + [[str(row.get(h, "-")) for h in header] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = []
    for j, r in enumerate(cells):
        lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                               for i, (c, w) in enumerate(zip(r, widths, strict=True))))  # fmt: skip
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def report_data(report: BenchReport) -> dict[str, Any]:
    """`memory-lab recall --json`."""
    return report.as_dict()


def run(args: argparse.Namespace) -> int:
    check_outputs(args)
    path = Path(args.file)
    if not path.is_dir():
        source_path(args.file)  # a clear message for a missing file
    if args.limit is not None and args.limit < 1:
        raise UsageError("--limit counts from 1")
    try:
        if args.resume and not streams(path, args.dataset):
            raise UsageError("--resume is for LongMemEval files (read as they stream)")
        with ProgressBar("questions", "q", quiet=args.quiet) as bar:
            report = run_path(
                path,
                _settings(args.strategy),
                name=args.dataset,
                limit=args.limit,
                on_progress=lambda p: bar.update(p.done, p.total or 0),
                checkpoint=Checkpoint(Path(args.resume)) if args.resume else None,
            )
    except (BenchmarkFormatError, ValueError, OSError) as exc:
        raise UsageError(f"{args.file}: {exc}") from None
    except MemoryLabError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        write_json(args.json, report_data(report))
        if args.json == STDOUT:
            return EXIT_OK
    print(f"{report.dataset}: {report.conversations} conversation(s), {report.questions} questions; "
          "payload only, no model (summaries and facts by rule-based stand-ins)")  # fmt: skip
    print(format_table(report))
    no_evidence = report.rows[0].no_evidence if report.rows else 0
    if no_evidence:
        print(f"note: {no_evidence} question(s) list no evidence: counted, not scored")
    if report.unresolved:
        print(f"note: {len(report.unresolved)} evidence id(s) match no line: "
              + ", ".join(report.unresolved[:10]))  # fmt: skip
    for note in report.notes[:10]:
        print(f"note: {note}")
    if report.skipped:
        print(f"skipped {len(report.skipped)}, each with why:")
        for reason in report.skipped[:20]:
            print(f"  {reason}")
    return EXIT_OK
