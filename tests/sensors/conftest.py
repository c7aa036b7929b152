"""Sensor tests share one wiped test instance per module (``test_dedup`` keeps its own)."""

from tests.support.sensor_instance import _shared_instance, instance

__all__ = ["_shared_instance", "instance"]
