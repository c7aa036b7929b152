"""``implement`` on a real repository: red tests go green with the repo's own ``make test`` and
``make lint`` passing; the independent test writer's failing test is a defect that goes back to
the implementer; coverage is measured before and after; attempts are bounded."""

import pytest

from tests.domain.conftest import TICKET, ScriptedAgent, reply, write
from tests.fixtures.work.project import (
    BASE_FILES,
    EDGE_TEST,
    RED_TEST,
    SLUGIFY_NAIVE,
    SLUGIFY_OK,
    SLUGIFY_WRONG,
)
from veranda_dagster.domain.core.bounds import MAX_PATCH_ATTEMPTS
from veranda_dagster.domain.core.models import CommandResult, RedTests, RepoFacts
from veranda_dagster.domain.work.patch import (
    MAX_SUMMARY_CHARS,
    PatchFailed,
    implement,
    parse_coverage_total,
)
from veranda_dagster.domain.work.prompts import (
    MAX_PROMPT_SECTION_BYTES,
    RED_OUTPUT_PROMPT_BYTES,
    implementer_prompt,
)
from veranda_dagster.domain.work.turn import commit_and_push

RED = "tests/test_slugify.py"
TEXT = BASE_FILES["app/text.py"]


def red_on_branch(project) -> RedTests:
    """The red phase's output, committed on the branch as write_red_tests leaves it."""
    ws = project.workspace
    ws.ensure()
    (ws.path / RED).write_text(RED_TEST)
    sha = commit_and_push(ws, [RED], "test: red", "red_tests")
    run = CommandResult(command="pytest", exit_code=1, output_tail="AttributeError: slugify")
    return RedTests(
        ticket_id=TICKET.id,
        branch=ws.branch,
        base_sha=project.pack.base_sha,
        commit_sha=sha,
        test_files=[RED],
        base_run=run,
        attempts=1,
    )


def test_green_after_the_independent_tests_reveal_a_defect(project):
    red = red_on_branch(project)
    agent = ScriptedAgent(
        {
            "implementer": [
                reply(
                    "Naive slugify in app/text.py:4 [R1].",
                    write("app/text.py", TEXT + SLUGIFY_NAIVE),
                ),
                reply("Split on whitespace; see [R1].", write("app/text.py", TEXT + SLUGIFY_OK)),
            ],
            "second_test_writer": [
                reply("edge cases", write("tests/test_slug_edges.py", EDGE_TEST))
            ],
        }
    )
    patch = implement(TICKET, project.pack, red, project.workspace, agent)
    assert agent.roles() == ["implementer", "second_test_writer", "implementer"]
    assert patch.attempts == 2
    assert [c.role for c in patch.calls] == agent.roles()
    assert {c.tier for c in patch.calls if c.role == "implementer"} == {"high"}
    # the defect went back to the implementer with the failing output
    retry = agent.requests[2].prompt
    assert "independent tester's new tests fail" in retry and "test_slug_edges.py" in retry
    # the second seat got a fresh prompt: the diff, not the implementer's transcript
    seat = agent.requests[1].prompt
    assert "+def slugify" in seat and "Naive slugify" not in seat
    assert patch.extra_test_files == ["tests/test_slug_edges.py"]
    assert [r.command for r in patch.validation] == [
        f"python -m pytest -q -p no:cacheprovider {RED}",
        "make lint",
        "make test",
        "python -m pytest -q -p no:cacheprovider tests/test_slug_edges.py",
    ]
    assert all(r.ok for r in patch.validation)
    # committed and pushed: the forge has the fix and both tests
    assert patch.commit_sha == project.remote_sha()
    assert "split()" in project.show(patch.commit_sha, "app/text.py")
    assert sorted(patch.files_changed) == ["app/text.py", "tests/test_slug_edges.py"]
    assert patch.summary == "Split on whitespace; see [R1]."
    # coverage measured by the repo's own `make coverage`: 3 of 4 lines before, 5 of 6 after
    assert patch.coverage_before == 75.0
    assert patch.coverage_after == pytest.approx(83.3)


