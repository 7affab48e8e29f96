"""Issue 10's findings on the store and the exports, each one failing on the code before
the fix: lost rows, rewritten text, unstorable characters, key sources from data, file
permissions, spreadsheet formulas, and bad input that crashed instead of explaining."""

from __future__ import annotations

import csv
import io
import json
import os
import sqlite3
import stat
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engines.sessions import RunOptions, continue_stored
from memory.errors import InvalidMessage
from present import export
from providers.fake import FakeTransport
from storage.store import SavedSession, SessionFormatError, Store, StoreError
from tests.storage.store_support import make_session, openai_settings

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def db(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'store.sqlite3'}"


def _export(db: str, **changes) -> dict:
    session = make_session(lanes=("full", "window"))
    Store(db).track(session)
    session.run_turn("hello")
    data = json.loads(export.to_json(Store(db).load(session.id)))
    data.update(changes)
    return data


# -- 1: a lost user-turn row --------------------------------------------------------------


def test_a_session_missing_a_user_turn_row_opens_continues_and_exports(db, tmp_path):
    session = make_session()
    Store(db).track(session)
    for text in ("one", "two", "three", "four"):
        session.run_turn(text)
    conn = sqlite3.connect(tmp_path / "store.sqlite3")
    conn.execute("delete from ml_turns where turn = 2")  # the write that failed
    conn.commit()
    conn.close()

    store = Store(db)
    saved = store.load(session.id)  # was KeyError: 4
    assert saved.user_turns == ("one", "two", "three", "four")  # repaired from the lane records
    assert saved.records == session.records()
    again = continue_stored(
        store, session.id, RunOptions(provider=openai_settings(), transport=FakeTransport())
    )
    assert again.user_turns == ["one", "two", "three", "four"]
    assert "two" in export.to_markdown(saved)


# -- 2: ordinary text is never rewritten ------------------------------------------------------

ORDINARY = (
    "Our risk-management-framework-for-2025 calls subprocess.run; task-force-alpha-beta-gamma "
    "and the ask-for-forgiveness-not-permission rule. Bearer bonds are old."
)


def test_ordinary_text_is_saved_byte_for_byte(db, monkeypatch):
    monkeypatch.setenv("PIP_KEYRING_PROVIDER", "subprocess")
    monkeypatch.setenv("MY_TOKEN_STYLE", "framework-for-2025")
    session = make_session(lanes=("full", "window"))
    Store(db).track(session)
    session.run_turn(ORDINARY)
    session.run_turn("and again: " + ORDINARY)

    saved = Store(db).load(session.id)
    assert saved.user_turns == tuple(session.user_turns)
    assert saved.records == session.records()  # replies and exact request bodies included
    assert ORDINARY in export.to_json(saved)
    continued = continue_stored(
        Store(db), session.id, RunOptions(provider=openai_settings(), transport=FakeTransport())
    )
    request = continued.lanes["full"].strategy.prepare("next")
    assert ORDINARY in [m.content for m in request.messages]


# -- 3: characters no database can hold -------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "what"), [("a\x00b", "NUL"), ("emoji \ud83d broken", "surrogate")]
)
def test_unstorable_characters_are_refused_at_input_with_a_reason(db, text, what):
    session = make_session(lanes=("full",))
    tracker = Store(db).track(session)
    with pytest.raises(InvalidMessage, match=what):
        session.run_turn(text)
    assert session.turn == 0 and tracker.error is None


def test_a_reply_with_unstorable_characters_is_still_saved(db):
    transport = FakeTransport(reply_fn=lambda r: "odd \x00 reply \udc80 here")
    session = make_session(transport, lanes=("full",))
    tracker = Store(db).track(session)
    session.run_turn("hi")
    assert tracker.error is None
    [record] = Store(db).load(session.id).records["full"]
    assert record.reply == "odd \x00 reply \udc80 here"  # exactly what came back


# -- 4: a file never decides where a request (or a key) goes -----------------------------


