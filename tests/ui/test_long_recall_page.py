"""The long-conversation recall page through AppTest: generated runs, uploads, errors."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from scenarios.longmem_world import generate
from tests.ui.conftest import shown

PAGE = "../../pages/4_Long_recall.py"  # AppTest resolves paths against this file's folder


def page() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=180)
    at.run()
    assert not at.exception, at.exception
    return at


def test_a_small_generated_conversation_runs_and_draws_the_frontier():
    at = page()
    next(n for n in at.number_input if n.label == "Sessions").set_value(6).run()
    picks = ["full", "token_window (budget=5.0% of full)", "retrieval"]
    at.multiselect[0].set_value(picks).run()
    next(b for b in at.button if b.label == "Run").click().run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert list(table["strategy (setting)"]) == picks
    assert table["evidence kept %"].iloc[0] == 100.0
    assert table["evidence kept %"].iloc[2] > table["evidence kept %"].iloc[1]
    spec = at.get("plotly_chart")[0].proto.spec
    assert "Evidence kept vs tokens sent" in spec and "retrieval" in spec


def test_an_uploaded_conversation_runs_and_a_bad_one_is_named():
    conv = generate(2, sessions=6, turns_per_session=8)
    at = page()
    at.radio[0].set_value("file").run()
    assert any("Upload a conversation file" in i.value for i in at.info)
    at.file_uploader[0].upload("mine.json", conv.to_json().encode(), "application/json").run()
    assert not at.exception, at.exception
    assert any(f"{len(conv.questions)} questions" in m.value for m in at.markdown)
    at.multiselect[0].set_value(["full", "window (k=10)"]).run()
    next(b for b in at.button if b.label == "Run").click().run()
    assert list(at.dataframe[0].value["strategy (setting)"]) == ["full", "window (k=10)"]
    bad = json.loads(conv.to_json())
    bad["questions"][0]["evidence"] = [9999]
    at.file_uploader[0].upload("bad.json", json.dumps(bad).encode(), "application/json").run()
    assert not at.exception
    assert any("evidence[0] is turn 9999" in shown(e.value) for e in at.error)


def test_a_transcript_with_a_questions_file_runs():
    at = page()
    at.radio[0].set_value("transcript").run()
    text = "User: My locker code is 4471.\nAssistant: Noted.\n"
    text += "".join(f"User: Weather talk {i}.\nAssistant: Sunny.\n" for i in range(6))
    questions = {"questions": [{"question": "What is my locker code?", "evidence": [1]}]}
    at.file_uploader[0].upload("chat.txt", text.encode(), "text/plain")
    at.file_uploader[1].upload("q.json", json.dumps(questions).encode(), "application/json")
    at.run()
    assert any("**7 turns**" in m.value and "**1 questions**" in m.value for m in at.markdown)
    at.multiselect[0].set_value(["window (k=10)", "retrieval"]).run()
    next(b for b in at.button if b.label == "Run").click().run()
    assert list(at.dataframe[0].value["evidence kept %"]) == [100.0, 100.0]


def test_a_model_answers_each_question_and_the_table_grades_it():
    from tests.providers.fake_server import FakeLLMServer

    server = FakeLLMServer().start()
    try:
        at = page()
        next(n for n in at.number_input if n.label == "Sessions").set_value(6).run()
        at.multiselect[0].set_value(["full", "window (k=10)"]).run()
        at.toggle(key="recall-answer").set_value(True).run()
        at.selectbox(key="recall-preset").set_value("custom").run()
        at.text_input(key="recall-model-custom").set_value("ok").run()
        at.text_input(key="recall-url-custom").set_value(server.url + "/v1").run()
        next(b for b in at.button if b.label == "Run").click().run()
        assert not at.exception, at.exception
        table = at.dataframe[0].value
        questions = len(generate(0, sessions=6).questions)
        sent = [r for r in server.requests if r.path.endswith("/chat/completions")]
        assert len(sent) == 2 * questions  # every question of every setting went to the model
        # the fake always says "Hello from the fake server.": no answer is in any reply
        assert list(table["answered %"]) == [0.0, 0.0]
        assert table["answer in payload %"].iloc[0] > 0
        assert any("Answered by ok" in c.value for c in at.caption)
    finally:
        server.stop()


def test_a_benchmark_file_upload_gives_the_numbers_memory_lab_recall_prints():
    """The page and the CLI on the same LoCoMo-format file, same default settings: the same
    report, row for row (and the table is engines/benchmarks.table_rows of it)."""
    from pathlib import Path

    from tests.cli.cli_support import cli

    fixture = Path(__file__).resolve().parents[1] / "scenarios" / "fixtures" / "locomo_sample.json"
    at = page()
    next(r for r in at.radio if r.label == "Conversation").set_value("benchmark").run()
    assert not at.exception, at.exception
    at.file_uploader(key="bench-upload").set_value(
        ("locomo_sample.json", fixture.read_bytes(), "application/json")
    ).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("LoCoMo: 2 conversation(s), 10 questions" in m.value for m in at.markdown)
    next(b for b in at.button if b.label == "Run").click().run()
    assert not at.exception, at.exception
    page_report = at.session_state["bench_result"]["report"]
    done = cli("recall", "--dataset", "locomo", str(fixture), "--json")
    assert done.returncode == 0, done.stderr
    assert page_report == json.loads(done.stdout)
    table = at.dataframe[-1].value
    assert list(table["setting"]) == [r["label"] for r in page_report["rows"]]
    assert "adversarial (apart)" in table.columns


def test_a_broken_benchmark_file_is_explained():
    at = page()
    next(r for r in at.radio if r.label == "Conversation").set_value("benchmark").run()
    at.file_uploader(key="bench-upload").set_value(
        ("locomo.json", b'[{"sample_id": "x", "conversation": 3}]', "application/json")
    ).run()
    assert not at.exception, at.exception
    assert any("That file cannot be used" in shown(e.value) for e in at.error)


def test_a_benchmark_by_path_runs_with_progress_and_draws_each_category(tmp_path):
    """LoCoMo's folder by path: the CLI's table, a finished progress bar, and one chart
    panel per category; a LongMemEval file by path is read as it streams, a limit kept."""
    from pathlib import Path

    from tests.cli.cli_support import cli
    from tests.scenarios.test_locomo_release import FILES

    folder = tmp_path / "locomo10"
    folder.mkdir()
    for name, conv in FILES.items():
        (folder / name).write_text(json.dumps(conv), encoding="utf-8")
    at = page()
    next(r for r in at.radio if r.label == "Conversation").set_value("benchmark").run()
    at.radio(key="bench-from").set_value("path").run()
    at.text_input(key="bench-path").set_value(str(tmp_path / "nothing-here")).run()
    assert any("No file or folder at" in shown(e.value) for e in at.error)
    at.text_input(key="bench-path").set_value(str(folder)).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("LoCoMo: 2 conversation(s)" in m.value for m in at.markdown)
    at.button(key="bench-run").click().run()
    assert not at.exception, at.exception
    bar = at.get("progress")[0].proto
    assert bar.value == 100 and "Done: 2 conversation(s)" in bar.text
    report = at.session_state["bench_result"]["report"]
    done = cli("recall", str(folder), "--json")
    assert done.returncode == 0, done.stderr
    assert report == json.loads(done.stdout)
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    panels = {a["text"] for a in spec["layout"]["annotations"]}
    assert panels == set(report["rows"][0]["by_category"]) and len(panels) > 1

    sample = Path(__file__).resolve().parents[1] / "scenarios" / "fixtures"
    at.text_input(key="bench-path").set_value(str(sample / "longmemeval_sample.json")).run()
    assert any("read question by question as it streams" in m.value for m in at.markdown)
    at.number_input(key="bench-limit").set_value(2).run()
    at.button(key="bench-run").click().run()
    assert not at.exception, at.exception
    assert at.session_state["bench_result"]["report"]["conversations"] == 2
    assert "Done: 2 conversation(s), 2 questions" in at.get("progress")[0].proto.text