def test_attempts_are_bounded_and_edited_red_tests_are_restored(project):
    red = red_on_branch(project)
    pack = project.pack.model_copy(update={"facts": RepoFacts()})
    agent = ScriptedAgent(
        {
            "implementer": [
                reply("weakened", write(RED, "def test_nothing():\n    assert True\n")),
                reply("wrong", write("app/text.py", TEXT + SLUGIFY_WRONG)),
            ]
        },
        default={"implementer": reply("still wrong")},
    )
    with pytest.raises(PatchFailed) as err:
        implement(TICKET, pack, red, project.workspace, agent)
    assert err.value.attempts == MAX_PATCH_ATTEMPTS == len(agent.requests)
    assert "You edited the red tests tests/test_slugify.py; they were restored" in (
        agent.requests[1].prompt
    )
    assert (project.repo / RED).read_text() == RED_TEST
    assert "AssertionError" in agent.requests[2].prompt
    assert project.remote_sha() == red.commit_sha  # nothing failing was pushed


def test_a_branch_without_the_red_commit_is_refused(project):
    red = red_on_branch(project).model_copy(update={"commit_sha": "0" * 40})
    with pytest.raises(Exception, match="does not contain the red tests commit"):
        implement(TICKET, project.pack, red, project.workspace, ScriptedAgent())


@pytest.mark.parametrize(
    ("output", "total"),
    [
        ("Name  Stmts  Miss  Cover\napp.py 10 2 80%\nTOTAL    40    4    90%\n", 90.0),
        ("ok  example.com/x  0.01s  coverage: 71.4% of statements\n", 71.4),
        ("All files |   85.5 |   70 |\n", 85.5),
        ("no numbers here", None),
    ],
)
def test_coverage_totals_of_common_tools(output, total):
    assert parse_coverage_total(output) == total


def test_a_summary_past_its_bound_is_kept_cut_exactly_at_it(project):
    """``MAX_SUMMARY_CHARS``: an implementer that closes with its whole transcript leaves a
    summary of exactly the bound for the PR body; its twin, a summary of exactly the bound, is
    kept whole."""
    pack = project.pack.model_copy(update={"facts": RepoFacts()})
    at_bound = ("Split on whitespace; see [R1]. " * (MAX_SUMMARY_CHARS // 31 + 1))[
        :MAX_SUMMARY_CHARS
    ]
    for summary in (at_bound + " and then the whole transcript", at_bound):
        red = red_on_branch(project)
        agent = ScriptedAgent(
            {"implementer": [reply(summary, write("app/text.py", TEXT + SLUGIFY_OK))]},
            default={"second_test_writer": reply("nothing to add")},
        )
        patch = implement(TICKET, pack, red, project.workspace, agent)
        assert patch.summary == at_bound


@pytest.mark.parametrize(
    ("case", "problems", "kept"),
    [
        (
            "one byte past",
            "x" + "y" * MAX_PROMPT_SECTION_BYTES,
            "…" + "y" * MAX_PROMPT_SECTION_BYTES,
        ),
        ("twin: at the bound", "y" * MAX_PROMPT_SECTION_BYTES, "y" * MAX_PROMPT_SECTION_BYTES),
        # a cut inside a two-byte character drops the half, never decodes garbage
        ("adversarial: a split character", "é" * MAX_PROMPT_SECTION_BYTES + "!", None),
    ],
)
def test_a_feedback_section_is_cut_to_its_tail_at_its_bound(project, case, problems, kept):
    """``MAX_PROMPT_SECTION_BYTES``: the previous attempt's failures in the implementer's prompt
    keep their last ``MAX_PROMPT_SECTION_BYTES`` bytes (where it broke); at the bound, whole."""
    prompt = implementer_prompt(TICKET, project.pack, [RED], "AssertionError", problems)
    section = prompt.split("Fix this:\n", 1)[1]
    if kept is None:
        kept = "…" + "é" * (MAX_PROMPT_SECTION_BYTES // 2 - 1) + "!"
        assert len(kept[1:].encode()) == MAX_PROMPT_SECTION_BYTES - 1
    assert section.startswith(kept + "\n"), case


def test_the_red_output_in_the_implementers_prompt_is_cut_at_its_bound(project):
    """``RED_OUTPUT_PROMPT_BYTES``: the red tests' output keeps its tail of exactly the bound."""
    output = "head " + "z" * RED_OUTPUT_PROMPT_BYTES
    prompt = implementer_prompt(TICKET, project.pack, [RED], output, "")
    assert f"fail like this:\n…{'z' * RED_OUTPUT_PROMPT_BYTES}\n" in prompt
    assert "head" not in prompt.split("fail like this:", 1)[1]
