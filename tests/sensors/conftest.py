"""Sensor tests share one wiped test instance per module (``test_dedup`` keeps its own)."""

import dagster as dg
import pytest


@pytest.fixture(scope="module")
def _shared_instance():
    with dg.instance_for_test() as inst:
        yield inst


@pytest.fixture
def instance(_shared_instance):
    """A wiped test instance per test: one sqlite instance per module costs a tenth as much."""
    _shared_instance.wipe()
    return _shared_instance
