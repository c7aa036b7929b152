"""The image, built and run for real: bubblewrap works inside it under the shipped seccomp
profile, and only because of it.

Issue 30: nothing the repository or the agent writes may run outside the sandbox, and the image
requires it (``VERANDA_SANDBOX=bwrap``, fail closed). A container is not a machine: Docker's
default seccomp profile (Kubernetes' ``RuntimeDefault``) refuses bubblewrap's namespaces, and
Docker's masked ``/proc`` paths make its fresh procfs fail. So the run pods get
``deploy/seccomp/veranda-bwrap.json`` and an unmasked ``/proc``, and these tests run the
hostile-repository suite (``tests/sandbox``) inside the image under exactly that, as the pod's
non-root user with every capability dropped, never ``--privileged`` or ``seccomp=unconfined``.
The negative cases prove each piece is needed: without the profile, without the unmasked
``/proc``, and without any one of the syscalls the profile adds, the sandbox does not start.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.container.conftest import IMAGE_UID, PROFILE, ROOT, SHIPPED, Images, pod_like
from tests.container.docker_engine import DOCKER

pytestmark = pytest.mark.container

RUN_TIMEOUT_S = 120.0
"""One probe container: starting it and an empty sandbox take about a second."""
SUITE_TIMEOUT_S = 900.0
"""The hostile-repository suite inside the container (about half a minute)."""

SELF_TEST = (
    "import sys; from veranda_dagster.sandbox import Sandbox; "
    "reason = Sandbox(mode='bwrap').unavailable(); print(reason or 'SANDBOX_OK'); "
    "sys.exit(1 if reason else 0)"
)
"""The product's own check, with its own bubblewrap command line (``bwrap_works``)."""
TINY_BWRAP = [
    "bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--hostname", "probe",
    "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
    "--symlink", "usr/lib64", "/lib64", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
    "--", "/bin/sh", "-c", "echo pid=$$ uid=$(id -u) init=$(cat /proc/1/comm)",
]  # fmt: skip
"""A minimal sandbox: new namespaces of every kind and a fresh procfs. Inside its own pid
namespace the shell is pid 2 and pid 1 is bwrap's init, not the container's tini."""


def run(argv: list[str], timeout_s: float = RUN_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL
    )


def self_test(image: str, *security: str) -> subprocess.CompletedProcess[str]:
    return run([*pod_like(*security), image, "python", "-c", SELF_TEST])


def _make_profile() -> Any:
    spec = importlib.util.spec_from_file_location(
        "make_profile", ROOT / "deploy" / "seccomp" / "make_profile.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BWRAP_SYSCALLS = sorted(_make_profile().BWRAP_SYSCALLS)


def test_the_product_image_requires_the_sandbox_and_carries_no_test_deps(images: Images) -> None:
    config = json.loads(run([DOCKER, "image", "inspect", images.product]).stdout)[0]["Config"]
    env = dict(item.split("=", 1) for item in config["Env"])
    assert env["VERANDA_SANDBOX"] == "bwrap"
    assert env["DAGSTER_HOME"] == "/var/lib/veranda/dagster_home"
    assert config["User"].split(":")[0] == IMAGE_UID
    check = (
        "import importlib.util as u, shutil; "
        "print([m for m in ('pytest', 'xdist') if u.find_spec(m)], "
        "[t for t in ('bwrap', 'git', 'node', 'claude', 'codex', 'grok', 'chromium') "
        "if shutil.which(t)])"
    )
    out = run([*pod_like(*SHIPPED), images.product, "python", "-c", check])
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[] ['bwrap', 'git', 'node', 'claude', 'codex', 'grok']"


def test_the_sandbox_starts_in_the_container_under_the_shipped_profile(images: Images) -> None:
    product = self_test(images.product, *SHIPPED)
    assert product.returncode == 0 and product.stdout.strip() == "SANDBOX_OK", product.stderr
    tiny = run([*pod_like(*SHIPPED), images.product, *TINY_BWRAP])
    assert tiny.returncode == 0, tiny.stderr
    assert re.fullmatch(rf"pid=2 uid={IMAGE_UID} init=bwrap", tiny.stdout.strip()), tiny.stdout


def test_docker_default_seccomp_refuses_bubblewrap(images: Images) -> None:
    """The same container with Docker's default profile: the profile is what makes it work."""
    out = self_test(images.product, "--security-opt", "systempaths=unconfined")
    assert out.returncode != 0
    assert "No permissions to create new namespace" in out.stdout, out.stdout + out.stderr


def test_masked_proc_refuses_bubblewrap_even_with_the_profile(images: Images) -> None:
    """Docker masks paths under /proc; the kernel then refuses a new procfs in the sandbox."""
    out = self_test(images.product, "--security-opt", f"seccomp={PROFILE}")
    assert out.returncode != 0
    assert "Can't mount proc" in out.stdout, out.stdout + out.stderr


@pytest.mark.parametrize("syscall", BWRAP_SYSCALLS)
def test_every_syscall_the_profile_adds_is_needed(
    images: Images, syscall: str, tmp_path: Path
) -> None:
    profile = json.loads(PROFILE.read_text())
    added = profile["syscalls"][-1]
    assert syscall in added["names"] and added["comment"].startswith("veranda:")
    added["names"].remove(syscall)
    without = tmp_path / f"without-{syscall}.json"
    without.write_text(json.dumps(profile))
    out = self_test(
        images.product,
        "--security-opt",
        f"seccomp={without}",
        "--security-opt",
        "systempaths=unconfined",
    )
    assert out.returncode != 0, f"bubblewrap started without {syscall}: drop it from the profile"


def test_the_hostile_repository_tests_pass_inside_the_container(images: Images) -> None:
    """``tests/sandbox`` and the setup step's tests (``tests/environment``: the registry proxy,
    the bounds, the cache, the private credential) as the pod runs them."""
    argv = [
        *pod_like(*SHIPPED, tests_dir=ROOT / "tests"),
        "--workdir", "/opt/veranda",
        images.test,
        "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", "-rA",
        "tests/sandbox", "tests/environment",
    ]  # fmt: skip
    started = time.monotonic()
    out = run(argv, timeout_s=SUITE_TIMEOUT_S)
    elapsed = round(time.monotonic() - started, 1)
    summary = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else ""
    images.record(suite_in_container_s=elapsed, suite_summary=summary)
    assert out.returncode == 0, (out.stdout + out.stderr)[-6000:]
    # nothing skipped, failed or in error: only passes (and maybe warnings)
    assert re.fullmatch(r"=* ?\d+ passed(, \d+ warnings?)? in .*", summary), summary
    assert "PASSED tests/sandbox/test_sandbox.py::test_bubblewrap_works_here" in out.stdout
