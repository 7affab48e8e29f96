"""How the embedded server is configured (no model is started here)."""

from __future__ import annotations

import pytest

from providers import embedded


@pytest.mark.parametrize(("cores", "threads"), [(1, 1), (2, 2), (8, 8)])
def test_the_server_uses_every_core_unless_told_otherwise(monkeypatch, cores, threads):
    monkeypatch.setattr(embedded.os, "cpu_count", lambda: cores)
    monkeypatch.delenv("MEMORY_LAB_EMBEDDED_THREADS", raising=False)
    assert embedded.EmbeddedConfig.from_env().threads == threads


def test_prompt_cache_reuse_settings_come_from_the_environment(monkeypatch):
    defaults = embedded.EmbeddedConfig.from_env()
    assert defaults.cache_reuse > 0 and defaults.cache_ram_mib > 0
    assert not defaults.prompt_cache  # requests opt in; reproducible replies by default
    monkeypatch.setenv("MEMORY_LAB_EMBEDDED_CACHE_REUSE", "0")
    monkeypatch.setenv("MEMORY_LAB_EMBEDDED_CACHE_RAM", "0")
    monkeypatch.setenv("MEMORY_LAB_EMBEDDED_THREADS", "2")
    assert defaults.cache_idle_slots  # idle slots kept in the host cache by default
    monkeypatch.setenv("MEMORY_LAB_EMBEDDED_CACHE_IDLE", "0")
    config = embedded.EmbeddedConfig.from_env()
    assert (config.cache_reuse, config.cache_ram_mib, config.threads) == (0, 0, 2)
    assert not config.cache_idle_slots


def test_a_bad_override_names_the_variable(monkeypatch):
    monkeypatch.setenv("MEMORY_LAB_EMBEDDED_CACHE_RAM", "lots")
    with pytest.raises(ValueError, match="MEMORY_LAB_EMBEDDED_CACHE_RAM must be a whole number"):
        embedded.EmbeddedConfig.from_env()
