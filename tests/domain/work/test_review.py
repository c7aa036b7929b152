"""``review_rounds``: a simplify pass, then fix-and-re-review bounded at five rounds, stopping
early when the reviewer's strict JSON says nothing is left."""

from tests.domain.work.conftest import BRANCH, TICKET, FakeForge, ScriptedAgent, reply, write
from tests.fixtures.work.project import BASE_FILES, SLUGIFY_OK
from veranda_dagster.domain.core.bounds import MAX_REVIEW_ROUNDS
from veranda_dagster.domain.core.models import PullRequest
from veranda_dagster.domain.deliver.review import parse_findings, review_rounds
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
    assert result.usd == 0.11  # the same as an attempt that never died
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
