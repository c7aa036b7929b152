"""The setup step inside the pipeline: ``write_red_tests`` prepares the repository's declared
environment before its first red test, records what the setup did, and the red tests run with
the tool it installed (without it, their import would be a collection error and be rejected)."""

from __future__ import annotations

import pytest

from tests.domain.conftest import TICKET, ScriptedAgent, build_project, reply, write
from tests.environment.conftest import use_registries
from veranda_dagster.domain.clone.active_environment import setup_outcome
from veranda_dagster.domain.core.bounds import MAX_RED_TEST_ATTEMPTS
from veranda_dagster.domain.work.red_tests import RedTestsRejected, write_red_tests
from veranda_dagster.domain.work.validation import run_command
from veranda_dagster.sim.package_index import PackageIndex

SETUP = (
    # the project's own interpreter packages (pytest) stay visible; the tool comes from the index
    'python3 -m venv --without-pip --system-site-packages "$VERANDA_ENV/venv"\n'
    'python3 -m pip --python "$VERANDA_ENV/venv/bin/python" install hello-tool\n'
)
NEEDS_THE_TOOL = """\
import hello_tool

from app import text


def test_slugify_uses_the_tool():
    assert callable(hello_tool.main)
    assert text.slugify("A B") == "a-b"
"""
NEW = "tests/test_slugify_tool.py"


@pytest.fixture(autouse=True)
def _fast_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def test_red_tests_run_in_the_environment_the_setup_step_prepared(
    tmp_path, index: PackageIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_registries(monkeypatch, pypi={"url": index.base_url + "/simple", "kind": "pypi"})
    project = build_project(tmp_path, {".veranda/setup.sh": SETUP})
    assert project.pack.facts.setup == ["sh .veranda/setup.sh"]
    agent = ScriptedAgent({"test_writer": [reply("done", write(NEW, NEEDS_THE_TOOL))]})

    red = write_red_tests(TICKET, project.pack, project.workspace, agent)

    assert red.rejected == [] and red.test_files == [NEW]
    assert red.base_run.exit_code == 1 and "AttributeError" in red.base_run.output_tail
    assert red.setup is not None and red.setup.status == "ready"
    assert red.setup.source == ".veranda/setup.sh" and red.setup.duration_s > 0
    assert index.requests_to("/files/*")
    # a later phase of the same ticket finds the environment without running the setup again
    again = write_red_tests(TICKET, project.pack, project.workspace, agent)
    assert again.setup is not None and again.setup.status == "cached"
    assert run_command("hello-tool", project.repo).ok


def test_a_repository_without_a_declaration_says_what_is_missing(tmp_path) -> None:
    """No declaration and no registry: the outcome names what is missing, and tests that need
    a tool the image lacks are rejected for that reason, not run against a guess."""
    project = build_project(tmp_path)
    script = [reply("done", write(NEW, NEEDS_THE_TOOL))] * MAX_RED_TEST_ATTEMPTS
    agent = ScriptedAgent({"test_writer": script})
    with pytest.raises(RedTestsRejected, match="import error at collection"):
        write_red_tests(TICKET, project.pack, project.workspace, agent)
    outcome = setup_outcome(project.repo)
    assert outcome is not None and outcome.status == "none"
    assert "no setup declared" in outcome.missing and "VERANDA_REGISTRIES" in outcome.missing
