"""Files written by the app before the storage split (commit 45d5b0d, made by
fixtures/make_old_fixtures.py.txt) still open: the database is migrated in place, the
export (format 1) is read."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from engines.sessions import RunOptions, continue_stored
from providers.fake import FakeTransport
from storage.store import (
    FORMAT,
    FORMAT_VERSION,
    MIGRATIONS,
    SCHEMA_VERSION,
    Store,
    StoreError,
    decode_export,
)
from tests.storage.store_support import openai_settings

FIXTURES = Path(__file__).parent / "fixtures"
OLD_ID = "old0session1"


@pytest.fixture
def old_db(tmp_path) -> Path:
    path = tmp_path / "old.sqlite3"
    shutil.copy(FIXTURES / "old_store_v1.sqlite3", path)
    return path


def test_an_old_database_opens_migrates_and_continues(old_db):
    before = sqlite3.connect(old_db)
    assert before.execute("select value from ml_meta where key='schema'").fetchone() == ("1",)
    assert "ml_migrations" not in {r[0] for r in before.execute("select name from sqlite_master")}
    before.close()

    store = Store(f"sqlite:///{old_db}")
    [info] = store.list()
    assert (info.id, info.turns, info.lane_turns, info.strategies) == (
        OLD_ID, 3, 12, ("full", "window", "summary", "entity"),
    )  # fmt: skip
    saved = store.load(OLD_ID)
    assert saved.records["full"][2].reply.startswith("Reply to: I currently have no investments")
    assert saved.params("window") == {"k": 1}

    session = continue_stored(
        store, OLD_ID, RunOptions(provider=openai_settings(), transport=FakeTransport())
    )
    tracker = store.track(session)
    session.run_turn("And now?")
    assert tracker.error is None and store.info(OLD_ID).turns == 4

    after = sqlite3.connect(old_db)
    names = {r[0] for r in after.execute("select name from ml_migrations")}
    assert names == {m.__name__ for m in MIGRATIONS}
    schema = after.execute("select value from ml_meta where key='schema'").fetchone()
    assert schema == (str(SCHEMA_VERSION),)


def test_a_database_from_a_newer_app_is_refused_not_misread(old_db):
    Store(f"sqlite:///{old_db}").close()
    conn = sqlite3.connect(old_db)
    conn.execute("insert into ml_migrations values ('m999_from_the_future', '2030-01-01')")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="newer than this app"):
        Store(f"sqlite:///{old_db}")


def test_an_old_export_opens_and_imports(tmp_path):
    text = (FIXTURES / "old_export_v1.json").read_text()
    assert json.loads(text)[FORMAT] == 1 != FORMAT_VERSION
    saved = decode_export(json.loads(text))
    assert saved.id == OLD_ID and len(saved.user_turns) == 3 and not saved.interrupted
    store = Store(f"sqlite:///{tmp_path / 'new.sqlite3'}")
    new_id = store.import_json(text)
    assert store.load(new_id).records == saved.records


def test_a_lane_that_has_not_answered_gets_the_memory_its_strategy_makes():
    from lanes.lane import Lane
    from memory.maintenance import Upkeep
    from memory.registry import REGISTRY
    from memory.tokens import TokenCounter
    from storage.records import fresh_state

    for name in REGISTRY:
        lane = Lane(name, "", counter=TokenCounter.for_model(None), upkeep=Upkeep.using(len))
        settings = {"lanes": [{"strategy": name, "params": {}}]}
        assert fresh_state(name, settings) == lane.memory_state()
