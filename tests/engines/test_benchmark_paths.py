"""A benchmark run from a path as its authors ship it, with progress (issue 37): the CLI and
the Long recall page both go through `run_path` / `run_benchmark`, which give one report
however the benchmark is read and tell how far they are after each conversation; each row also
carries the mean tokens per category that the per-category chart draws."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from engines.benchmarks import (
    DEFAULT_SETTINGS,
    Checkpoint,
    Progress,
    run_benchmark,
    run_conversation,
    run_path,
)
from memory.tokens import TokenCounter
from scenarios.benchmarks import load_longmemeval, load_path
from scenarios.longmemeval_shape import write
from tests.scenarios.test_locomo_release import forms  # noqa: F401  (a fixture)

FIXTURES = Path(__file__).resolve().parents[1] / "scenarios" / "fixtures"
LONGMEMEVAL = FIXTURES / "longmemeval_sample.json"


def test_a_loaded_benchmark_reports_as_run_benchmark_does_and_tells_its_progress(forms):  # noqa: F811
    seen: list[Progress] = []
    report = run_path(forms["zip"], DEFAULT_SETTINGS, on_progress=seen.append)
    whole = run_benchmark(load_path(forms["zip"]), DEFAULT_SETTINGS)
    assert report.as_dict() == whole.as_dict()
    assert seen == [Progress(1, 2, 0.5), Progress(2, 2, 1.0)]


def test_a_streamed_file_tells_the_share_read_and_a_limit_is_its_total(tmp_path):
    seen: list[Progress] = []
    report = run_path(LONGMEMEVAL, DEFAULT_SETTINGS, on_progress=seen.append)
    assert (
        report.as_dict()
        == run_benchmark(load_longmemeval(LONGMEMEVAL.read_bytes()), DEFAULT_SETTINGS).as_dict()
    )
    assert [p.done for p in seen] == [1, 2, 3] and {p.total for p in seen} == {None}
    big = tmp_path / "longmemeval_s.json"
    write(big, 3, sessions=4)  # larger than ijson's read buffer: the share grows as it reads
    seen.clear()
    run_path(big, [DEFAULT_SETTINGS[1]], on_progress=seen.append)
    shares = [p.share for p in seen]
    assert shares == sorted(shares) and 0 < shares[0] < shares[-1] <= 1, shares
    seen.clear()
    limited = run_path(LONGMEMEVAL, DEFAULT_SETTINGS, limit=2, on_progress=seen.append)
    assert limited.conversations == 2
    assert seen == [Progress(1, 2, 0.5), Progress(2, 2, 1.0)]


def test_resuming_is_refused_for_a_file_that_is_loaded_whole(forms, tmp_path):  # noqa: F811
    with pytest.raises(ValueError, match="resuming is for LongMemEval"):
        run_path(forms["folder"], DEFAULT_SETTINGS, checkpoint=Checkpoint(tmp_path / "c.jsonl"))


def test_each_row_holds_the_mean_tokens_of_each_category_s_scored_questions():
    dataset = load_longmemeval(LONGMEMEVAL.read_bytes())
    counter = TokenCounter()
    report = run_benchmark(dataset, DEFAULT_SETTINGS, counter=counter)
    for setting, row in zip(DEFAULT_SETTINGS, report.rows, strict=True):
        results = [r for c in dataset.conversations
                   for r in run_conversation(c, setting, counter)]  # fmt: skip
        scored = [r for r in results if r.evidence and not r.apart]
        expected = {
            c: statistics.fmean(r.prompt_tokens for r in scored if r.category == c)
            for c in {r.category for r in scored}
        }
        assert row.tokens_by_category == pytest.approx(expected)
        assert set(row.tokens_by_category) <= set(row.by_category)
    assert json.loads(json.dumps(report.as_dict()))["rows"][0]["tokens_by_category"]
