"""How a repository declares its setup, as the facts reader finds it, and the registry config."""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path

import pytest

from veranda_dagster.domain.clone.repo_files import RepoFiles
from veranda_dagster.domain.context.facts import read_repo_facts
from veranda_dagster.domain.context.setup_facts import hinted_script, setup_declaration
from veranda_dagster.domain.core.errors import ConfigError, SetupError
from veranda_dagster.environment.cache import environment_dir, locked
from veranda_dagster.environment.defaults import MAX_DEFAULT_REQUIREMENTS, python_default
from veranda_dagster.environment.registries import MAX_REGISTRIES, load_registries


def _repo(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def test_a_setup_script_wins_over_a_devcontainer(tmp_path: Path) -> None:
    repo = _repo(
        tmp_path,
        {
            ".veranda/setup.sh": "pip install x\n",
            ".devcontainer/devcontainer.json": '{"postCreateCommand": "make deps"}',
        },
    )
    facts = read_repo_facts(repo)
    assert (facts.setup, facts.setup_source) == (["sh .veranda/setup.sh"], ".veranda/setup.sh")


def test_devcontainer_create_commands_in_the_spec_order(tmp_path: Path) -> None:
    devcontainer = """{
      // comments are allowed in devcontainer.json
      "image": "mcr.microsoft.com/devcontainers/python:3.11",
      "postCreateCommand": {"deps": "pip install -e .[dev]", "hooks": ["pre-commit", "install"]},
      "onCreateCommand": "npm ci"
    }"""
    repo = _repo(tmp_path, {".devcontainer/devcontainer.json": devcontainer})
    facts = read_repo_facts(repo)
    assert facts.setup == ["npm ci", "pip install -e .[dev]", "pre-commit install"]
    assert facts.setup_source == ".devcontainer/devcontainer.json"


def test_the_org_hints_file_can_name_a_script_in_the_repository(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"scripts/bootstrap.sh": "echo hi\n"})
    hints = "Use the bootstrap script.\nsetup: scripts/bootstrap.sh\n"
    assert read_repo_facts(repo, hints).setup == ["sh scripts/bootstrap.sh"]
    assert read_repo_facts(repo, hints).setup_source == "org hints"
    assert read_repo_facts(repo, "setup: scripts/missing.sh\n").setup == []
    for hostile in ("setup: ../../etc/passwd", "setup: /bin/evil", "setup: a;rm -rf /"):
        assert hinted_script(hostile) is None
    assert hinted_script("\n\n  setup:\tscripts/b.sh  \nmore") == "scripts/b.sh"  # indented
    assert hinted_script("setup:\nscripts/b.sh\n") is None  # the path on its own line


def test_a_linked_setup_script_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside.sh"
    outside.write_text("echo secret\n")
    repo = tmp_path / "repo"
    (repo / ".veranda").mkdir(parents=True)
    (repo / ".veranda" / "setup.sh").symlink_to(outside)
    assert setup_declaration(RepoFiles(repo)) == ([], "")


def test_python_default_installs_dependencies_and_dev_extras_not_the_project(
    tmp_path: Path,
) -> None:
    pyproject = """
[project]
name = "x"
dependencies = ["requests>=2"]
[project.optional-dependencies]
dev = ["pytest", "ruff==0.6.0"]
docs = ["sphinx"]
[dependency-groups]
test = ["hypothesis"]
"""
    repo = _repo(tmp_path, {"pyproject.toml": pyproject, "requirements-dev.txt": "mypy\n"})
    commands = python_default(RepoFiles(repo))
    assert commands[0] == 'python3 -m venv --without-pip "$VERANDA_ENV/venv"'
    assert commands[1] == (
        'python3 -m pip --python "$VERANDA_ENV/venv"/bin/python install '
        "'requests>=2' pytest ruff==0.6.0 hypothesis -r requirements-dev.txt"
    )


