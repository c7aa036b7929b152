"""The product image, really built, and ``docker run`` command lines shaped like the run pods.

``docker``: an answering engine (``docker_engine``). ``images``: the product image (the
Dockerfile's default target) and its ``test`` target (the product plus pytest), built by
``deploy/docker/build-test-image.sh`` on a locally bootstrapped Debian base, since no registry
is reachable here. Without docker the tests skip, except under ``CI``, where they fail: a
skipped container step would hide exactly what it exists to show.

Measurements (build seconds, image sizes) go to ``tests/artifacts/container-image.json``, each
build's output to ``tests/artifacts/container-build-<target>-<xdist worker>.log``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import subprocess
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pytest

from tests.container.docker_engine import (
    BUILD_LOCK,
    DOCKER,
    INFO_TIMEOUT_S,
    LOCK_DIR,
    EngineUnavailable,
    docker_engine,
    flocked,
)

ROOT = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = ROOT / "deploy" / "docker" / "build-test-image.sh"
PROFILE = ROOT / "deploy" / "seccomp" / "veranda-bwrap.json"
ARTIFACT = ROOT / "tests" / "artifacts" / "container-image.json"
ARTIFACT_LOCK = LOCK_DIR / "veranda-container-tests.artifact.lock"
RUN_ID = os.environ.get("PYTEST_XDIST_TESTRUNUID") or f"pid-{os.getpid()}"
"""One id for every worker of one pytest run (xdist sets it), so their numbers merge."""
PRODUCT_IMAGE = "veranda-dagster:container-product"
TEST_IMAGE = "veranda-dagster:container-test"
BUILD_TIMEOUT_S = 1200.0
"""A fresh machine: debootstrap about 40 s, the base 20 s, the product 2-5 min (npm, PyPI)."""
IMAGE_UID = "10001"

SHIPPED = ("--security-opt", f"seccomp={PROFILE}", "--security-opt", "systempaths=unconfined")
"""What the run pods get (deploy/helm/values.yaml): the shipped seccomp profile, and an unmasked
/proc (Kubernetes: procMount: Unmasked with hostUsers: false)."""


def unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI: the container step must run; .ci/run installs docker.io)")
    pytest.skip(reason)


def pod_like(*security: str, tests_dir: Path | None = None) -> list[str]:
    """``docker run`` as the run pod's securityContext has it: the image's own non-root user,
    every capability dropped, no privilege escalation, a read-only root with writable
    emptyDir-like tmpfs mounts, no network (the tests need only loopback), the sandbox
    required; plus ``security``, the seccomp and /proc options under test."""
    argv = [
        DOCKER, "run", "--rm", "--network", "none",
        "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
        "--read-only",
        "--tmpfs", "/tmp:rw,exec,nosuid,nodev,size=512m",
        "--tmpfs", f"/home/veranda:rw,nosuid,nodev,uid={IMAGE_UID},gid={IMAGE_UID},size=64m",
        "--tmpfs", f"/work/workspaces:rw,nosuid,nodev,uid={IMAGE_UID},gid={IMAGE_UID}",
        "-e", "VERANDA_SANDBOX=bwrap", "-e", "CI=true",
        *security,
    ]  # fmt: skip
    if tests_dir is not None:
        argv += ["-v", f"{tests_dir}:/opt/veranda/tests:ro"]
    return argv


@dataclass
class Images:
    product: str
    test: str
    build_s: dict[str, float] = field(default_factory=dict)
    size_bytes: dict[str, int] = field(default_factory=dict)

    def record(self, **extra: object) -> None:
        """Merge this process's numbers into the artifact (several tests add theirs). Under
        xdist both workers build and the second finds every layer cached, so a build time
        already there is replaced only by a longer one: the real build's."""
        ARTIFACT.parent.mkdir(parents=True, exist_ok=True)
        with flocked(ARTIFACT_LOCK, fcntl.LOCK_EX, BUILD_TIMEOUT_S):
            current = json.loads(ARTIFACT.read_text()) if ARTIFACT.exists() else {}
            if current.get("run") != RUN_ID:  # an earlier session's numbers
                current = {"run": RUN_ID}
            build_s = {
                key: max(seconds, current.get("build_s", {}).get(key, 0.0))
                for key, seconds in self.build_s.items()
            }
            current.update(asdict(self), build_s=build_s, **extra)
            ARTIFACT.write_text(json.dumps(current, indent=2) + "\n")


@pytest.fixture(scope="session")
def docker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("dockerd") / "dockerd.log"
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(docker_engine(log))
        except EngineUnavailable as exc:
            unavailable(str(exc))
        yield DOCKER


def _build(target: str | None, tag: str) -> float:
    argv = [str(BUILD_SCRIPT), "--tag", tag, *(["--target", target] if target else [])]
    started = time.monotonic()
    try:
        proc = subprocess.run(
            argv,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{' '.join(argv)} took over {BUILD_TIMEOUT_S:.0f} s")
    ARTIFACT.parent.mkdir(parents=True, exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")  # the other worker's is cached
    log = ARTIFACT.parent / f"container-build-{target or 'product'}-{worker}.log"
    log.write_text(proc.stdout + proc.stderr)  # BuildKit's plain progress: each step's time
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(argv)} failed (all of it in {log}):\n{proc.stderr[-4000:]}")
    return round(time.monotonic() - started, 1)


def image_size(tag: str) -> int:
    out = subprocess.run(
        [DOCKER, "image", "inspect", "--format", "{{.Size}}", tag],
        capture_output=True,
        text=True,
        check=True,
        timeout=INFO_TIMEOUT_S,
    )
    return int(out.stdout.strip())


@pytest.fixture(scope="session")
def images(docker: str) -> Images:
    """Both targets, built once per session (the second xdist worker finds them cached)."""
    built = Images(product=PRODUCT_IMAGE, test=TEST_IMAGE)
    with flocked(BUILD_LOCK, fcntl.LOCK_EX, BUILD_TIMEOUT_S):
        built.build_s["product"] = _build(None, PRODUCT_IMAGE)
        built.build_s["test"] = _build("test", TEST_IMAGE)
    built.size_bytes = {tag: image_size(tag) for tag in (PRODUCT_IMAGE, TEST_IMAGE)}
    built.record()
    return built
