"""Each source's intake sensor test shares one wiped test instance per module."""

from tests.support.sensor_instance import _shared_instance, instance

__all__ = ["_shared_instance", "instance"]
