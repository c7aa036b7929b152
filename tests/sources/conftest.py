"""Each source's intake sensor test shares one wiped test instance per module; tests that need
the daemon's view of the product's own code location share ``workspace_instance``."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator

import dagster as dg
import pytest
from dagster._core.remote_origin import InProcessCodeLocationOrigin
from dagster._core.types.loadable_target_origin import LoadableTargetOrigin
from dagster._core.workspace.context import WorkspaceProcessContext
from dagster._core.workspace.load_target import InProcessWorkspaceLoadTarget

from tests.support.sensor_instance import _shared_instance, instance

__all__ = ["_shared_instance", "instance", "workspace_instance"]


@pytest.fixture(scope="module")
def workspace_instance() -> Iterator[tuple[dg.DagsterInstance, WorkspaceProcessContext]]:
    # queued, as the shipped dagster.yaml: submit_run queues, nothing executes in the test
    # the code location as a fresh process loads it: its resources are read from the environment
    # at import (a forge token there becomes an EnvVar), so a module an earlier test imported
    # under its own environment (a monkeypatched GITHUB_TOKEN since removed) would fail every
    # launch's config here
    if "veranda_dagster.definitions" in sys.modules:
        importlib.reload(sys.modules["veranda_dagster.definitions"])
    coordinator = {"module": "dagster.core.run_coordinator", "class": "QueuedRunCoordinator"}
    origin = InProcessCodeLocationOrigin(
        LoadableTargetOrigin(module_name="veranda_dagster.definitions"), location_name="veranda"
    )
    with (
        dg.instance_for_test(overrides={"run_coordinator": coordinator}) as instance,
        WorkspaceProcessContext(instance, InProcessWorkspaceLoadTarget(origin)) as workspace,
    ):
        yield instance, workspace
