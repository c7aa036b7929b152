"""``veranda demo --agent sim`` inside the built image, to a green CI outcome.

Issue 36: the image holds the product, the vendor CLIs, the sandbox and git, not any
repository's tools. The sample repository (``acme/billing``) needs pytest and ruff; its own
``.veranda/setup.sh`` installs them, in the sandbox, from a loopback simple index serving wheels
this test prepares (downloaded once on the host, where PyPI is reachable), through the registry
proxy, as the pod's non-root user under the shipped seccomp profile with no network but
loopback. The same image without a registry configured cannot get them, and says so.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.container.conftest import IMAGE_UID, SHIPPED, Images, pod_like

pytestmark = pytest.mark.container

DEMO_TIMEOUT_S = 600.0
"""The demo takes about a minute in the image (the setup step's install included)."""
DOWNLOAD_TIMEOUT_S = 300.0
TOOLS = ("pytest", "ruff")

DEMO = r"""
set -e
python -m veranda_dagster.sim.package_index /wheels > /tmp/index.url 2> /tmp/index.log &
for _ in $(seq 100); do [ -s /tmp/index.url ] && break; sleep 0.1; done
url="$(cat /tmp/index.url)"
if [ "$WITH_INDEX" = 1 ]; then
  export VERANDA_REGISTRIES="{\"pypi\": {\"url\": \"${url%/}\", \"kind\": \"pypi\"}}"
fi
python -c 'import importlib.util as u; assert not u.find_spec("pytest") and not u.find_spec("ruff")'
veranda demo --agent sim --json --workdir /tmp/demo
echo "ENVIRONMENTS:" $(ls /var/cache/veranda/environments/acme__billing/*/venv/bin/ 2>/dev/null) >&2
"""


@pytest.fixture(scope="session")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("wheels")
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:",
         "--python-version", "3.11", "--platform", "manylinux2014_x86_64",
         "--dest", str(folder), *TOOLS],
        check=True, timeout=DOWNLOAD_TIMEOUT_S, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    folder.chmod(0o755)
    for wheel in folder.iterdir():
        wheel.chmod(0o644)
    return folder


def _demo(images: Images, wheels: Path, with_index: bool) -> subprocess.CompletedProcess[str]:
    argv = [
        *pod_like(*SHIPPED),
        "--tmpfs", f"/var/cache/veranda:rw,exec,nosuid,nodev,uid={IMAGE_UID},gid={IMAGE_UID}",
        "-v", f"{wheels}:/wheels:ro",
        "-e", f"WITH_INDEX={int(with_index)}",
        images.product, "sh", "-c", DEMO,
    ]  # fmt: skip
    return subprocess.run(
        argv, capture_output=True, text=True, timeout=DEMO_TIMEOUT_S, stdin=subprocess.DEVNULL
    )


def test_the_demo_runs_green_in_the_image_with_tools_from_the_setup_step(
    images: Images, wheels: Path
) -> None:
    out = _demo(images, wheels, with_index=True)
    assert out.returncode == 0, (out.stdout + out.stderr)[-6000:]
    summary = json.loads(out.stdout)
    assert summary["ci"] == "success", summary
    assert {a["status"] for a in summary["assets"].values()} == {"materialized"}
    assert summary["pr_url"].endswith("/acme/billing/pull/1")
    installed = out.stderr.rsplit("ENVIRONMENTS:", 1)[-1].split()
    assert {"pytest", "ruff"} <= set(installed), out.stderr[-2000:]
    images.record(demo_in_image="success")


def test_without_a_registry_the_sample_cannot_get_its_tools_and_says_why(
    images: Images, wheels: Path
) -> None:
    out = _demo(images, wheels, with_index=False)
    assert out.returncode != 0
    text = out.stdout + out.stderr
    assert "setup of .veranda/setup.sh exited" in text, text[-4000:]
