"""Where strategies from outside the lab's own come from, registered once per process:

* the framework lanes (plugins/frameworks/), whose packages are installed;
* installed packages, through the entry-point group `memory_lab.strategies` (each entry
  point's name is the strategy's name, its object any shape plugins/shapes.py accepts);
* local files, `PATH.py:NAME`, from `--strategy-file` on the command line and the
  `MEMORY_LAB_STRATEGY_FILES` environment variable (comma-separated) for the app; code is
  never uploaded through the browser.

`origins()` says where each loaded strategy came from (the pages list it), `problems()` what
could not be loaded (a file that does not import, a shape that fits none), `unavailable()`
the framework lanes whose package is missing. Loading never raises for the app; the command
line asks `load_files` directly and reports a bad file as a bad flag.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.errors import DuplicateStrategy
from memory.registry import REGISTRY, Param, register
from memory.strategies.base import Strategy
from plugins.shapes import ShapeError, adapt

ENTRY_POINT_GROUP = "memory_lab.strategies"
FILES_VARIABLE = "MEMORY_LAB_STRATEGY_FILES"


@dataclass(frozen=True)
class Origin:
    """Where a registered strategy came from, and what the contract check found."""

    name: str
    source: str  # "langchain-core 1.8.1", "package my-memory 0.1 (entry point)", "file ./m.py"
    kind: str  # "framework", "entry point", "file"
    known_flaws: tuple[str, ...] = ()  # contracts it breaks by design (framework lanes)
    broken: tuple[str, ...] = ()  # contracts the check found broken (user code)


class StrategyLoadError(ValueError):
    """A strategy file or entry point that could not be loaded, with where and why."""


_LOCK = threading.RLock()
_ORIGINS: dict[str, Origin] = {}
_PROBLEMS: list[str] = []
_UNAVAILABLE: dict[str, str] = {}
_DONE: set[str] = set()  # what load_all has loaded already: "frameworks", "entry points", files


def saved_state() -> tuple[Any, ...]:
    """What has been loaded so far, to put back with `restore_state` (tests isolate with it)."""
    with _LOCK:
        return dict(_ORIGINS), list(_PROBLEMS), dict(_UNAVAILABLE), set(_DONE)


def restore_state(state: tuple[Any, ...]) -> None:
    """Put back what `saved_state` returned (the registry itself is the caller's to restore)."""
    origins_, problems_, unavailable_, done_ = state
    with _LOCK:
        _ORIGINS.clear()
        _ORIGINS.update(origins_)
        _PROBLEMS[:] = problems_
        _UNAVAILABLE.clear()
        _UNAVAILABLE.update(unavailable_)
        _DONE.clear()
        _DONE.update(done_)


def origins() -> dict[str, Origin]:
    """Every strategy loaded from outside the built-ins, by name."""
    return dict(_ORIGINS)


def problems() -> list[str]:
    """What could not be loaded, one sentence each."""
    return list(_PROBLEMS)


def unavailable() -> dict[str, str]:
    """Framework lanes not registered because their package is missing: name -> how to add it."""
    return dict(_UNAVAILABLE)


def _params(raw: tuple[dict[str, Any], ...]) -> tuple[Param, ...]:
    return tuple(
        Param(
            d["name"],
            d["default"],
            d["help"],
            d.get("minimum"),
            d.get("maximum"),
            tuple(d.get("choices", ())),
            bool(d.get("in_label", False)),
        )
        for d in raw
    )


def load_frameworks() -> None:
    """Register every framework lane whose package is installed (once)."""
    from plugins.frameworks import LANES

    with _LOCK:
        if "frameworks" in _DONE:
            return
        _DONE.add("frameworks")
        for lane in LANES:
            missing = lane.cls.framework.missing()
            if missing:
                _UNAVAILABLE[lane.cls.name] = missing
                continue
            if lane.cls.name not in REGISTRY:
                # the label says which package and version produced the lane's requests
                made_by = f" ({lane.cls.framework.produced_by()})"
                if not lane.cls.title.endswith(made_by):  # registered again after a reset
                    lane.cls.title += made_by
                register(lane.cls, *_params(lane.params), color=lane.color)
            _ORIGINS[lane.cls.name] = Origin(
                lane.cls.name,
                lane.cls.framework.produced_by(),
                "framework",
                known_flaws=lane.known_flaws,
            )


def load_entry_points() -> None:
    """Register the strategies installed packages declare in `memory_lab.strategies` (once
    for each search path: a package put on the path later is found); one that fails to
    load is a problem, the others still load."""
    with _LOCK:
        seen = "entry points " + os.pathsep.join(sys.path)
        if seen in _DONE:
            return
        _DONE.add(seen)
        for point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            if point.name in _ORIGINS:
                continue
            dist = point.dist
            source = f"package {dist.name} {dist.version}" if dist else f"entry point {point.value}"
            where = f"entry point {point.name} = {point.value}"
            try:
                cls = adapt(point.name, point.load(), where)
                _register(cls, Origin(cls.name, f"{source} (entry point)", "entry point"))
            except Exception as exc:
                _PROBLEMS.append(f"{where}: {_reason(exc)}")


_FILE_SPEC = re.compile(r"^(?P<path>.+\.py):(?P<name>[A-Za-z_][A-Za-z0-9_]*)$")


def load_file(spec: str, *, check: bool = True) -> str:
    """Load `PATH.py:NAME` and register it; its strategy name. StrategyLoadError names the
    file and what is wrong (it does not import, NAME is missing, its shape fits none)."""
    match = _FILE_SPEC.match(spec.strip())
    if not match:
        raise StrategyLoadError(f"{spec!r}: write a strategy file as PATH.py:NAME")
    path, name = Path(match["path"]).expanduser(), match["name"]
    with _LOCK:
        if spec in _DONE:
            return _file_name(name)
    if not path.is_file():
        raise StrategyLoadError(f"{path}: no such file")
    module_name = f"memory_lab_user_{abs(hash(str(path.resolve())))}"
    loader_spec = importlib.util.spec_from_file_location(module_name, path)
    if loader_spec is None or loader_spec.loader is None:
        raise StrategyLoadError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[module_name] = module
    try:
        loader_spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(module_name, None)
        raise StrategyLoadError(f"{path} does not import: {_reason(exc)}") from exc
    if not hasattr(module, name):
        found = ", ".join(n for n in vars(module) if not n.startswith("_")) or "nothing"
        raise StrategyLoadError(f"{path} has no {name!r} (it defines: {found})")
    try:
        cls = adapt(_file_name(name), getattr(module, name), f"{path}:{name}")
    except ShapeError as exc:
        raise StrategyLoadError(str(exc)) from exc
    broken: tuple[str, ...] = ()
    if check:
        from plugins.contracts import broken_contracts

        broken = tuple(r.contract for r in broken_contracts(cls, examples=25))
    _register(cls, Origin(cls.name, f"file {path}", "file", broken=broken))
    with _LOCK:
        _DONE.add(spec)
    return cls.name


def _file_name(name: str) -> str:
    """A file's NAME as a strategy name: snake_case of a class name."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def load_files(specs: list[str]) -> list[str]:
    """Load each `PATH.py:NAME`; the strategy names. The first bad one raises."""
    return [load_file(s) for s in specs if s.strip()]


def load_all(files: list[str] | None = None) -> None:
    """Everything that can be loaded: framework lanes, entry points, the environment's files
    and `files`. Never raises: what failed is in `problems()`."""
    load_frameworks()
    load_entry_points()
    specs = [s for s in os.environ.get(FILES_VARIABLE, "").split(",") if s.strip()]
    for spec in [*specs, *(files or [])]:
        try:
            load_file(spec)
        except (StrategyLoadError, DuplicateStrategy) as exc:
            with _LOCK:
                message = str(exc)
                if message not in _PROBLEMS:
                    _PROBLEMS.append(message)


def _register(cls: type[Strategy], origin: Origin) -> None:
    existing = REGISTRY.get(cls.name)
    if existing is not None and existing.cls is not cls:
        raise DuplicateStrategy(
            f"{origin.source}: a strategy named {cls.name!r} is already registered"
        )
    if existing is None:
        if origin.broken:  # it still runs as a lane, marked with what it breaks
            cls.title = f"{cls.title} — breaks: {', '.join(origin.broken)}"
        params = _params(tuple(getattr(cls, "params_declared", ())))
        register(cls, *params)
    with _LOCK:
        _ORIGINS[cls.name] = origin


def _reason(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"
