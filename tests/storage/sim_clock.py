"""A fake clock for threads: time stands still while any participant runs, and jumps to the
earliest wake-up once every participant is asleep (a discrete-event clock). So four threads
"run concurrently" without a real second passing, and nothing a thread does between two of its
own sleeps takes any time."""

from __future__ import annotations

import threading


class SimClock:
    def __init__(self, participants: int, start: float = 1_000_000.0) -> None:
        self.now = start
        self._active = participants
        self._wakes: list[float] = []
        self._cond = threading.Condition()
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        with self._cond:
            return self.now

    def _advance(self) -> None:
        if self._wakes and len(self._wakes) == self._active:
            self.now = max(self.now, min(self._wakes))
            self._cond.notify_all()

    def sleep(self, seconds: float) -> None:
        with self._cond:
            self.sleeps.append(seconds)
            wake = self.now + max(seconds, 0.0)
            self._wakes.append(wake)
            self._advance()
            while self.now < wake:
                self._cond.wait(timeout=5)
            self._wakes.remove(wake)

    def done(self) -> None:
        """A participant finished: the others no longer wait for it to sleep."""
        with self._cond:
            self._active -= 1
            self._advance()
