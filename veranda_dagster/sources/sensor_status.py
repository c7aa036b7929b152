"""Whether the sensors start on: off by default, on when the deployment says so.

Every sensor ships ``STOPPED``: a code location loaded by mistake (a laptop pointed at the
production Linear) must not start taking tickets. ``VERANDA_SENSORS=running`` in the code
location's environment turns them all on from the first load (``veranda dev`` sets it); a
person can also toggle each one in the UI (Automation), or ``dagster sensor start NAME``.
"""

from __future__ import annotations

import os

import dagster as dg

from veranda_dagster.domain.core.errors import ConfigError

SENSORS_ENV = "VERANDA_SENSORS"


def sensor_default_status() -> dg.DefaultSensorStatus:
    raw = os.environ.get(SENSORS_ENV, "").strip().lower()
    if raw in ("", "stopped", "off"):
        return dg.DefaultSensorStatus.STOPPED
    if raw in ("running", "on"):
        return dg.DefaultSensorStatus.RUNNING
    raise ConfigError(f"{SENSORS_ENV}={raw!r}: use 'running' or 'stopped'")
