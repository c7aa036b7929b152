"""One materialized fake phase graph per session: materializing is the slow part."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from tests.observability.fake_graph import materialize_all


@pytest.fixture(scope="session")
def ops_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A DAGSTER_HOME with the fake graph materialized for every ticket (env set meanwhile)."""
    path = tmp_path_factory.mktemp("dagster_home")
    (path / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DAGSTER_HOME", str(path))
        with dg.DagsterInstance.get() as instance:
            materialize_all(instance)
        yield path
