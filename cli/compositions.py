"""Compositions on the command line: `--composition FILE.json` (repeatable) on simulate,
survival, tune and sweep plan/start, and the compositions saved in the app's database.

Before such a command runs, every composition saved in the database (the app's default,
$MEMORY_LAB_DB_URL, or the sweep's --db) is registered, so `--strategy NAME` reaches it; an
absent default SQLite file is not created. Each --composition file is then read (a bad file
is a usage error naming it and the field), registered, and run with any --strategy given
(alone when none is). `sweep start` also saves it in the sweep's database, so `sweep collect`
in a later process knows it.

May touch: the app's database (reads its compositions; `sweep start` saves the files' ones).
"""

from __future__ import annotations

import argparse
import sys

from cli.inputs import read_text_arg
from cli.parsing import UsageError
from memory.compose import Composition, read_composition
from memory.errors import InvalidParameter
from memory.registry import REGISTRY, register_composition, unregister_composition
from providers.redaction import mask
from storage.store import DEFAULT_PATH, Store, default_url

FLAG = "--composition"


def add_composition_argument(parser: argparse.ArgumentParser) -> None:
    """`--composition FILE.json`, repeatable."""
    parser.add_argument(
        FLAG,
        action="append",
        metavar="FILE.json",
        help="a composition (exported from the app's Composer) to register and run with any "
        "--strategy given, alone when none is; repeatable. Compositions saved in the app's "
        "database are registered too",
    )


def prepare(args: argparse.Namespace) -> None:
    """Register the saved compositions and the --composition files; add the files' names to
    `args.strategy`. Does nothing for commands without the option."""
    if not hasattr(args, "composition"):
        return
    url = getattr(args, "db", None)
    store = _open_store(url)
    if store is not None:
        try:
            store.compositions.register_saved()
        except Exception as exc:  # noqa: BLE001 - a damaged table must not stop a run
            sys.stderr.write(f"note: saved compositions not loaded: {mask(str(exc))}\n")
    names: list[str] = []
    for path in args.composition or []:
        composition = _read(path)
        _register(composition)
        names.append(composition.name)
        if getattr(args, "sweep_command", None) == "start":
            store = store or _open_store(url, create=True)
            if store is not None:
                store.compositions.save(composition)
    if names:
        chosen = list(args.strategy or [])
        args.strategy = chosen + [n for n in names if n not in chosen]


def _read(path: str) -> Composition:
    text = read_text_arg(path, FLAG)
    try:
        return read_composition(text, source=f"{FLAG} {path}")
    except InvalidParameter as exc:
        raise UsageError(str(exc)) from None


def _register(composition: Composition) -> None:
    """Register it; the file wins over a saved composition of the same name."""
    found = REGISTRY.get(composition.name)
    if found is not None and found.composition is None:
        raise UsageError(
            f"{FLAG}: {composition.name!r} is a built-in strategy's name: rename the composition"
        )
    if found is not None and found.composition != composition:
        sys.stderr.write(
            f"note: {composition.name}: the file's composition replaces the saved one\n"
        )
        unregister_composition(composition.name)
    if composition.name not in REGISTRY:
        register_composition(composition)


def _open_store(url: str | None, *, create: bool = False) -> Store | None:
    """The app's session store, or None when there is none yet (its default SQLite file is
    absent and `create` is False) or it cannot be opened (a note says why)."""
    chosen = url or default_url()
    if not create and chosen == f"sqlite:///{DEFAULT_PATH}" and not DEFAULT_PATH.exists():
        return None
    try:
        return Store(chosen)
    except Exception as exc:  # noqa: BLE001 - the run goes on without saved compositions
        sys.stderr.write(f"note: saved compositions not loaded: {mask(str(exc))}\n")
        return None
