"""A survival result as a session export carries it: checked whole (its config as a run
would load it, its labels, its rows) when the export is imported. Registers that check with
the session store's codec; touches nothing else."""

from __future__ import annotations

from typing import Any

from engines.survival.config import SurvivalConfig
from engines.survival.facts import SurvivalConfigError
from engines.survival.results import check_saved
from storage.store import SessionFormatError, register_part


def check_part(data: Any, path: str = "survival") -> None:
    """`data` as an export's survival part; SessionFormatError names the field by its path."""
    try:
        check_saved(data, path)
        config = data.get("config") or {}
        try:
            SurvivalConfig.from_dict(config)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise SurvivalConfigError(f"{path}.config: {exc}") from None
        for i, choice in enumerate(config.get("strategies") or ()):
            if not isinstance(choice.get("label", ""), str):
                raise SurvivalConfigError(f"{path}.config.strategies[{i}].label must be text")
    except SurvivalConfigError as exc:
        raise SessionFormatError(str(exc)) from None


register_part("survival", check_part)
