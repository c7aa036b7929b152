"""VERANDA_MODEL_RETRY_DELAY_S: parsed strictly, and read where the Definitions are built (never at
import): the built ticket job retries each model phase after the value set at build time."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import dagster as dg
import pytest
from dagster._core.definitions.dependency import NodeHandle

from veranda_dagster import definitions
from veranda_dagster.assets import _policy
from veranda_dagster.domain.core import phases
from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.partitions import TICKET_JOB


def test_unset_or_blank_keeps_each_phase_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(_policy.MODEL_RETRY_DELAY_ENV, raising=False)
    assert _policy.model_retry_delay_override() is None
    monkeypatch.setenv(_policy.MODEL_RETRY_DELAY_ENV, "  ")
    assert _policy.model_retry_delay_override() is None


@pytest.mark.parametrize(("raw", "expected"), [("1", 1.0), ("0", 0.0), ("2.5", 2.5)])
def test_valid_values(monkeypatch: pytest.MonkeyPatch, raw: str, expected: float) -> None:
    monkeypatch.setenv(_policy.MODEL_RETRY_DELAY_ENV, raw)
    assert _policy.model_retry_delay_override() == expected


@pytest.mark.parametrize("raw", ["soon", "-1", "nan", "inf", "1s"])
def test_invalid_value_is_a_config_error_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, raw: str
) -> None:
    monkeypatch.setenv(_policy.MODEL_RETRY_DELAY_ENV, raw)
    with pytest.raises(ConfigError, match="VERANDA_MODEL_RETRY_DELAY_S"):
        _policy.model_retry_delay_override()


def retry_delays(defs: dg.Definitions) -> dict[str, float]:
    """Phase -> the base delay of the retry policy the built job's executor will apply."""
    job = defs.resolve_job_def(TICKET_JOB)
    delays: dict[str, float] = {}
    for name in phases.PHASES:
        policy = job.get_retry_policy_for_handle(NodeHandle(name, None))
        assert policy is not None and policy.delay is not None, name
        delays[name] = policy.delay
    return delays


def test_the_built_definitions_honour_the_value_set_after_import(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The modules are imported (this process did so long ago, whatever the variable was);
    each build reads the variable as it is then, and only the model phases take it."""
    own = {name: p.retry.delay_s for name, p in phases.PHASES.items()}
    monkeypatch.delenv(_policy.MODEL_RETRY_DELAY_ENV, raising=False)
    assert retry_delays(definitions.build_definitions()) == own
    monkeypatch.setenv(_policy.MODEL_RETRY_DELAY_ENV, "7")
    delays = retry_delays(definitions.build_definitions())
    assert {n for n, p in phases.PHASES.items() if p.calls_model} == {
        n for n, d in delays.items() if d == 7
    }
    assert all(delays[n] == own[n] for n, p in phases.PHASES.items() if not p.calls_model)
    monkeypatch.setenv(_policy.MODEL_RETRY_DELAY_ENV, "0")
    assert {
        d
        for n, d in retry_delays(definitions.build_definitions()).items()
        if phases.PHASES[n].calls_model
    } == {0}
    assert _policy.PHASES["patch"].retry.delay == own["patch"]  # import-time specs untouched


def test_importing_reads_nothing_and_building_reads_the_value() -> None:
    """A fresh process imports every module of the package but the Definitions' own (whose
    module-level ``defs`` is the build Dagster loads) with a value that is not a number, so
    a read would raise; then it sets a valid value and builds: the build honours it."""
    code = (
        "import importlib, json, os, pkgutil\n"
        "import veranda_dagster\n"
        "for m in pkgutil.walk_packages(veranda_dagster.__path__, 'veranda_dagster.'):\n"
        "    if m.name != 'veranda_dagster.definitions':\n"
        "        importlib.import_module(m.name)\n"
        f"os.environ[{_policy.MODEL_RETRY_DELAY_ENV!r}] = '3'\n"
        "from veranda_dagster import definitions\n"
        "from veranda_dagster.partitions import TICKET_JOB\n"
        "from dagster._core.definitions.dependency import NodeHandle\n"
        "job = definitions.defs.resolve_job_def(TICKET_JOB)\n"
        "print(json.dumps({n: job.get_retry_policy_for_handle(NodeHandle(n, None)).delay\n"
        "                  for n in ('ticket', 'patch')}))\n"
    )
    env = {**os.environ, _policy.MODEL_RETRY_DELAY_ENV: "soon"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {
        "ticket": phases.PHASES["ticket"].retry.delay_s,
        "patch": 3,
    }


def test_a_bad_value_fails_the_build_naming_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(_policy.MODEL_RETRY_DELAY_ENV, "soon")
    with pytest.raises(ConfigError, match="VERANDA_MODEL_RETRY_DELAY_S"):
        definitions.build_definitions()
