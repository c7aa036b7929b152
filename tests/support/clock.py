"""A clock for single-threaded tests of code that waits: time moves only when the code under
test sleeps, so a test asserts on exact waits without spending them (``storage/sim_clock`` is
the threaded counterpart)."""

from __future__ import annotations


class SleepingClock:
    """Call it for the time; pass ``sleep`` as the code's sleep. ``sleeps`` lists every wait."""

    def __init__(self, start: float = 0.0) -> None:
        self.now = start
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
