"""The clone is disposable: a phase re-run in a new pod (directory gone) recreates it from the
forge, gets the pack's instruction files back without committing them, and adopts red tests
already on the branch instead of paying for them again."""

import shutil

from tests.domain.conftest import TICKET, ScriptedAgent, reply, write
from tests.fixtures.context.gitrepo import git
from tests.fixtures.work.project import RED_TEST
from veranda_dagster.domain.context.layers import BEGIN
from veranda_dagster.domain.core.models import ContextLayer
from veranda_dagster.domain.work.red_tests import write_red_tests
from veranda_dagster.domain.work.turn import prepare, worktree_changes

NEW = "tests/test_slugify.py"


def test_red_tests_already_pushed_are_adopted_in_a_fresh_clone(project):
    agent = ScriptedAgent({"test_writer": [reply("done", write(NEW, RED_TEST))]})
    first = write_red_tests(TICKET, project.pack, project.workspace, agent)
    shutil.rmtree(project.repo)  # a new pod
    again = write_red_tests(TICKET, project.pack, project.workspace, ScriptedAgent())
    assert again.commit_sha == first.commit_sha and again.test_files == [NEW]
    assert again.attempts == 0 and again.calls == [] and not again.base_run.ok


def test_instruction_files_come_back_and_stay_out_of_commits(project):
    layer = ContextLayer(name="repo_facts", source="facts", text="make test runs pytest")
    pack = project.pack.model_copy(
        update={"layers": [layer], "instruction_files": ["CLAUDE.md", "AGENTS.md"]}
    )
    repo = prepare(project.workspace, pack)
    shutil.rmtree(repo)
    repo = prepare(project.workspace, pack)
    claude = (repo / "CLAUDE.md").read_text()
    assert BEGIN in claude and "make test runs pytest" in claude and "[R1]" in claude
    assert worktree_changes(project.workspace) == []
    assert git(repo, "status", "--porcelain") == ""
