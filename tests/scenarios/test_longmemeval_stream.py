"""LongMemEval read as it streams (issue 37): the release's files are hundreds of MB, so the
CLI reads one question at a time (ijson) and replays each haystack once per setting. The
streamed run gives the same rows as the whole-file run; a truncated file, a question with an
empty haystack and one that is not an object are skipped with their reason while the rest
go on. The fixture is written from the documented schema (tests/scenarios/fixtures)."""

from __future__ import annotations

import json
from pathlib import Path

from cli import main as cli_main
from engines.benchmarks import DEFAULT_SETTINGS, run_benchmark, run_stream
from scenarios.benchmarks import load_longmemeval, sniff, stream_longmemeval

FIXTURES = Path(__file__).parent / "fixtures"
SAMPLE = FIXTURES / "longmemeval_sample.json"


def test_the_streamed_run_gives_the_whole_file_run_s_rows():
    whole = run_benchmark(load_longmemeval(SAMPLE.read_bytes()), DEFAULT_SETTINGS)
    seen: list[int] = []
    streamed = run_stream(
        "longmemeval", stream_longmemeval(SAMPLE), DEFAULT_SETTINGS, on_conversation=seen.append
    )
    assert streamed.as_dict() == whole.as_dict()
    assert seen == [1, 2, 3] and streamed.skipped == ()


def test_each_dataset_is_sniffed_from_its_first_record():
    assert sniff(SAMPLE) == "longmemeval"
    assert sniff(FIXTURES / "locomo_sample.json") == "locomo"


def test_bad_questions_and_a_truncated_file_are_skipped_and_the_rest_run(tmp_path, capsys):
    questions = json.loads(SAMPLE.read_text(encoding="utf-8"))
    empty = {**questions[1], "question_id": "q-empty", "haystack_sessions": []}
    text = json.dumps([questions[0], empty, "not a question", questions[2]])
    cut = text[: text.index(questions[2]["question_id"]) + 5]  # ends inside the fourth
    path = tmp_path / "longmemeval_s.json"
    path.write_text(cut, encoding="utf-8")
    items = list(stream_longmemeval(path))
    assert [getattr(i, "id", None) for i in items[:1]] == [questions[0]["question_id"]]
    reasons = [i for i in items if isinstance(i, str)]
    assert len(reasons) == 3 and len(items) == 4
    assert "'q-empty'" in reasons[0] and "haystack_sessions" in reasons[0]
    assert "question 3" in reasons[1]
    assert reasons[2].startswith("longmemeval_s.json: the file ends or breaks after question 3")
    code = cli_main.main(["recall", str(path), "--quiet"])
    out = capsys.readouterr().out
    assert code == 0
    assert "longmemeval: 1 conversation(s)" in out and "skipped 3, each with why:" in out


def test_an_interrupted_run_resumes_where_it_stopped(tmp_path, monkeypatch):
    import pytest

    from engines import benchmarks

    whole = run_stream("longmemeval", stream_longmemeval(SAMPLE), DEFAULT_SETTINGS)
    checkpoint = benchmarks.Checkpoint(tmp_path / "run.jsonl")

    def stopped_after_two():
        for n, conv in enumerate(stream_longmemeval(SAMPLE), start=1):
            if n == 3:
                raise KeyboardInterrupt  # Ctrl-C during the third question
            yield conv

    with pytest.raises(KeyboardInterrupt):
        run_stream("longmemeval", stopped_after_two(), DEFAULT_SETTINGS, checkpoint=checkpoint)
    with checkpoint.path.open("a", encoding="utf-8") as handle:
        handle.write('{"id": "half-writ')  # the process died mid-line
    replayed: list[str] = []
    real = benchmarks.run_conversation
    monkeypatch.setattr(
        benchmarks,
        "run_conversation",
        lambda conv, setting, counter: replayed.append(conv.id) or real(conv, setting, counter),
    )
    again = run_stream(
        "longmemeval", stream_longmemeval(SAMPLE), DEFAULT_SETTINGS, checkpoint=checkpoint
    )
    third = json.loads(SAMPLE.read_text(encoding="utf-8"))[2]["question_id"]
    assert set(replayed) == {third}  # only the question the interruption left
    assert again.as_dict() == whole.as_dict()
    replayed.clear()
    third_run = run_stream(
        "longmemeval", stream_longmemeval(SAMPLE), DEFAULT_SETTINGS, checkpoint=checkpoint
    )
    assert replayed == [] and third_run.as_dict() == whole.as_dict()
    with pytest.raises(ValueError, match="made with other settings"):
        benchmarks.Checkpoint(checkpoint.path).load(["full"])


def test_the_cli_resumes_from_its_checkpoint(tmp_path, capsys):
    resume = tmp_path / "run.jsonl"
    assert cli_main.main(["recall", str(SAMPLE), "--quiet", "--resume", str(resume)]) == 0
    first = capsys.readouterr().out
    assert len(resume.read_text(encoding="utf-8").splitlines()) == 1 + 3  # settings + questions
    assert cli_main.main(["recall", str(SAMPLE), "--quiet", "--resume", str(resume)]) == 0
    assert capsys.readouterr().out == first
    assert cli_main.main(["recall", str(FIXTURES / "locomo_sample.json"), "--resume", "x"]) == 2
    assert "--resume is for LongMemEval files" in capsys.readouterr().err


def test_the_generated_file_has_the_release_s_fields_and_sizes(tmp_path):
    from memory.tokens import TokenCounter
    from scenarios.longmemeval_shape import TYPES, write

    path = tmp_path / "longmemeval_s.json"
    size = write(path, 16)
    raw = json.loads(path.read_text(encoding="utf-8"))
    assert set(raw[0]) == {"question_id", "question_type", "question", "answer",
                           "question_date", "haystack_dates", "haystack_session_ids",
                           "haystack_sessions", "answer_session_ids"}  # fmt: skip
    assert {q["question_type"] for q in raw} == set(TYPES)
    assert sum(q["question_id"].endswith("_abs") for q in raw) == 1
    assert all(len(q["haystack_sessions"]) == 50 for q in raw)
    tokens = TokenCounter().count(
        " ".join(m["content"] for s in raw[0]["haystack_sessions"] for m in s)
    )
    assert 100_000 <= tokens <= 130_000 and 0.5e6 <= size / 16 <= 0.65e6  # as longmemeval_s
    conversations = [c for c in stream_longmemeval(path) if not isinstance(c, str)]
    assert len(conversations) == 16
    assert all(q.evidence for c in conversations for q in c.questions)


def test_a_file_that_is_not_json_is_named_without_quoting_its_text(tmp_path):
    """The Long recall page reads paths on the server: its message never shows their text."""
    import pytest

    from scenarios.benchmarks import BenchmarkFormatError

    secret = tmp_path / "notes.txt"
    secret.write_text("root:x:0:0:PRIVATE-LINE:/root:/bin/bash\n", encoding="utf-8")
    with pytest.raises(BenchmarkFormatError) as caught:
        sniff(secret)
    assert "not a JSON file" in str(caught.value) and "PRIVATE" not in str(caught.value)
    broken = tmp_path / "longmemeval_s.json"
    broken.write_text('[{"question_id": "q1", "PRIVATE-TAIL": @@', encoding="utf-8")
    reasons = [i for i in stream_longmemeval(broken) if isinstance(i, str)]
    assert reasons and all("PRIVATE" not in r for r in reasons)
