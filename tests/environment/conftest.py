"""A repository that declares its setup, a loopback index of wheels the test makes, and the
sandbox required (``VERANDA_SANDBOX=bwrap``): every setup here runs in bubblewrap for real."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from veranda_dagster.sim.package_index import PackageIndex, make_wheel

TOOL_MODULE = """\
import sys


def main() -> None:
    print("veranda-hello-tool ok", *sys.argv[1:])
"""


@pytest.fixture(autouse=True)
def _sandbox_required(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("VERANDA_SANDBOX", "bwrap")
    monkeypatch.setenv("VERANDA_ENV_CACHE", str(tmp_path / "env-cache"))
    monkeypatch.delenv("VERANDA_REGISTRIES", raising=False)


@pytest.fixture
def wheels(tmp_path: Path) -> Path:
    folder = tmp_path / "wheels"
    make_wheel(
        folder,
        "hello-tool",
        "1.0",
        {"hello_tool.py": TOOL_MODULE},
        console_scripts={"hello-tool": "hello_tool:main"},
    )
    return folder


@pytest.fixture
def index(wheels: Path) -> Iterator[PackageIndex]:
    with PackageIndex(wheels) as served:
        yield served


def use_registries(monkeypatch: pytest.MonkeyPatch, **registries: dict[str, str]) -> None:
    monkeypatch.setenv("VERANDA_REGISTRIES", json.dumps(registries))


def make_repo(root: Path, setup_sh: str | None, name: str = "repo") -> Path:
    repo = root / name
    (repo / "pkg").mkdir(parents=True)
    (repo / "pyproject.toml").write_text('[project]\nname = "pkg"\nversion = "0"\n')
    (repo / "pkg" / "__init__.py").write_text("")
    if setup_sh is not None:
        (repo / ".veranda").mkdir()
        (repo / ".veranda" / "setup.sh").write_text(setup_sh)
    return repo


VENV_INSTALL = (
    'python3 -m venv --without-pip "$VERANDA_ENV/venv"\n'
    'python3 -m pip --python "$VERANDA_ENV/venv/bin/python" install hello-tool\n'
)
"""A setup script as a repository writes one: a venv with its tool from the index."""
