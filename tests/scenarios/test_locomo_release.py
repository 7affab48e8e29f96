"""LoCoMo as its authors ship it (issue 37): the release's zip of one JSON file per
conversation, the folder it unpacks to, one such file, and the older combined list, each
found without `--dataset` and giving the same table for the same conversations.

The fixtures are written from the release's documented layout: a per-conversation file holds
`speaker_a`, `speaker_b`, `session_N` lists of turns (`speaker`, `dia_id`, `text`, and for a
shared image `img_url`, `blip_caption`, `query`), `session_N_date_time`, `events_session_N`,
`session_N_observation`, `session_N_summary`, and `qa` at the top level, with no `sample_id`
and no `conversation` wrapper; the combined list wraps the same in `{sample_id,
conversation, qa}`.
"""

from __future__ import annotations

import copy
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from cli import main as cli_main
from scenarios.benchmarks import BenchmarkFormatError, detect, load_locomo, load_path

IMAGE_CAPTION = "a photo of a golden retriever on a beach"


def conversation(a: str, b: str, pet: str) -> dict[str, Any]:
    """One conversation's file, as the release's zip holds it."""
    return {
        "speaker_a": a,
        "speaker_b": b,
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": a, "dia_id": "D1:1", "text": f"Hi {b}! I adopted a dog named {pet}."},
            {"speaker": b, "dia_id": "D1:2", "text": "Congratulations! What breed?"},
            {
                "speaker": a,
                "dia_id": "D1:3",
                "text": "Look at him!",
                "img_url": ["https://example.invalid/dog.jpg"],
                "blip_caption": IMAGE_CAPTION,
                "query": "golden retriever beach",
            },  # fmt: skip
            {"speaker": b, "dia_id": "D1:4", "text": "So cute."},
        ],
        "session_2_date_time": "10:37 am on 27 June, 2023",
        "session_2": [
            {"speaker": a, "dia_id": "D2:1", "text": "I started painting landscapes."},
            {"speaker": b, "dia_id": "D2:2", "text": "What do you paint?"},
            {"speaker": a, "dia_id": "D2:3", "text": "Mostly lakes at sunrise."},
            {"speaker": b, "dia_id": "D2:4", "text": "Lovely."},
        ],
        "events_session_1": {a: [f"{a} adopts {pet}"], b: []},
        "session_1_observation": {a: [[f"{a} has a dog named {pet}.", "D1:1"]]},
        "session_1_summary": f"{a} told {b} about adopting {pet}.",
        "session_2_summary": f"{a} paints lakes.",
        "qa": [
            {
                "question": f"What is {a}'s dog called?",
                "answer": pet,
                "evidence": ["D1:1"],
                "category": 4,
            },  # fmt: skip
            {
                "question": "What does the dog look like?",
                "answer": "a golden retriever",
                "evidence": ["D1:3"],
                "category": 1,
            },  # fmt: skip
            {
                "question": f"What does {a} paint?",
                "answer": "lakes at sunrise",
                "evidence": ["D2:3", "D:2"],
                "category": 2,
            },  # a malformed id, as the release has  # fmt: skip
            {
                "question": f"What is {a}'s cat called?",
                "adversarial_answer": "Tom",
                "evidence": ["D1:1"],
                "category": 5,
            },  # fmt: skip
        ],
    }


FILES = {"26.json": conversation("Caroline", "Melanie", "Rex"),
         "30.json": conversation("Jon", "Gina", "Bolt")}  # fmt: skip


def combined() -> list[dict[str, Any]]:
    """The older combined list form (`locomo10.json`)."""
    out = []
    for name, conv in FILES.items():
        inner = {k: v for k, v in conv.items() if k != "qa"}
        out.append({"sample_id": f"conv-{name[:-5]}", "conversation": inner, "qa": conv["qa"]})
    return out


@pytest.fixture
def forms(tmp_path: Path) -> dict[str, Path]:
    folder = tmp_path / "locomo10"
    folder.mkdir()
    for name, conv in FILES.items():
        (folder / name).write_text(json.dumps(conv), encoding="utf-8")
    archive = tmp_path / "locomo10.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for name, conv in FILES.items():
            z.writestr(f"locomo10/{name}", json.dumps(conv))
    listed = tmp_path / "locomo10.json"
    listed.write_text(json.dumps(combined()), encoding="utf-8")
    return {"zip": archive, "folder": folder, "file": folder / "26.json", "list": listed}


def table(path: Path, capsys, *extra: str) -> list[str]:
    code = cli_main.main(["recall", str(path), *extra])
    out, err = capsys.readouterr()
    assert code == 0, err
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("----"))
    return lines[start - 1 : start + 7]  # the header, its rule and the settings' rows


def test_every_released_form_is_found_and_gives_the_same_table(forms, capsys):
    both = {form: table(forms[form], capsys) for form in ("zip", "folder", "list")}
    assert both["zip"] == both["folder"] == both["list"]
    assert table(forms["file"], capsys) == table(forms["list"], capsys, "--limit", "1")


def test_each_form_is_detected_from_its_shape(forms):
    assert detect(forms["zip"].read_bytes()) == "locomo"
    assert detect(forms["file"].read_bytes()) == "locomo"
    assert detect(forms["list"].read_bytes()) == "locomo"
    ids = [c.id for c in load_path(forms["folder"]).conversations]
    assert ids == ["26", "30"]  # a per-conversation file is named by its file


def test_a_shared_image_counts_as_its_caption_and_a_malformed_id_is_unresolved(forms):
    conv = load_path(forms["file"]).conversations[0]
    assert any(f"Look at him! and shared {IMAGE_CAPTION}" in user for user, _ in conv.turns)
    painted = next(q for q in conv.questions if "paint" in q.question)
    assert painted.evidence and painted.unresolved == ("D:2",)
    assert next(q for q in conv.questions if "cat" in q.question).apart


def test_a_zip_with_other_files_and_a_file_missing_qa_loads_the_rest(tmp_path, capsys):
    broken = copy.deepcopy(FILES["30.json"])
    del broken["qa"]
    archive = tmp_path / "mixed.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("locomo10/26.json", json.dumps(FILES["26.json"]))
        z.writestr("locomo10/30.json", json.dumps(broken))
        z.writestr("locomo10/README.md", "# LoCoMo\n")
        z.writestr("__MACOSX/locomo10/._26.json", b"\x00\x05\x16\x07")
        z.writestr("locomo10/41.json", "{not json")
    dataset = load_locomo(archive.read_bytes())
    assert [c.id for c in dataset.conversations] == ["26"]
    reasons = "\n".join(dataset.skipped)
    assert len(dataset.skipped) == 4
    assert "locomo10/30.json" in reasons and "'qa' is missing" in reasons
    assert "README.md: not a .json file" in reasons and "locomo10/41.json" in reasons
    code = cli_main.main(["recall", str(archive)])
    out = capsys.readouterr().out
    assert code == 0 and "skipped 4, each with why:" in out and "'qa' is missing" in out


def test_nothing_usable_is_a_clear_error_naming_the_files(tmp_path, capsys):
    archive = tmp_path / "empty.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("notes.txt", "nothing here")
    with pytest.raises(BenchmarkFormatError, match="notes.txt: not a .json file"):
        load_locomo(archive.read_bytes())
    assert cli_main.main(["recall", str(archive)]) == 2
    assert "no LoCoMo conversation could be read" in capsys.readouterr().err
