"""Without the framework extra (a plain `pip install .`), every command and page still runs:
the framework lanes are listed as not installed, with the command that adds them, and asking
for one is a usage error that says so. The packages are hidden from a subprocess by an
import hook, the way a machine without them fails to find them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from plugins.frameworks import LANES
from plugins.frameworks.base import Framework
from tests.ui.conftest import APP, shown

ROOT = Path(__file__).resolve().parents[2]
HIDE = """
import sys

HIDDEN = {"langchain", "langchain_core", "langchain_classic", "langgraph", "langmem",
          "llama_index", "semantic_kernel"}


class Hide:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, Hide())
"""


def cli_without_frameworks(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    hook = tmp_path / "hook"
    hook.mkdir(exist_ok=True)
    (hook / "sitecustomize.py").write_text(HIDE, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(hook), str(ROOT)])}
    return subprocess.run([sys.executable, "-m", "cli", *args], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=300)  # fmt: skip


def transcript(tmp_path: Path) -> Path:
    chat = tmp_path / "chat.txt"
    chat.write_text("User: I'm Chiru.\nAssistant: Hello Chiru.\nUser: My rent is ₹25,000.\n"
                    "Assistant: Noted.\nUser: What is my name?\n", encoding="utf-8")  # fmt: skip
    return chat


def test_commands_run_and_name_the_missing_extra(tmp_path: Path) -> None:
    chat = transcript(tmp_path)
    done = cli_without_frameworks(tmp_path, "replay", str(chat), "--strategy", "window", "--json")
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["turns"]) == 3
    for lane in LANES:
        done = cli_without_frameworks(tmp_path, "replay", str(chat), "--strategy", lane.cls.name)
        assert done.returncode == 2, done.stderr
        assert f"{lane.cls.name} is a framework lane that needs" in done.stderr
        assert "pip install 'memory-lab[frameworks]'" in done.stderr
        assert "Traceback" not in done.stderr


def test_pages_list_the_lanes_as_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Framework, "version", lambda self: None)
    for path in (None, "pages/1_Fact_survival.py", "pages/4_Long_recall.py"):
        at = AppTest.from_file(APP, default_timeout=120)
        if path:
            at.switch_page(path)
        at.run()
        assert not at.exception, at.exception
        captions = [shown(c.value) for c in at.caption]
        missing = next(c for c in captions if c.startswith("Not installed: "))
        assert all(lane.cls.name in missing for lane in LANES)
        assert "pip install 'memory-lab[frameworks]'" in missing
        assert not [b for b in at.button if "Framework defaults" in b.label]