@pytest.mark.parametrize("count", [MAX_DEFAULT_REQUIREMENTS, MAX_DEFAULT_REQUIREMENTS + 1])
def test_python_default_installs_at_most_its_bound_of_requirements(
    tmp_path: Path, count: int
) -> None:
    """``MAX_DEFAULT_REQUIREMENTS``: a pyproject listing one requirement more than the bound
    installs the first ``MAX_DEFAULT_REQUIREMENTS`` (dependencies before dev extras); its twin,
    exactly the bound, installs every one."""
    names = [f"pkg{i:03d}" for i in range(count)]
    dependencies, dev = names[: count // 2], names[count // 2 :]
    pyproject = (
        f'[project]\nname = "x"\ndependencies = {json.dumps(dependencies)}\n'
        f"[project.optional-dependencies]\ndev = {json.dumps(dev)}\n"
    )
    repo = _repo(tmp_path, {"pyproject.toml": pyproject})
    install = python_default(RepoFiles(repo))[1]
    assert install.split(" install ", 1)[1].split() == names[:MAX_DEFAULT_REQUIREMENTS]


def test_registry_config_errors_name_the_setting() -> None:
    good = {"pypi": {"url": "https://pypi.org/simple/", "kind": "pypi"}}
    (registry,) = load_registries({"VERANDA_REGISTRIES": json.dumps(good)})
    assert (registry.url, registry.origin, registry.auth) == (
        "https://pypi.org/simple",
        "https://pypi.org",
        "",
    )
    cases = {
        "not json": "is not JSON",
        "[]": "must be a JSON object",
        '{"Bad Name": {"url": "https://x"}}': "'Bad Name' is not",
        '{"a": {"url": "ftp://x"}}': "url is not http(s)",
        '{"a": {"url": "https://u:p@x/simple"}}': "carries credentials",
        '{"a": {"url": "https://x", "kind": "maven"}}': "kind 'maven'",
        '{"a": {"url": "https://x", "auth_env": "UNSET_VAR_1"}}': "which is not set",
    }
    for raw, message in cases.items():
        with pytest.raises(ConfigError, match=re.escape(message)):
            load_registries({"VERANDA_REGISTRIES": raw})
    assert load_registries({}) == []


def test_waiting_for_another_ticket_is_bounded(tmp_path: Path) -> None:
    """``LOCK_WAIT_S`` (the ``wait_s`` it feeds, 0.3 s here) against a lock another ticket
    really holds: the wait ends at the bound with a typed ``SetupError`` naming it."""
    folder = environment_dir(tmp_path, "acme/app", "k" * 32)
    held, release = threading.Event(), threading.Event()

    def holder() -> None:
        with locked(folder):
            held.set()
            release.wait(10)

    thread = threading.Thread(target=holder)
    thread.start()
    try:
        assert held.wait(5)
        started = time.monotonic()
        refused = pytest.raises(SetupError, match=r"for over 0\.3s; not waiting longer")
        with refused, locked(folder, wait_s=0.3):
            pass
        assert 0.3 <= time.monotonic() - started < 0.3 + 2.0
    finally:
        release.set()
        thread.join(5)
    with locked(folder, wait_s=0.3):  # free again once the holder is done
        pass
    assert environment_dir(tmp_path, "acme/platform/billing", "k").parent.name == (
        "acme__platform__billing"  # a GitLab subgroup's project
    )
    for hostile in ("..", ".hidden/x", "a\x00b"):
        with pytest.raises(SetupError, match="cannot name"):
            environment_dir(tmp_path, hostile, "k")


@pytest.mark.parametrize(
    ("count", "refused"), [(MAX_REGISTRIES + 1, True), (MAX_REGISTRIES, False)]
)
def test_the_registry_allowance_holds_at_most_max_registries(count: int, refused: bool) -> None:
    """One registry past ``MAX_REGISTRIES`` is a configuration error naming the bound; its
    twin, exactly at the bound, loads every registry."""
    raw = json.dumps({f"r{n}": {"url": f"https://r{n}.example/simple"} for n in range(count)})
    if refused:
        with pytest.raises(
            ConfigError, match=f"lists {count} registries \\(max {MAX_REGISTRIES}\\)"
        ):
            load_registries({"VERANDA_REGISTRIES": raw})
    else:
        assert len(load_registries({"VERANDA_REGISTRIES": raw})) == MAX_REGISTRIES
