"""User strategies join the comparison without editing the project: a plugin package through
the `memory_lab.strategies` entry point, a seed-shaped class through --strategy-file and
MEMORY_LAB_STRATEGY_FILES; bad files get a specific error and break nothing else."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memory.registry import REGISTRY, create, unregister
from memory.tokens import TokenCounter
from plugins import loading

FIXTURES = Path(__file__).parent / "fixtures"
SEED = f"{FIXTURES / 'seed_memory.py'}:SlidingWindowMemory"
COUNTER = TokenCounter("o200k_base")
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture plugin package, installed by pip (its dist-info holds the entry point)."""
    target = tmp_path_factory.mktemp("plugin")
    source = shutil.copytree(FIXTURES / "memory_plugin_pkg", target / "source")  # builds there
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index",
         "--disable-pip-version-check", "-q", "--target", str(target), str(source)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return target


def test_seed_shaped_class_from_a_file_runs_as_a_lane() -> None:
    name = loading.load_file(SEED)
    assert name == "sliding_window_memory" and name in REGISTRY
    assert loading.origins()[name].kind == "file"
    lane = create(name, "You are FinCoach.", counter=COUNTER)
    for i in range(1, 5):
        request = lane.prepare(f"question {i}")
        assert request.system == "You are FinCoach."
        assert request.messages[-1].content == f"question {i}"
        assert request.account.kept_turns == tuple(range(max(1, i - 2), i))
        lane.commit(f"question {i}", f"answer {i}")
    assert request.tokens == COUNTER.request(request.system, request.messages)


def test_a_contract_breaker_is_marked_and_still_runs() -> None:
    name = loading.load_file(f"{FIXTURES / 'seed_memory.py'}:AssistantFirst")
    origin = loading.origins()[name]
    assert "roles alternate" in origin.broken
    assert "breaks: roles alternate" in REGISTRY[name].title
    lane = create(name, "sys", counter=COUNTER)
    lane.prepare("hi")
    lane.commit("hi", "hello")
    assert [m.role for m in lane.prepare("again").messages] == ["assistant", "user"]


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("broken_import.py:Anything", "does not import: ImportError: this plugin file is broken"),
        ("seed_memory.py:Missing", "has no 'Missing' (it defines:"),
        ("seed_memory.py:NoShape", "is a class with methods remember; expected one of:"),
        ("nowhere.py:X", "no such file"),
        ("seed_memory.py", "write a strategy file as PATH.py:NAME"),
    ],
)
def test_bad_strategy_files_say_what_is_wrong(spec: str, says: str) -> None:
    with pytest.raises(loading.StrategyLoadError, match=None) as caught:
        loading.load_file(str(FIXTURES / spec) if not spec.startswith("nowhere") else spec)
    assert says in str(caught.value)


def test_a_function_returning_no_list_fails_its_turn_with_the_shape_expected() -> None:
    from plugins.frameworks.base import FrameworkError

    name = loading.load_file(f"{FIXTURES / 'seed_memory.py'}:not_a_list", check=False)
    lane = create(name, "sys", counter=COUNTER)
    with pytest.raises(FrameworkError, match="must return a list of messages, got str"):
        lane.prepare("hi")


def test_the_environment_variable_loads_files_for_the_app(monkeypatch) -> None:
    unregister("last_turn_only")
    loading._DONE.discard(f"{FIXTURES / 'seed_memory.py'}:last_turn_only")
    monkeypatch.setenv(loading.FILES_VARIABLE, f"{FIXTURES / 'seed_memory.py'}:last_turn_only")
    loading.load_all()
    assert "last_turn_only" in REGISTRY


def test_a_plugin_package_registers_through_the_entry_point(plugin_path, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(plugin_path))
    loading.load_entry_points()
    assert "fixture_last_two" in REGISTRY
    origin = loading.origins()["fixture_last_two"]
    assert origin.kind == "entry point" and "memory-plugin-fixture 0.1.0" in origin.source


def cli(*args: str, env_path: Path | None = None) -> subprocess.CompletedProcess[str]:
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), str(env_path or "")) if p)
    return subprocess.run([sys.executable, "-m", "cli", *args], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=600)  # fmt: skip


def test_cli_runs_file_and_plugin_strategies(plugin_path) -> None:
    done = cli("simulate", "--turns", "4", "--strategy", "sliding_window_memory",
               "--strategy", "fixture_last_two", "--strategy-file", SEED, "--json",
               env_path=plugin_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["rows"]  # label -> that strategy's turns
    assert set(rows) == {"sliding_window_memory", "fixture_last_two"}
    assert all(len(turns) == 4 for turns in rows.values())


def test_cli_bad_strategy_file_is_a_usage_error() -> None:
    done = cli("simulate", "--strategy-file", f"{FIXTURES / 'broken_import.py'}:X")
    assert done.returncode == 2
    assert "--strategy-file" in done.stderr and "does not import" in done.stderr


def test_check_strategy_prints_the_broken_contract_and_a_minimal_conversation() -> None:
    done = cli(
        "check-strategy", f"{FIXTURES / 'seed_memory.py'}:AssistantFirst", "--examples", "30"
    )
    assert done.returncode == 1, done.stderr
    assert "BROKEN  roles alternate" in done.stdout
    assert "minimal failing conversation" in done.stdout and "turn 1: user" in done.stdout
    good = cli("check-strategy", f"{FIXTURES / 'seed_memory.py'}:last_turn_only", "--json")
    assert good.returncode == 0, good.stdout + good.stderr
    assert json.loads(good.stdout)["broken"] == []
    # seed 002's window adds the new message to a deque of 2N messages before reading it, so
    # from turn N+1 on its request starts on an assistant message: the check finds that
    seed = cli("check-strategy", SEED, "--json")
    assert seed.returncode == 1
    assert [b["contract"] for b in json.loads(seed.stdout)["broken"]] == ["roles alternate"]
