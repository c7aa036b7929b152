"""``write_red_tests`` on a real repository: tests that really fail on the base are committed
and pushed; tests that pass, or break on import, are rejected, reverted and retried."""

import re

import pytest

from tests.domain.conftest import TICKET, ScriptedAgent, reply, write
from tests.fixtures.work.project import (
    COLLECTION_IMPORT_ERROR_TEST,
    PASSING_TEST,
    RED_TEST,
    RUNTIME_IMPORT_ERROR_TEST,
)
from veranda_dagster.domain.core.bounds import MAX_RED_TEST_ATTEMPTS
from veranda_dagster.domain.core.models import CommandResult
from veranda_dagster.domain.work.red_tests import RedTestsRejected, judge, write_red_tests

NEW = "tests/test_slugify.py"


def test_red_tests_fail_on_the_base_and_are_pushed(project):
    agent = ScriptedAgent({"test_writer": [reply("done", write(NEW, RED_TEST))]})
    red = write_red_tests(TICKET, project.pack, project.workspace, agent)
    assert red.test_files == [NEW] and red.attempts == 1 and red.rejected == []
    assert red.base_run.exit_code == 1 and "AttributeError" in red.base_run.output_tail
    assert red.commit_sha == project.remote_sha() != project.pack.base_sha
    assert project.show(red.commit_sha, NEW) == RED_TEST.rstrip("\n")
    (request,) = agent.requests
    assert (request.role, request.tier, request.workdir) == (
        "test_writer",
        "standard",
        str(project.repo),
    )
    assert "ENG-7" in request.prompt and "[R1] app/text.py lines 4-5" in request.prompt
    assert [c.role for c in red.calls] == ["test_writer"] and red.usd == 0.01


def test_passing_and_import_error_tests_are_rejected_then_retried(project):
    agent = ScriptedAgent(
        {
            "test_writer": [
                reply("1", write(NEW, PASSING_TEST)),
                reply("2", write("tests/test_slugs.py", COLLECTION_IMPORT_ERROR_TEST)),
                reply("3", write(NEW, RED_TEST)),
            ]
        }
    )
    red = write_red_tests(TICKET, project.pack, project.workspace, agent)
    assert red.attempts == 3 and red.test_files == [NEW]
    assert "pass on the base" in red.rejected[0]
    assert "exit 2: an import error at collection" in red.rejected[1]
    # rejected files were reverted: only the accepted test is in the commit
    assert project.workspace.changed_files(project.pack.base_sha) == [NEW]
    assert not (project.repo / "tests/test_slugs.py").exists()
    # each retry's prompt carries the reasons so far
    assert "pass on the base" in agent.requests[1].prompt
    assert "import error" in agent.requests[2].prompt


def test_exhausted_attempts_raise_with_every_reason(project):
    script = [
        reply("a", write(NEW, RUNTIME_IMPORT_ERROR_TEST)),
        reply("b", write("app/text.py", "def slugify(s):\n    return s\n", append=True)),
        reply("c"),
    ]
    agent = ScriptedAgent({"test_writer": script})
    with pytest.raises(RedTestsRejected) as err:
        write_red_tests(TICKET, project.pack, project.workspace, agent)
    reasons = err.value.reasons
    assert len(reasons) == MAX_RED_TEST_ATTEMPTS == len(agent.requests)
    assert "import of app.helpers_typo the ticket does not ask to create" in reasons[0]
    assert "changed code, not only tests: app/text.py" in reasons[1]
    assert "no test files" in reasons[2]
    assert project.workspace.head_sha() == project.pack.base_sha
    assert "slugify" not in (project.repo / "app/text.py").read_text()


def _run(code: int | None, out: str, timed_out: bool = False) -> CommandResult:
    return CommandResult(command="pytest", exit_code=code, timed_out=timed_out, output_tail=out)


@pytest.mark.parametrize(
    ("code", "out", "verdict"),
    [
        (1, "E   AssertionError: assert 'a' == 'b'", None),
        (1, "AttributeError: module 'app.text' has no attribute 'slugify'", None),
        (0, "1 passed", "pass on the base"),
        (2, "ImportError while importing test module", "exit 2: an import error"),
        (4, "usage", "exit 4: a usage error"),
        (5, "no tests ran", "collected no tests"),
        (1, "E     File 'x.py'\nSyntaxError: invalid syntax", "SyntaxError"),
        (1, "ModuleNotFoundError: No module named 'requests'", "import of requests"),
        (None, "", "hung"),
    ],
)
def test_judge_table(code, out, verdict):
    result = judge(_run(code, out, timed_out=code is None), TICKET, pytest=True)
    assert result is None if verdict is None else verdict in result


def test_a_missing_module_the_ticket_asks_to_create_is_the_right_failure():
    ticket = TICKET.model_copy(update={"description": "Create app/slugs.py with slugify()."})
    out = "ModuleNotFoundError: No module named 'app.slugs'"
    assert judge(_run(1, out), ticket, pytest=True) is None
    assert "app.slugs" in (judge(_run(1, out), TICKET, pytest=True) or "")


def test_a_hung_base_run_is_killed_at_the_given_bound_and_rejected(project):
    hanging = "import time\n\n\ndef test_waits_forever() -> None:\n    time.sleep(600)\n"
    agent = ScriptedAgent(
        {"test_writer": [reply("1", write(NEW, hanging)), reply("2", write(NEW, RED_TEST))]}
    )
    # 5 s, not 1 s: the second attempt's real run must finish inside the same bound, and a
    # sandboxed pytest start-up on two loaded cores can take more than a second.
    red = write_red_tests(TICKET, project.pack, project.workspace, agent, validation_timeout_s=5)
    assert red.attempts == 2 and red.base_run.exit_code == 1
    (reason,) = red.rejected
    # The duration is measured, so under load it may read 6.3s: assert the whole sentence and
    # that the reported time is at least the 5 s bound, not its first digit.
    said = re.fullmatch(
        r"attempt 1: the tests hung on the base \(killed at the bound after (\d+\.\d)s\)", reason
    )
    assert said and 5.0 <= float(said[1]) < 60
    assert "hung on the base" in agent.requests[1].prompt
