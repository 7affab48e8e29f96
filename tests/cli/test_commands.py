"""The command table: one module per command, one line in `cli.main.COMMANDS`, no private
names shared between the modules of cli/ (issue 23 part 5)."""

from __future__ import annotations

import argparse
import ast
import sys
import types
from pathlib import Path

import pytest

from cli import main as cli_main
from cli.parsing import EXIT_OK

CLI = Path(cli_main.__file__).resolve().parent


@pytest.mark.parametrize("name", list(cli_main.COMMANDS))
def test_every_command_is_its_own_module_with_both_parts(name, capsys):
    assert (CLI / f"{cli_main.module_name(name)}.py").is_file()
    command = cli_main.load_command(name)
    assert command.name == name
    with pytest.raises(SystemExit) as done:
        cli_main.main([name, "--help"])
    assert done.value.code == EXIT_OK
    assert f"usage: memory-lab {name}" in capsys.readouterr().out


def test_no_module_of_cli_imports_a_private_name_of_another():
    for path in sorted(CLI.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("cli"):
                private = [a.name for a in node.names if a.name.startswith("_")]
                assert not private, f"{path.name} imports {private} from {node.module}"


def test_only_the_command_being_run_is_imported():
    code = "import sys; from cli.main import main; main(['app', '--print-command']); " \
        "print(sorted(m for m in sys.modules if m.startswith('cli.')))"  # fmt: skip
    import subprocess

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=CLI.parent, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    loaded = done.stdout.strip().splitlines()[-1]
    assert "cli.app" in loaded
    assert not any(f"cli.{other}'" in loaded for other in ("sweep", "tune", "survival"))


def test_a_new_command_is_one_module_and_one_line(monkeypatch, capsys):
    module = types.ModuleType("cli.hello")

    def add_arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--who", default="world")

    def run(args: argparse.Namespace) -> int:
        print(f"hello {args.who}")
        return 7

    module.add_arguments = add_arguments  # type: ignore[attr-defined]
    module.run = run  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "cli.hello", module)
    monkeypatch.setitem(cli_main.COMMANDS, "hello", "say hello")
    with pytest.raises(SystemExit):
        cli_main.main(["--help"])
    assert "say hello" in capsys.readouterr().out
    assert cli_main.main(["hello", "--who", "you"]) == 7
    assert capsys.readouterr().out == "hello you\n"


def test_a_command_module_without_run_is_refused(monkeypatch):
    module = types.ModuleType("cli.broken")
    module.add_arguments = lambda parser: None  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "cli.broken", module)
    with pytest.raises(TypeError, match="run"):
        cli_main.load_command("broken")
