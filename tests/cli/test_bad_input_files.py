"""Issue 10 #10, the command line and transcript files: bad files get a specific message and
exit code 2, and an unwritable output path is refused before the run starts."""

from __future__ import annotations

import json

import pytest

from cli.main import main
from engines import transcripts
from scenarios import filler

DEEP = "[" * 100_000 + "]" * 100_000


@pytest.fixture
def files(tmp_path):
    (tmp_path / "deep.json").write_text(DEEP)
    fact = {"key": "name", "plant": "I am Chiru.", "probe": "My name?", "answers": ["Chiru"]}
    (tmp_path / "one.json").write_text(json.dumps([{**fact, "plant_turn": "one"}]))
    (tmp_path / "latin1.txt").write_bytes(b"caf\xe9 au lait\nsecond line")
    (tmp_path / "blocker").write_text("a file, not a folder")
    return tmp_path


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["survival", "--payload-only", "--facts", "{d}/deep.json"], "nests too deeply"),
        (["survival", "--payload-only", "--facts", "{d}/one.json"], "plant_turn is a whole number"),
        (["survival", "--payload-only", "--facts", "{d}/latin1.txt"], "not UTF-8"),
        (["simulate", "--user-turns", "{d}/latin1.txt"], "not UTF-8"),
        (["simulate", "--user-turns", "{d}/deep.json"], "nests too deeply"),
        (["simulate", "--csv", "{d}/blocker/out.csv"], "--csv"),
        (["survival", "--payload-only", "--json", "{d}/blocker/x.json"], "--json"),
    ],
)
def test_bad_files_exit_2_with_a_specific_message(files, capsys, args, message):
    code = main([a.format(d=files) for a in args])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err


def test_an_unwritable_output_is_refused_before_the_run(files, capsys):
    assert main(["simulate", "--csv", f"{files}/blocker/out.csv"]) == 2
    out = capsys.readouterr().out
    assert "Growth factor" not in out  # nothing ran


def test_transcript_imports_reject_deep_nesting_and_oversized_filler():
    with pytest.raises(transcripts.TranscriptError, match="nests too deeply"):
        transcripts.parse(DEEP, name="x.json")
    with pytest.raises(filler.TranscriptError, match="larger than 20,000,000"):
        filler.parse_transcript("hello\n" * 3_400_000, name="big.txt")
