"""Whether a piece of work grows faster than its input: the measurement the linearity tests
share (every product pattern, every entry point that parses hostile text).

Each worst shape is run at a small size and eight times that; linear work grows 8x, quadratic
64x, so eight times the text may cost at most ``MAX_GROWTH`` times the CPU once the large run is
measurable. The time is the thread's CPU with the cyclic collector paused: wall time counts
whatever else the machine runs, and a collection falls wherever the allocation count happens to
cross its threshold (it once made 64 kB of paragraphs look 34x dearer than 8 kB). A failing
shape is measured again, best of several, before it is reported: a loaded machine's noise.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterable

GROWTH_TEXT = 8
MAX_GROWTH = 24.0
"""Linear work grows 8x with eight times the text, quadratic 64x; headroom for a loaded machine."""


def fill(unit: str, size: int) -> str:
    """``unit`` repeated to exactly ``size`` characters."""
    return (unit * (size // len(unit) + 1))[:size]


def cpu(run: Callable[[str], object], text: str) -> float:
    """CPU seconds of ``run(text)`` on this thread, the cyclic collector paused."""
    gc.disable()
    try:
        started = time.thread_time()
        run(text)
        return time.thread_time() - started
    finally:
        gc.enable()


def superlinear(
    run: Callable[[str], object],
    shapes: Iterable[str],
    small_chars: int,
    measurable_s: float,
    floor_s: float,
) -> list[str]:
    """The shapes whose eight-fold text cost ``run`` more than ``MAX_GROWTH`` times the CPU,
    each as ``'unit': 8x the text cost Nx``; a large run under ``measurable_s`` is too fast to
    judge, and a small run counts at least ``floor_s`` (the timer's noise)."""
    problems = []
    for unit in shapes:
        small = fill(unit, small_chars)
        spent = cpu(run, small * GROWTH_TEXT)
        if spent < measurable_s:
            continue
        growth = spent / max(cpu(run, small), floor_s)
        if growth > MAX_GROWTH:  # measured again only when it fails
            spent = min(spent, cpu(run, small * GROWTH_TEXT))
            growth = spent / max(min(cpu(run, small) for _ in range(3)), floor_s)
        if growth > MAX_GROWTH:
            problems.append(f"{unit!r}: 8x the text cost {growth:.0f}x")
    return problems
