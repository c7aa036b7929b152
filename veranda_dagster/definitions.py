"""The one ``Definitions``: phase assets, their checks, the ticket job, sensors and resources.

Everything is configured from environment variables with working defaults, so the code location
loads on a machine with no keys at all; a phase that then needs a missing key says which.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

import dagster as dg

from veranda_dagster.assets import CHECKS, PHASE_ASSETS
from veranda_dagster.domain.bounds import CI_WAIT_TIMEOUT_S, GITHUB_CODE_SEARCH_PER_MINUTE
from veranda_dagster.jobs import ticket_run
from veranda_dagster.resources.pipeline import PipelineResource
from veranda_dagster.storage import ValueStore, VerandaIOManager

SENSOR_MODULES = (
    "veranda_dagster.sensors.linear",
    "veranda_dagster.sensors.slack",
    "veranda_dagster.sensors.pr_feedback",
)


def env(name: str, default: str = "") -> Any:
    """``dg.EnvVar(name)`` when set (resolved at launch, hidden in the UI), else ``default``."""
    return dg.EnvVar(name) if os.environ.get(name) else default


def pipeline_resource() -> PipelineResource:
    return PipelineResource(
        linear_url=env("LINEAR_API_URL", "https://api.linear.app/graphql"),
        linear_token=env("LINEAR_API_KEY"),
        slack_url=env("SLACK_API_URL", "https://slack.com/api"),
        slack_token=env("SLACK_BOT_TOKEN"),
        github_api_url=env("GITHUB_API_URL", "https://api.github.com"),
        github_git_base=env("GITHUB_GIT_BASE", "https://github.com"),
        github_token=env("GITHUB_TOKEN"),
        catalog_path=env("VERANDA_CATALOG"),
        workspace_root=env("VERANDA_WORKSPACES"),
        backends_file=env("VERANDA_BACKENDS_FILE"),
        runbooks_dir=env("VERANDA_RUNBOOKS_DIR"),
        hints_dir=env("VERANDA_HINTS_DIR"),
        code_search_per_minute=int(
            os.environ.get("VERANDA_CODE_SEARCH_PER_MINUTE") or GITHUB_CODE_SEARCH_PER_MINUTE
        ),
        ci_wait_timeout_s=float(os.environ.get("VERANDA_CI_WAIT_TIMEOUT_S") or CI_WAIT_TIMEOUT_S),
    )


def value_store() -> ValueStore:
    return ValueStore(
        backend=env("VERANDA_VALUE_STORE", "filesystem"),
        base_dir=env("VERANDA_VALUES_DIR"),
        postgres_url=env("VERANDA_POSTGRES_URL"),
    )


def optional_sensors(provided: set[str]) -> tuple[list[dg.SensorDefinition], dict[str, Any]]:
    """Sensors from the modules that exist, with the resources they declare.

    A sensor's resource ``<key>`` is found as the module's ``<Key>Resource.from_env()``; a
    sensor whose module is absent, or whose resources cannot be found, is left out.
    """
    sensors: list[dg.SensorDefinition] = []
    resources: dict[str, Any] = {}
    for name in SENSOR_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        classes = {
            attr.lower().removesuffix("resource"): obj
            for attr, obj in vars(module).items()
            if attr.endswith("Resource") and hasattr(obj, "from_env")
        }
        for sensor in (v for v in vars(module).values() if isinstance(v, dg.SensorDefinition)):
            needed = set(sensor.required_resource_keys) - provided - set(resources)
            if all(key in classes for key in needed):
                resources.update({key: classes[key].from_env() for key in needed})
                sensors.append(sensor)
    return sensors, resources


def build_definitions() -> dg.Definitions:
    store = value_store()
    resources: dict[str, Any] = {
        "pipeline": pipeline_resource(),
        "value_store": store,
        "io_manager": VerandaIOManager(store=store),
    }
    sensors, sensor_resources = optional_sensors(set(resources))
    return dg.Definitions(
        assets=PHASE_ASSETS,
        asset_checks=CHECKS,
        jobs=[ticket_run],
        sensors=sensors,
        resources={**sensor_resources, **resources},
    )


defs = build_definitions()
