"""``review_rounds``: a simplify pass, then fix-and-re-review bounded at five rounds, stopping
early when the reviewer's strict JSON says nothing is left."""

import json

from tests.domain.conftest import BRANCH, TICKET, FakeForge, ScriptedAgent, reply, write
from tests.fixtures.work.project import BASE_FILES, SLUGIFY_OK
from veranda_dagster.domain.core.bounds import MAX_REVIEW_ROUNDS
from veranda_dagster.domain.core.models import PullRequest
from veranda_dagster.domain.deliver.progress import (
    MAX_MARKER_FINDING_CHARS,
    MAX_MARKER_FINDINGS,
    read_markers,
)
from veranda_dagster.domain.deliver.review import PROGRESS_KIND, parse_findings, review_rounds
from veranda_dagster.domain.work.turn import commit_and_push

FINDING = '{"findings": [{"path": "app/text.py", "line": 12, "message": "no docstring"}]}'


def _pr(project) -> PullRequest:
    ws = project.workspace
    ws.ensure()
    (ws.path / "app/text.py").write_text(BASE_FILES["app/text.py"] + SLUGIFY_OK)
    sha = commit_and_push(ws, ["app/text.py"], "feat", "patch")
    return PullRequest(
        ticket_id=TICKET.id, number=100, url="u", title="t", body="b", branch=BRANCH, head_sha=sha
    )


def test_five_rounds_then_stopped_at_the_bound(project):
    pr, forge = _pr(project), FakeForge()
    agent = ScriptedAgent(
        {"implementer": [reply("done", write("app/text.py", "# reviewed\n", append=True))]},
        default={
            "simplifier": reply("nothing to simplify"),
            "reviewer": reply(FINDING),
            "implementer": reply("tried"),
        },
    )
    result = review_rounds(TICKET, project.pack, pr, project.workspace, agent, forge)
    assert result.stopped == "bound" and len(result.rounds) == MAX_REVIEW_ROUNDS == 5
    assert agent.roles() == ["simplifier"] + ["reviewer", "implementer"] * 5
    assert [r.index for r in result.rounds] == [1, 2, 3, 4, 5]
    assert all(r.findings == ["app/text.py:12: no docstring"] for r in result.rounds)
    assert [r.fixed for r in result.rounds] == [True, False, False, False, False]
    assert result.rounds[0].commit_sha == project.remote_sha() == result.head_sha
    assert all(r.usd == 0.02 for r in result.rounds) and result.usd == 0.11
    assert "already raised and addressed" in agent.requests[3].prompt
    assert "stopped at the bound of 5" in forge.posted[-1][1]


def test_stops_clean_and_a_breaking_simplification_is_reverted(project):
    pr, forge = _pr(project), FakeForge()
    agent = ScriptedAgent(
        {
            "simplifier": [
                reply("simpler", write("app/text.py", "def slugify(s):\n    return s\n"))
            ],
            "reviewer": [reply(FINDING), reply('Sure.\n```json\n{"findings": []}\n```')],
            "implementer": [reply("fixed")],
        }
    )
    result = review_rounds(TICKET, project.pack, pr, project.workspace, agent, forge)
    assert result.stopped == "clean" and len(result.rounds) == 2
    assert result.rounds[1].findings == [] and result.head_sha == pr.head_sha
    assert "def shout" in (project.repo / "app/text.py").read_text()  # simplifier reverted
    assert "nothing left to fix" in forge.posted[-1][1]


def test_parse_findings_is_strict():
    assert parse_findings('{"findings": []}') == []
    assert parse_findings('noise {"findings": ["a", {"message": "b"}]} noise') == ["a", "b"]
    assert parse_findings("Looks good to me!") is None
    assert parse_findings('{"issues": []}') is None


class _Crash(Exception):
    pass


def test_a_step_retry_resumes_at_the_next_round_and_pays_for_none_twice(project):
    """The step dies in round 3's reviewer turn; the retry (a new process: a fresh agent and
    clone state from the forge) runs rounds 3-5 only, and the value counts every round once."""
    pr, forge = _pr(project), FakeForge()
    first = ScriptedAgent(
        {"implementer": [reply("done", write("app/text.py", "# reviewed\n", append=True))]},
        default={
            "simplifier": reply("nothing to simplify"),
            "reviewer": reply(FINDING),
            "implementer": reply("tried"),
        },
    )
    original_run = first.run

    def dies_in_round_three(request):
        if request.role == "reviewer" and first.roles().count("reviewer") == 2:
            raise _Crash("pod evicted")
        return original_run(request)

    first.run = dies_in_round_three  # type: ignore[method-assign]
    try:
        review_rounds(TICKET, project.pack, pr, project.workspace, first, forge)
    except _Crash:
        pass
    else:
        raise AssertionError("the first attempt was meant to die in round 3")
    retry = ScriptedAgent(
        {},
        default={"reviewer": reply(FINDING), "implementer": reply("tried")},
    )
    result = review_rounds(TICKET, project.pack, pr, project.workspace, retry, forge)
    assert retry.roles() == ["reviewer", "implementer"] * 3  # rounds 3, 4, 5; no simplifier
    assert [r.index for r in result.rounds] == [1, 2, 3, 4, 5] and result.stopped == "bound"
    assert [r.fixed for r in result.rounds] == [True, False, False, False, False]
    # what the retry paid: rounds 3-5; the simplify pass and rounds 1-2 are reused, not re-paid
    assert result.usd == 0.06 and len(result.calls) == 6
    assert [r.what for r in result.reused] == ["simplify pass", "review round 1", "review round 2"]
    assert round(result.usd + sum(r.usd for r in result.reused), 6) == 0.11  # as if it never died
    summaries = [b for _, b in forge.posted if "round(s)" in b]
    assert len(summaries) == 1


