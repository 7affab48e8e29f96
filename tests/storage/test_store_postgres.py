"""The session store against a real PostgreSQL server, started here on loopback.

Debian's postgresql package (installed by scripts/setup.sh --test) provides initdb and
pg_ctl; the server runs from a temporary directory on a free port and is stopped and
removed afterwards. Root cannot run postgres, so as root it runs as the `postgres` user.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import threading
from collections.abc import Iterator

import pytest

from engines.sessions import RunOptions, continue_stored
from present import export
from providers.fake import FakeTransport
from scenarios import fincoach
from storage.store import INTERRUPTED, Store
from tests.storage.store_support import live_figures, make_session, openai_settings, saved_figures

pytestmark = pytest.mark.postgres


def _bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    assert found, (
        f"PostgreSQL's {name} is missing: run scripts/setup.sh --test (it installs Debian's "
        "postgresql package)"
    )
    return found[-1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """initdb + pg_ctl on a free loopback port; yields a database URL."""
    as_user: list[str] = []
    workdir = tempfile.mkdtemp(prefix="memory-lab-pg-")
    if os.geteuid() == 0:
        as_user = ["runuser", "-u", "postgres", "--"]
        shutil.chown(workdir, "postgres", "postgres")
    data = os.path.join(workdir, "data")
    port = _free_port()
    run = {"check": True, "capture_output": True, "text": True, "timeout": 120}
    try:
        subprocess.run(
            [*as_user, _bin("initdb"), "-D", data, "-U", "postgres", "-A", "trust", "-E",
             "UTF8", "--no-sync"],
            **run,
        )  # fmt: skip
        subprocess.run(
            [*as_user, _bin("pg_ctl"), "-D", data, "-l", os.path.join(workdir, "log"), "-w",
             "-o", f"-p {port} -h 127.0.0.1 -k {workdir} -F", "start"],
            **run,
        )  # fmt: skip
        try:
            yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
        finally:
            subprocess.run(
                [*as_user, _bin("pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"],
                capture_output=True,
                timeout=60,
            )
    except subprocess.CalledProcessError as exc:
        raise AssertionError(f"PostgreSQL did not start: {exc.stderr}") from exc
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    with postgres_server() as url:
        yield url


def test_round_trip_on_a_real_postgresql_server(pg_url):
    store = Store(pg_url)
    assert store.kind == "postgresql" and store.url.drivername == "postgresql+psycopg"
    session = make_session()
    tracker = store.track(session, app={"provider": {"preset": "openai"}})
    for text in fincoach.DEMO_TURNS:
        session.run_turn(text)
    assert tracker.error is None

    restarted = Store(pg_url)
    saved = restarted.load(session.id)
    assert saved.records == session.records()
    assert saved_figures(saved) == live_figures(session)
    info = restarted.info(session.id)
    assert (info.turns, info.lane_turns, info.interrupted) == (5, 30, False)
    assert export.to_csv(saved) == export.to_csv(restarted.load(session.id))

    again = continue_stored(
        restarted, session.id, RunOptions(provider=openai_settings(), transport=FakeTransport())
    )
    assert again.snapshot()["lanes"] == session.snapshot()["lanes"]
    restarted.rename(session.id, "On Postgres")
    assert restarted.info(session.id).name == "On Postgres"
    copy = restarted.import_json(export.to_json(saved))
    assert restarted.load(copy).records == saved.records
    assert restarted.delete(session.id) and restarted.delete(copy)
    assert session.id not in {i.id for i in restarted.list()}
    store.close()
    restarted.close()


def test_interrupted_turns_and_concurrent_writers_on_postgresql(pg_url):
    store = Store(pg_url)
    sessions = [make_session() for _ in range(3)]
    for s in sessions:
        store.track(s)

    def talk(session):
        for text in fincoach.DEMO_TURNS[:3]:
            session.run_turn(text)  # six lanes commit in parallel threads

    threads = [threading.Thread(target=talk, args=(s,)) for s in sessions]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for s in sessions:
        info = store.info(s.id)
        assert (info.turns, info.lane_turns) == (3, 18)
        assert store.load(s.id).records == s.records()

    cut = sessions[0]
    turn = cut.begin_turn("A turn the server never finishes.")
    cut.run_lane("full", turn)
    loaded = Store(pg_url).load(cut.id)
    assert loaded.interrupted == (4,)
    assert loaded.records["window"][3].error_kind == INTERRUPTED
    assert loaded.records["full"][3].ok
    for s in sessions:
        store.delete(s.id)
    store.close()
