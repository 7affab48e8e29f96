"""The Long recall page's benchmark section: a LoCoMo, LongMemEval or Memory Lab file by
upload or by path, run as `memory-lab recall` runs it (engines/benchmarks.py) with a progress
bar, drawn as its table and the evidence-kept-versus-tokens chart per category."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pandas as pd
import streamlit as st

from engines.benchmarks import DEFAULT_SETTINGS, Progress, run_benchmark, run_path, streams
from engines.benchmarks import table_rows as bench_rows
from memory.errors import MemoryLabError
from memory.lane_spec import LaneSpec
from present.recall import category_chart
from scenarios.benchmarks import BenchmarkFormatError, Dataset, load_path
from ui.safe import md
from ui.uploads import as_file

BENCH_FORMATS = {
    "auto": "Told from its shape",
    "locomo": "LoCoMo",
    "longmemeval": "LongMemEval",
    "memorylab": "Memory Lab",
}
BENCH_HELP = """
**LoCoMo** (`locomo10.json`: samples with `conversation` sessions of `{speaker, dia_id,
text}` and `qa` with `evidence` dialogue ids; speaker A is the user), **LongMemEval** (a
list of questions, each with its own `haystack_sessions`; evidence from `has_answer` turns
and `answer_session_ids`) or a **Memory Lab** conversation file. No model: the same run and
the same numbers as `memory-lab recall --dataset ... FILE`; adversarial (LoCoMo) and
abstention (LongMemEval) questions are reported apart.
"""


FROM = {
    "upload": "An upload",
    "path": "A path on this machine (large files, LoCoMo's folder)",
}


def benchmark_source(how: str) -> Path | None:
    """The benchmark to run as a path (an upload is written to a temporary file), or None
    with the reason shown."""
    if how == "upload":
        upload = st.file_uploader(
            "Benchmark file (JSON, or LoCoMo's release zip)", type=["json", "zip"],
            key="bench-upload",
        )  # fmt: skip
        if upload is None:
            st.info("Upload a LoCoMo, LongMemEval or Memory Lab file to run the benchmark on it.")
            return None
        return as_file(upload.name, upload.getvalue())
    typed = st.text_input(
        "Path (a file, LoCoMo's zip or the folder it unpacks to)",
        key="bench-path",
        placeholder="~/data/longmemeval_s.json",
    ).strip()
    if not typed:
        st.info("Give the path of a benchmark file or folder; LongMemEval's large files are "
                "read question by question as they stream.")  # fmt: skip
        return None
    path = Path(typed).expanduser()
    if not (path.is_file() or path.is_dir()):
        st.error(md("No file or folder at {}.", typed))
        return None
    return path


def benchmark_file(settings: Mapping[str, LaneSpec]) -> None:
    """A benchmark by upload or path, settings (the defaults, then `settings`), run with
    progress: `memory-lab recall`'s table and the per-category chart."""
    with st.expander("Benchmark formats"):
        st.markdown(BENCH_HELP)
    c1, c2 = st.columns([3, 1])
    how = c1.radio("From", list(FROM), format_func=FROM.__getitem__, horizontal=True,
                   key="bench-from")  # fmt: skip
    fmt = c2.selectbox(
        "Format", list(BENCH_FORMATS), format_func=BENCH_FORMATS.__getitem__, key="bench-format"
    )
    path = benchmark_source(how)
    if path is None:
        return
    try:
        dataset = None if streams(path, fmt) else load_path(path, fmt)
        size = path.stat().st_size
    except (BenchmarkFormatError, ValueError, OSError) as exc:
        st.error(md("That file cannot be used: {}", exc))
        return
    if dataset is None:
        st.markdown(md("**{}** · LongMemEval, {} MB: read question by question as it streams.",
                       path.name, f"{size / 1e6:,.1f}"))  # fmt: skip
    else:
        st.markdown(
            md("**{}** · {}: {} conversation(s), {} questions.", path.name,
               BENCH_FORMATS[dataset.name], len(dataset.conversations), dataset.questions)
        )  # fmt: skip
    options = {s.sized_label: s for s in DEFAULT_SETTINGS}
    options.update({label: s for label, s in settings.items() if label not in options})
    picked = st.multiselect(
        "Strategy settings",
        list(options),
        default=[s.sized_label for s in DEFAULT_SETTINGS],
        key="bench-settings",
    )
    limit = int(st.number_input("Conversations to run (0: all)", min_value=0, value=0,
                                key="bench-limit"))  # fmt: skip
    ran_for = (str(path), path.stat().st_mtime_ns, size, fmt, tuple(picked), limit)
    if st.button("Run", type="primary", disabled=not picked, key="bench-run"):
        bar = st.progress(0.0, text="Starting...")

        def tell(p: Progress) -> None:
            of = f" of {p.total:,}" if p.total else f" ({p.share:.0%} of the file read)"
            bar.progress(p.share, text=f"{p.done:,}{of} conversation(s) replayed")

        chosen = [options[p] for p in picked]
        try:
            if dataset is None:
                report = run_path(path, chosen, name="longmemeval", limit=limit or None,
                                  on_progress=tell)  # fmt: skip
            else:
                if limit:
                    dataset = Dataset(dataset.name, dataset.conversations[:limit], dataset.skipped)
                report = run_benchmark(dataset, chosen, on_progress=tell)
        except (BenchmarkFormatError, ValueError, OSError) as exc:
            st.error(md("That file cannot be used: {}", exc))
            return
        except MemoryLabError as exc:
            st.error(md("A setting could not run: {}", exc))
            return
        bar.progress(1.0, text=f"Done: {report.conversations:,} conversation(s), "
                               f"{report.questions:,} questions")  # fmt: skip
        st.session_state["bench_result"] = {
            "for": ran_for,
            "rows": bench_rows(report),
            "report": report.as_dict(),
            "bench": report,
        }
    result = st.session_state.get("bench_result")
    if result is None or result["for"] != ran_for:
        return
    report_data = result["report"]
    st.subheader(
        md("{} · {} questions, payload only", BENCH_FORMATS[report_data["dataset"]],
           report_data["questions"])
    )  # fmt: skip
    st.plotly_chart(category_chart(result["bench"]), width="stretch", key="bench-chart")
    st.dataframe(
        pd.DataFrame(result["rows"]),
        hide_index=True,
        width="stretch",
        key="bench-table",
        column_config={"setting": st.column_config.TextColumn("setting", width=330)},
    )
    st.caption(
        "Evidence recall: the share of evidence turns sent verbatim (LoCoMo's retrieval recall "
        "of dia_ids); all evidence: questions with every evidence turn in the payload; recall "
        "@5: LongMemEval's turn- and session-level recall for strategies that retrieve; then "
        "per category, and the questions reported apart. No model: summaries and facts by "
        "rule-based stand-ins. The chart: each category's evidence recall against the mean "
        "tokens its questions were sent with."
    )
    no_evidence = report_data["rows"][0]["no_evidence"] if report_data["rows"] else 0
    if no_evidence:
        st.caption(f"{no_evidence} question(s) list no evidence: counted, not scored.")
    unresolved = report_data["unresolved_evidence"]
    if unresolved:
        st.caption(
            md("{} evidence id(s) match no line: {}", len(unresolved), ", ".join(unresolved[:10]))
        )
    for note in report_data["notes"][:10]:
        st.caption(md("Note: {}", note))
    skipped = report_data.get("skipped", [])
    if skipped:
        st.caption(f"Skipped {len(skipped)}, each with why:")
    for reason in skipped[:20]:
        st.caption(md("Skipped {}", reason))
    st.download_button(
        "Download the table (CSV)",
        pd.DataFrame(result["rows"]).to_csv(index=False),
        "benchmark_recall.csv",
        "text/csv",
    )
    st.download_button(
        "Download the report (JSON, as `memory-lab recall --json`)",
        json.dumps(report_data, ensure_ascii=False, indent=2),
        "benchmark_recall.json",
        "application/json",
    )