def test_an_imported_export_never_restores_an_endpoint_or_key_variable(db, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-proj-realKEY00000000000000000000000")
    store = Store(db)
    data = _export(db)
    data["settings"]["provider"].update(
        base_url="https://evil.example/v1", key_env="OPENAI_API_KEY"
    )
    data["info"]["id"] = data["id"] = "evil1"
    provider = continue_stored(store, store.import_json(json.dumps(data))).provider
    assert provider.base_url is None and provider.key_env is None  # OpenAI's own endpoint

    data["settings"]["provider"].update(kind="openai_compatible")
    new_id = store.import_json(json.dumps(data))
    with pytest.raises(ValueError, match="custom endpoint"):
        continue_stored(store, new_id)

    groq = "https://api.groq.com/openai/v1"
    data["settings"]["provider"].update(base_url=groq, key_env="OPENAI_API_KEY")
    provider = continue_stored(store, store.import_json(json.dumps(data))).provider
    assert (provider.base_url, provider.key_env) == (groq, "GROQ_API_KEY")  # from the catalog


# -- 9: files and spreadsheets ----------------------------------------------------------------


def test_secrets_toml_is_git_ignored():
    found = subprocess.run(
        ["git", "check-ignore", "-q", ".streamlit/secrets.toml"], cwd=ROOT, check=False
    )
    assert found.returncode == 0


def test_the_database_file_is_readable_by_its_owner_only(tmp_path):
    path = tmp_path / "new" / "store.sqlite3"
    old = os.umask(0o022)
    try:
        Store(f"sqlite:///{path}").close()
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_csv_cells_that_look_like_formulas_are_neutralised(db):
    saved = Store(db).load(_export_id(db)).with_info(id='=HYPERLINK("http://x","y")')
    rows = list(csv.reader(io.StringIO(export.to_csv(saved))))
    cells = [cell for row in rows[1:] for cell in row]
    assert not [c for c in cells if c[:1] in ("=", "+", "@")]
    assert rows[1][0] == "'" + saved.id


def test_the_markdown_export_escapes_html_links_and_scripts(db):
    hostile = "<img src=x onerror=alert(1)></script> [a](javascript:alert(1)) ![](https://x/?q=1)"
    saved = Store(db).load(_export_id(db)).with_info(name=hostile)
    saved = SavedSession(**{**saved.__dict__, "user_turns": (hostile,)})
    text = export.to_markdown(saved)
    assert "<img" not in text and "</script>" not in text and "javascript:" not in text
    assert "](" not in text.replace("\\](", "")  # no link or image syntax left


def _export_id(db: str) -> str:
    session = make_session(lanes=("full",))
    Store(db).track(session)
    session.run_turn("hello")
    return session.id


# -- 10: bad input explains itself ---------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"info": "a string"}, "'info' must be an object"),
        ({"settings": ["a", "list"]}, "'settings' must be an object"),
        ({"info": {"created": "yesterday"}}, "ISO date"),
        ({"memory_lab_session": 99}, "newer"),
        ({"memory_lab_session": "1"}, "not a version"),
        ({"lanes": {"full": "nope"}}, "must be an object"),
        ({"lanes": {"full": {"turns": [{"turn": "one"}]}}}, r"lanes\.full\."),
    ],
)
def test_malformed_exports_say_what_is_wrong_and_change_nothing(db, change, message):
    data = _export(db, **change)
    store = Store(db)
    before = store.list()
    with pytest.raises(SessionFormatError, match=message):
        store.import_json(json.dumps(data))
    assert store.list() == before


def test_deeply_nested_json_is_a_format_error_not_a_recursion_error(db):
    store = Store(db)
    data = _export(db)
    deep = "[" * 100_000 + "]" * 100_000
    text = json.dumps(data).replace('"survival": null', f'"survival": {deep}')
    with pytest.raises(SessionFormatError, match="nests"):
        store.import_json(text)
    with pytest.raises(SessionFormatError, match="nests"):
        store.import_json("[" * 100_000)
    with pytest.raises(SessionFormatError, match="UTF-8"):
        store.import_json(b"\xff\xfe{not utf8")


def test_an_overlong_id_is_imported_under_a_new_one(db):
    data = _export(db)
    data["id"] = data["info"]["id"] = "x" * 65
    store = Store(db)
    new_id = store.import_json(json.dumps(data))
    assert len(new_id) <= 64 and store.load(new_id).user_turns == ("hello",)


def test_an_unwritable_sqlite_path_is_a_store_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(StoreError, match="cannot create the session store"):
        Store(f"sqlite:///{blocker / 'sub' / 'store.sqlite3'}")


def damage(path: Path) -> None:
    """A store whose session rows fill pages at the file's end, then the second half of the
    file overwritten: it opens, but the list cannot be read."""
    store = Store(f"sqlite:///{path}")
    for n in range(40):
        session = make_session(lanes=("full",))
        session.name = f"session {n} " + "x" * 150
        store.save(session)
    store.close()
    data = bytearray(path.read_bytes())
    half = len(data) // 2
    data[half:] = b"\xa5" * (len(data) - half)
    path.write_bytes(bytes(data))


def test_a_partly_damaged_database_file_is_a_store_error_on_list(tmp_path):
    path = tmp_path / "store.sqlite3"
    damage(path)
    with pytest.raises(StoreError, match="cannot be read|cannot open"):
        Store(f"sqlite:///{path}").list()


# -- every text round-trips through a database column exactly --------------------------------


@given(st.recursive(st.text() | st.integers() | st.none(), lambda c: st.lists(c, max_size=4)))
def test_stored_json_reads_back_exactly_whatever_the_text(value):
    from storage.records import dumps

    text = dumps({"v": value})
    text.encode("utf-8")  # no lone surrogate left: every UTF-8 column accepts it
    assert "\x00" not in text  # nor NUL (PostgreSQL refuses it)
    assert json.loads(text) == {"v": value}


_json = st.recursive(
    st.text(alphabet='[]{}"\\ab:,') | st.integers() | st.none(),
    lambda c: (
        st.lists(c, max_size=3) | st.dictionaries(st.text(alphabet='[]{}"\\a'), c, max_size=3)
    ),
)


def _depth(value) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


@given(_json)
def test_the_nesting_count_is_the_real_depth_brackets_in_strings_ignored(value):
    from storage.codec import nesting

    assert nesting(json.dumps(value)) == _depth(value)
