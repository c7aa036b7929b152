"""A plugin registry for one test: what a test registers is gone afterwards."""

from __future__ import annotations

from typing import Any

import pytest

from veranda_dagster.registry import Registry


def scratch(registry: Registry[Any], monkeypatch: pytest.MonkeyPatch) -> Registry[Any]:
    """``registry`` with its built-in plugins discovered and a table of its own for the test."""
    registry.discover()
    monkeypatch.setattr(registry, "_items", dict(registry._items))
    return registry