def test_a_marker_a_person_pastes_is_not_progress(project):
    from veranda_dagster.domain.core.forge_port import Comment
    from veranda_dagster.domain.deliver.progress import marker

    pr, forge = _pr(project), FakeForge()
    fake = {"index": 0, "calls": [], "round": None}
    forge.comments.append(Comment("c1", "mallory", marker("review_round", fake)))
    agent = ScriptedAgent(
        {"reviewer": [reply('{"findings": []}')]},
        default={"simplifier": reply("nothing to simplify")},
    )
    review_rounds(TICKET, project.pack, pr, project.workspace, agent, forge)
    assert agent.roles()[0] == "simplifier"


def _reviewing_agent() -> ScriptedAgent:
    return ScriptedAgent(
        {"implementer": [reply("done", write("app/text.py", "# reviewed\n", append=True))]},
        default={
            "simplifier": reply("nothing to simplify"),
            "reviewer": reply(FINDING),
            "implementer": reply("tried"),
        },
    )


def test_a_backfill_on_the_same_head_reuses_the_rounds_and_reports_no_new_spend(project):
    """A backfill of ``patch`` and downstream whose PR head is the one the recorded rounds
    reviewed: no model call, zero calls and USD in the value, and ``reused`` names each round
    and the run that paid for it."""
    from veranda_dagster.domain.core.provenance import in_run

    pr, forge = _pr(project), FakeForge()
    first = in_run(
        "run-1",
        lambda: review_rounds(
            TICKET, project.pack, pr, project.workspace, _reviewing_agent(), forge
        ),
    )
    again = ScriptedAgent({})
    result = in_run(
        "run-2", lambda: review_rounds(TICKET, project.pack, pr, project.workspace, again, forge)
    )
    assert again.roles() == []
    assert result.calls == [] and result.usd == 0.0
    assert {r.run_id for r in result.reused} == {"run-1"}
    assert len(result.reused) == 6 and round(sum(r.usd for r in result.reused), 6) == first.usd
    assert result.rounds == first.rounds and result.head_sha == first.head_sha


def test_a_backfill_with_a_new_commit_is_reviewed_again(project):
    """The markers on the PR are the earlier head's: a backfill of ``patch`` that pushed a
    new commit to the same PR gets a full review (simplify pass first), not the old verdicts."""
    pr, forge = _pr(project), FakeForge()
    review_rounds(TICKET, project.pack, pr, project.workspace, _reviewing_agent(), forge)
    ws = project.workspace
    (ws.path / "app/text.py").write_text(BASE_FILES["app/text.py"] + SLUGIFY_OK + "# v2\n")
    commit_and_push(ws, ["app/text.py"], "feat: again", "patch")
    agent = ScriptedAgent(
        {"reviewer": [reply('{"findings": []}')]},
        default={"simplifier": reply("nothing to simplify")},
    )
    result = review_rounds(TICKET, project.pack, pr, ws, agent, forge)
    assert agent.roles() == ["simplifier", "reviewer"]
    assert result.reused == [] and len(result.calls) == 2 and result.stopped == "clean"


def test_a_rounds_marker_keeps_its_bound_of_findings_each_cut_at_its_bound(project):
    """``MAX_MARKER_FINDINGS`` and ``MAX_MARKER_FINDING_CHARS``: a reviewer that lists one
    finding more than the marker holds, the first one long, leaves a progress marker (read back
    the way a retried step reads it) of exactly the bound of findings, the long one cut at the
    bound of characters; the round itself keeps them all. Its twin: findings at both bounds are
    carried whole."""
    at_bound = [
        "x" * MAX_MARKER_FINDING_CHARS,
        *(f"finding {i}" for i in range(1, MAX_MARKER_FINDINGS)),
    ]
    past = ["x" * (MAX_MARKER_FINDING_CHARS + 7), *at_bound[1:], "one finding too many"]
    for listed in (past, at_bound):
        pr, forge = _pr(project), FakeForge()
        agent = ScriptedAgent(
            {"reviewer": [reply(json.dumps({"findings": listed})), reply('{"findings": []}')]},
            default={"simplifier": reply("nothing to simplify"), "implementer": reply("tried")},
        )
        result = review_rounds(TICKET, project.pack, pr, project.workspace, agent, forge)
        assert result.rounds[0].findings == listed  # the value keeps every finding
        recorded = [m for m in read_markers(forge.comments, PROGRESS_KIND) if m["index"] == 1]
        assert recorded[-1]["round"]["findings"] == at_bound
