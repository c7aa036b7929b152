"""``benchmarks/cpu_meter.py`` counts the CPU of processes in their own pid namespace.

The pack's git runs in bubblewrap with ``--unshare-pid``; rusage never sees that CPU, so the
benchmark measured a fraction of the pack. A control group sees it.
"""

from __future__ import annotations

import shutil
import sys

import pytest

from tests.benchmarks.scripts import load_script

meter = load_script("cpu_meter")
BURN = [sys.executable, "-c", "sum(range(6_000_000))"]


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_a_command_in_its_own_pid_namespace_is_counted() -> None:
    if meter._group_root() is None:
        pytest.skip("this machine lets no control group be made (not root, no cgroup fs)")
    plain = meter.measure(BURN)
    sandboxed = meter.measure(
        ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--", *BURN]
    )
    assert plain.method == sandboxed.method == "cgroup"
    assert plain.cpu_seconds > 0.05
    assert sandboxed.cpu_seconds > plain.cpu_seconds / 2  # rusage would say about zero
    assert sandboxed.peak_rss_mb > 0


def test_a_failing_command_is_an_error_naming_it() -> None:
    with pytest.raises(RuntimeError, match="exited 3"):
        meter.measure([sys.executable, "-c", "import sys; sys.exit(3)"])
