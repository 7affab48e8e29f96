"""One secrets policy (providers/redaction.py): every secret the run knew is masked in every
output (issue 24 class 3). The walk is by construction: every command and sweep step of the
CLI that has an output flag (`--json`, `--csv`, `--rows`) must have a case below, and each
flag must be used by one; every `to_*` export of present/export.py is called; the session
store's and the sweep store's database files are read whole.

The secrets are not key-shaped on purpose, so only the registry of known secrets (what the
run learned from the environment, a typed key, a URL) can mask them.
"""

from __future__ import annotations

import argparse
import io
import json
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from cli import main as cli_main
from engines.survival import SurvivalConfig, run_survival
from present import export
from providers.redaction import REDACTED, mask
from providers.settings import ProviderChoice
from storage.store import Store, StoreError, SweepStore
from tests.providers.fake_server import FakeLLMServer
from tests.storage.store_support import make_session, openai_settings

ENV_SECRET = "plain-env-secret-7f3a9c"  # OPENAI_API_KEY: the endpoint echoes it
SWEEP_SECRET = "sweep-var-secret-51d0e2"  # a key variable named by --key-env
TYPED_SECRET = "typed-sidebar-secret-4b2e"  # typed in the sidebar, never in the environment
DB_SECRET = "dbpass-secret-91xq"  # the database URL's password
OUTPUT_FLAGS = ("--json", "--csv", "--rows")
SECRETS = (ENV_SECRET, SWEEP_SECRET, TYPED_SECRET, DB_SECRET)


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


