"""Shared fixtures: the sample organisation on disk, created once per test module."""

from __future__ import annotations

from pathlib import Path

import pytest

from veranda_dagster.sim.sample_org import SampleOrg, create_sample_org


@pytest.fixture(scope="module")
def sample_org(tmp_path_factory: pytest.TempPathFactory) -> SampleOrg:
    return create_sample_org(Path(tmp_path_factory.mktemp("org")) / "org")
