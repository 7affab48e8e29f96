"""Uploads written to disk for engines that read paths: the name the user picked, reduced
to a plain file name (an upload's name is untrusted), inside one folder per content."""

from __future__ import annotations

from ui.uploads import FOLDER, as_file, file_name


def test_a_hostile_name_stays_a_plain_file_name_inside_the_uploads_folder():
    for name, expected in [("../../etc/passwd", "passwd"), ("..\\..\\win.ini", "win.ini"),
                           (".hidden", "hidden"), ("", "upload"), ("..", "upload"),
                           ("a b<c>.json", "a_b_c_.json")]:  # fmt: skip
        assert file_name(name) == expected
    path = as_file("../../escape.json", b"[]")
    assert path.name == "escape.json" and path.parent.parent.name == FOLDER


def test_the_same_bytes_give_the_same_file_and_other_bytes_another():
    a = as_file("locomo10.zip", b"one")
    assert as_file("locomo10.zip", b"one") == a and a.read_bytes() == b"one"
    b = as_file("locomo10.zip", b"two")
    assert b != a and b.read_bytes() == b"two" and a.read_bytes() == b"one"