def command_paths() -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every command, and every step of a command with steps (sweep), with its parser."""

    def walk(path: tuple[str, ...], parser: argparse.ArgumentParser):
        steps = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not steps:
            yield path, parser
        for action in steps:
            for name, child in action.choices.items():
                yield from walk((*path, name), child)

    for name in cli_main.COMMANDS:
        root = cli_main.build_parser([name])
        (action,) = [a for a in root._actions if isinstance(a, argparse._SubParsersAction)]
        yield from walk((name,), action.choices[name])


def output_flags(parser: argparse.ArgumentParser) -> set[str]:
    return {flag for a in parser._actions for flag in a.option_strings if flag in OUTPUT_FLAGS}


@dataclass
class Run:
    code: int
    texts: dict[str, str]  # where -> what was written there (stdout, stderr, files, database)


def run_cli(capsys, argv: list[str], files: dict[str, Path]) -> Run:
    code = cli_main.main(argv)
    out, err = capsys.readouterr()
    texts = {"stdout": out, "stderr": err}
    texts |= {flag: path.read_text(encoding="utf-8") for flag, path in files.items()}
    return Run(code, texts)


def assert_masked(run: Run, *, expect_mask: bool = True) -> None:
    for where, text in run.texts.items():
        for secret in SECRETS:
            assert secret not in text, f"{secret} leaked into {where}"
    if expect_mask:
        assert any(REDACTED in t for t in run.texts.values()), "the secret never reached an output"


def database_text(path: Path) -> str:
    """Every text cell of every table of a SQLite file."""
    conn = sqlite3.connect(path)
    try:
        tables = [r[0] for r in conn.execute("select name from sqlite_master where type='table'")]
        cells = [
            str(c) for t in tables for row in conn.execute(f'select * from "{t}"') for c in row
        ]
    finally:
        conn.close()
    return "\n".join(cells)


# --- the cases: one per command path with output flags ----------------------------------


def _simulate(tmp: Path, env) -> list[str]:
    turns = tmp / "turns.txt"
    turns.write_text(f"my code is {ENV_SECRET}\nsecond turn\n", encoding="utf-8")
    return ["simulate", "--user-turns", str(turns), "--turns", "2"]


def _survival(tmp: Path, env) -> list[str]:
    return ["survival", "--provider", "openai", "--base-url", f"{env.llm.url}/v1",
            "--model", "echo-key", "--strategy", "full", "--probe-turns", "2", "--quiet"]  # fmt: skip


def _tune(tmp: Path, env) -> list[str]:
    chat = tmp / f"chat-{ENV_SECRET}.txt"
    chat.write_text("User: My locker code is 4471.\nAssistant: Noted.\n", encoding="utf-8")
    facts = tmp / "facts.json"
    facts.write_text(json.dumps([{"key": "code", "turn": 1, "probe": "What is my code?",
                                  "answer": "4471"}]), encoding="utf-8")  # fmt: skip
    return ["tune", "--transcript", str(chat), "--facts", str(facts), "--strategy", "window",
            "--time-limit", "5", "--quiet"]  # fmt: skip


def _sweep_collect(tmp: Path, env) -> list[str]:
    db = f"sqlite:///{tmp / 'sweeps.sqlite3'}"
    env.batch.answer = lambda body: f"the key you sent is {SWEEP_SECRET}"
    code = cli_main.main(["sweep", "--db", db, "start", "--provider", "anthropic", "--model",
                          "claude-haiku-4-5", "--base-url", env.batch.url, "--key-env",
                          "SWEEP_SECRET_VAR", "--probe-turns", "2", "--strategy", "full",
                          "--yes", "--name", "secret sweep"])  # fmt: skip
    out, _ = env.capsys.readouterr()
    assert code == 0, out
    sweep_id = out.split("sweep ", 1)[1].split(":")[0]
    env.databases.append(tmp / "sweeps.sqlite3")
    return ["sweep", "--db", db, "collect", sweep_id, "--base-url", env.batch.url, "--wait",
            "--interval", "0.01"]  # fmt: skip


FIXTURES = Path(__file__).resolve().parents[1] / "scenarios" / "fixtures"


def _chat(tmp: Path) -> Path:
    chat = tmp / "chat.txt"
    chat.write_text(f"User: my code is {ENV_SECRET}\nAssistant: ok\nUser: thanks\n"
                    "Assistant: sure\n", encoding="utf-8")  # fmt: skip
    return chat


def _transcript(tmp: Path, env) -> list[str]:
    return ["transcript", str(_chat(tmp))]


def _replay(tmp: Path, env) -> list[str]:
    return ["replay", str(_chat(tmp)), "--strategy", "full"]


def _recall(tmp: Path, env) -> list[str]:
    data = json.loads((FIXTURES / "locomo_sample.json").read_text(encoding="utf-8"))
    data[0]["sample_id"] = f"conv-{ENV_SECRET}"  # named in the unresolved-evidence list
    path = tmp / "locomo.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return ["recall", "--dataset", "locomo", str(path), "--strategy", "window:k=2"]


def _check_strategy(tmp: Path, env) -> list[str]:
    path = tmp / f"memory-{ENV_SECRET}.py"  # the file is named in the report
    name = f"last_turn_{tmp.name}"  # one name per run: the runs share this test's process
    path.write_text(
        f"def {name}(system, history, new_message):\n"
        "    return [{'role': 'system', 'content': system}, *history[-2:],\n"
        "            {'role': 'user', 'content': new_message}]\n",
        encoding="utf-8",
    )
    return ["check-strategy", f"{path}:{name}", "--examples", "3"]


CASES: dict[tuple[str, ...], Callable[..., list[str]]] = {
    ("check-strategy",): _check_strategy,
    ("simulate",): _simulate,
    ("survival",): _survival,
    ("tune",): _tune,
    ("sweep", "collect"): _sweep_collect,
    ("transcript",): _transcript,
    ("replay",): _replay,
    ("recall",): _recall,
}

# The output flags each command is run with (every one of its flags appears in one variant).
VARIANTS = (("--rows",), ("--json",), ("--json", "--csv"))


def test_every_command_with_an_output_has_a_secrets_case():
    with_outputs = {path for path, parser in command_paths() if output_flags(parser)}
    assert with_outputs, "no command has an output flag: the walk found nothing"
    assert with_outputs <= set(CASES), f"add a case for {sorted(with_outputs - set(CASES))}"


@dataclass
class Env:
    llm: FakeLLMServer
    batch: object
    capsys: object
    databases: list[Path]


@pytest.mark.parametrize("path", sorted(CASES))
def test_no_known_secret_reaches_any_cli_output(path, llm, fb, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", ENV_SECRET)
    monkeypatch.setenv("SWEEP_SECRET_VAR", SWEEP_SECRET)
    parser = dict(command_paths())[path]
    flags = output_flags(parser)
    actions = {f: a for a in parser._actions for f in a.option_strings}
    runs = sorted({(), *(tuple(f for f in v if f in flags) for v in VARIANTS)})
    original = fb.answer
    masked: list[bool] = []
    try:
        for n, chosen in enumerate(runs):
            tmp = tmp_path / str(n)
            tmp.mkdir()
            env = Env(llm, fb, capsys, [])
            argv = CASES[path](tmp, env)
            files = {}
            for flag in chosen:
                action = actions[flag]
                alone = action.nargs == 0 or (action.nargs == "?" and len(chosen) == 1)
                if not alone:
                    files[flag] = tmp / f"out.{flag.strip('-')}"
                    argv += [flag, str(files[flag])]
                else:
                    argv.append(flag)
            run = run_cli(capsys, argv, files)
            assert run.code == 0, run.texts
            for db in env.databases:
                run.texts[f"database {db.name}"] = database_text(db)
            assert_masked(run, expect_mask=False)
            masked.append(any(REDACTED in t for t in run.texts.values()))
    finally:
        fb.answer = original
    assert any(masked), f"{path}: the secret never reached an output, so nothing was tested"
    assert {f for r in runs for f in r} == flags


# --- the stores and the exports ----------------------------------------------------------


def test_a_typed_key_echoed_into_a_survival_run_never_reaches_the_store_or_an_export(tmp_path):
    ProviderChoice(preset="openai", model="gpt-4o-mini", api_key=TYPED_SECRET)  # the sidebar
    session = make_session(provider=openai_settings(TYPED_SECRET))
    path = tmp_path / "store.sqlite3"
    store = Store(f"sqlite:///{path}")
    store.track(session)
    session.run_turn(f"my key is {TYPED_SECRET}, keep it")
    survival = run_survival(SurvivalConfig(probe_turns=(2,)).validate()).as_dict()
    survival["rows"][0]["reply"] = f"Your key is {TYPED_SECRET}."
    store.attach_survival(session.id, survival)
    saved = store.load(session.id)
    outputs = {"database": database_text(path)}
    exports = [f for name, f in vars(export).items() if name.startswith("to_") and callable(f)]
    assert len(exports) >= 4, "the exports were not found"
    for fn in exports:
        outputs[fn.__name__] = str(fn(saved))
    run = Run(0, outputs)
    assert_masked(run)
    assert TYPED_SECRET not in json.dumps(saved.as_dict(), default=str)


def test_the_sweep_store_masks_what_it_writes(tmp_path, monkeypatch):
    path = tmp_path / "sweeps.sqlite3"
    store = SweepStore(f"sqlite:///{path}")
    openai_settings(TYPED_SECRET)  # the run now knows this key
    store.create(name=f"run {TYPED_SECRET}", settings={"kind": "openai", "model": "m"},
                 config={"note": TYPED_SECRET}, plan={}, upkeep={}, requests=[])  # fmt: skip
    assert TYPED_SECRET not in database_text(path)


@pytest.mark.parametrize(
    "url",
    [
        f"postgresql://lab:{DB_SECRET}@127.0.0.1:1/lab",
        f"postgresql://lab@127.0.0.1:1/lab?password={DB_SECRET}",
    ],
)
def test_a_database_password_is_never_shown(url):
    with pytest.raises(StoreError) as failed:
        Store(url)
    assert DB_SECRET not in str(failed.value)
    assert "127.0.0.1" in str(failed.value)  # the message still says which database
    assert DB_SECRET not in mask(f"the store at {url}")


def test_the_sessions_caption_hides_a_query_password(tmp_path):
    url = f"sqlite:///{tmp_path / 'a.sqlite3'}?password={DB_SECRET}"
    try:
        shown = Store(url).display_url
    except StoreError as exc:  # sqlite refuses the parameter: the error must hide it too
        shown = str(exc)
    assert DB_SECRET not in shown


def test_masked_stream_masks_each_piece_written():
    from cli.outputs import MaskedStream

    openai_settings(TYPED_SECRET)
    inner = io.StringIO()
    stream = MaskedStream(inner)
    print(f"a {TYPED_SECRET} b", file=stream)
    assert inner.getvalue() == f"a {REDACTED} b\n"
