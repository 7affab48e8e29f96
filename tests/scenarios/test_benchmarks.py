"""LoCoMo and LongMemEval files mapped turn by turn (fixtures written from their schemas),
and the benchmarks' metrics on them: by hand-countable cases, and the CLI and the engine
giving the same numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli.main import main
from engines.benchmarks import run_benchmark
from memory.lane_spec import LaneSpec
from scenarios.benchmarks import BenchmarkFormatError, detect, load

FIXTURES = Path(__file__).parent / "fixtures"
LOCOMO = (FIXTURES / "locomo_sample.json").read_bytes()
LME = (FIXTURES / "longmemeval_sample.json").read_bytes()


def test_locomo_turns_joined_by_speaker_with_their_dialogue_ids():
    data = load("locomo", LOCOMO)
    assert detect(LOCOMO) == "locomo"
    conv = data.conversations[0]
    assert conv.id == "conv-a"
    assert conv.turns == (
        ("Hi Ben! I just adopted a beagle called Pixel.", "Congrats! How old is Pixel?"),
        (
            "Two years old.\nShe loves the beach near Kovalam.",
            "Lovely. I started pottery classes last week.\nMy first bowl came out lopsided.",
        ),
        (
            "Ha! I ran my first 10K on Sunday in 58 minutes.",
            "Amazing time. and shared a photo of a race medal",
        ),
        ("Next I want to try the Mumbai half marathon.", "That is in January, right?"),
        ("Pixel chewed my running shoes today.", "Oh no! Time for new ones."),
        (
            "I bought trail shoes for the beach runs with Pixel.",
            "Smart. My pottery teacher says my second bowl is better.",
        ),
    )
    assert conv.turn_ids[1] == ("D1:3", "D1:4", "D1:5", "D2:1")
    assert conv.turn_sessions == (1, 1, 2, 2, 3, 3)
    q = {x.id: x for x in conv.questions}
    assert q["conv-a:2"].evidence == (2,) and q["conv-a:2"].category == "multi-hop"
    assert q["conv-a:4"].evidence == (5, 6)
    assert q["conv-a:5"].evidence == (4,) and q["conv-a:5"].unresolved == ("D9:9",)
    assert q["conv-a:6"].evidence == () and q["conv-a:6"].category == "open-domain"
    assert q["conv-a:7"].evidence == (2, 6) and q["conv-a:7"].evidence_sessions == (2, 3)
    assert q["conv-a:8"].apart and q["conv-a:8"].category == "adversarial"
    assert q["conv-a:8"].answer == "Pixel"  # adversarial_answer when there is no answer
    assert "2 lines joined" in conv.notes[0]


def test_longmemeval_each_question_its_own_haystack():
    data = load("longmemeval", LME)
    assert detect(LME) == "longmemeval"
    first, second, third = data.conversations
    assert first.turns[2] == ("I just bought a red hatchback.", "Congrats on the car!")
    assert first.questions[0].evidence == (3,) and first.questions[0].evidence_sessions == (2,)
    assert first.turn_sessions == (1, 1, 2, 2, 3)
    assert second.questions[0].evidence == (1, 3) and second.questions[0].evidence_sessions == (
        1,
        3,
    )
    assert third.questions[0].apart and third.questions[0].evidence == ()


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "locomo",
            '[{"sample_id": "x", "conversation": {"speaker_a": "A", "speaker_b": "B"}}]',
            "no session_N",
        ),
        (
            "locomo",
            '[{"sample_id": "x", "conversation": {"speaker_a": "A", "speaker_b": "B", '
            '"session_1": [{"speaker": "C", "text": "hi"}]}}]',
            "session_1[0]: speaker 'C'",
        ),  # fmt: skip
        ("longmemeval", '[{"question_id": "q9", "haystack_sessions": []}]', "question 'q9'"),
        ("longmemeval", "{}", "non-empty list"),
    ],
)
def test_bad_benchmark_files_name_the_place(name, text, message):
    with pytest.raises(BenchmarkFormatError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load(name, text)


def test_locomo_metrics_counted_by_hand():
    report = run_benchmark(load("locomo", LOCOMO), [LaneSpec("window", {"k": 2})])
    (row,) = report.rows
    # conv-a has 6 turns, window k=2 keeps turns 5-6; conv-b has 2 turns, both kept.
    # scored questions (evidence, not adversarial): conv-a 1,2,3,4,5,7 and conv-b 1,2
    # evidence turns: 1 | 2 | 3 | 5,6 | 4 | 2,6 | 1 | 2  -> 10, found: 5,6 + 6 + 1 + 2 = 5
    assert row.questions == 8 and row.evidence_recall == pytest.approx(5 / 10)
    assert row.all_evidence == pytest.approx(3 / 8)  # conv-a:4 and both of conv-b
    assert row.no_evidence == 1 and row.apart == {"adversarial": 0.0}
    assert row.by_category["multi-hop"] == pytest.approx(2 / 3)
    assert row.recall_at == {}  # the window retrieves nothing
    assert report.unresolved == ("conv-a:5: D9:9",)


def test_longmemeval_recall_at_k_for_a_retrieving_strategy():
    setting = LaneSpec("retrieval", {"k": 0, "top_k": 5, "recall_budget": 0, "neighbours": 0.0})
    (row,) = run_benchmark(load("longmemeval", LME), [setting]).rows
    assert row.questions == 2 and row.evidence_recall == 1.0
    assert row.recall_at["turn@5"] == 1.0 and row.recall_at["session@5"] == 1.0
    (window,) = run_benchmark(load("longmemeval", LME), [LaneSpec("window", {"k": 1})]).rows
    assert window.evidence_recall == 0.0 and window.recall_at == {}


def test_the_cli_prints_the_engine_numbers(capsys):
    path = str(FIXTURES / "locomo_sample.json")
    assert main(["recall", "--dataset", "locomo", path, "--strategy", "window:k=2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (row,) = data["rows"]
    assert data["dataset"] == "locomo" and data["questions"] == 10
    assert row["evidence_recall"] == pytest.approx(0.5) and row["all_evidence"] == pytest.approx(
        3 / 8
    )
    assert main(["recall", path, "--strategy", "window:k=2"]) == 0
    out = capsys.readouterr().out
    assert "window (k=2)" in out and "50%" in out and "D9:9" in out


def test_one_joined_line_is_said_in_the_singular():
    from pathlib import Path

    from scenarios.benchmarks import load_locomo

    fixture = Path(__file__).resolve().parent / "fixtures" / "locomo_sample.json"
    notes = [n for c in load_locomo(fixture.read_bytes()).conversations for n in c.notes]
    assert "1 line joined to the line before (same speaker)" in notes
