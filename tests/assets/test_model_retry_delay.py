"""VERANDA_MODEL_RETRY_DELAY_S: parsed strictly, and read when the policies are built."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from veranda_dagster.assets import _policy
from veranda_dagster.domain.core.errors import ConfigError


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


def test_a_fresh_process_builds_model_policies_with_the_override() -> None:
    code = (
        "from veranda_dagster.assets._policy import PHASES\n"
        "import json\n"
        "print(json.dumps({n: [s.model, s.retry.delay] for n, s in PHASES.items()}))\n"
    )
    env = {**os.environ, _policy.MODEL_RETRY_DELAY_ENV: "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    delays = json.loads(out.stdout)
    assert {n for n, (model, delay) in delays.items() if model} == {
        n for n, (model, delay) in delays.items() if delay == 1
    }
    assert delays["ticket"] == [False, 5] and delays["patch"] == [True, 1]
