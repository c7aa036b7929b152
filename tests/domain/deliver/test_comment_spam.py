"""1,050 spam comments on a PR, through the GitHub fake and the real client: the reviewer's
newer comment is still read and handled, and the cut the page bound made is said in the
phase's value (which the asset puts in its metadata and the run log)."""

from __future__ import annotations

from tests.domain.conftest import GH_REPO as REPO
from tests.domain.conftest import TICKET, ScriptedAgent, reply, write
from veranda_dagster.domain.core.forge_port import truncation
from veranda_dagster.domain.deliver.feedback import process_feedback
from veranda_dagster.forges.github.client import MAX_PAGES, PER_PAGE

SPAM = 1_050


def test_spam_does_not_push_the_real_review_out_and_the_cut_is_reported(project, github):
    fake, client, pr = github
    for n in range(SPAM):
        fake.human_comment(REPO, pr.number, f"spam {n}", "spammer")
    fake.human_comment(REPO, pr.number, "please add NOTES.md", "alice")
    assert SPAM + 1 > MAX_PAGES * PER_PAGE  # more than the bound can hold

    listed = client.list_comments(REPO, pr.number)
    assert listed[-1].body == "please add NOTES.md" and listed[0].body == "spam 0"
    assert len(listed) == SPAM + 1 - PER_PAGE  # page 1 and the newest 9 of 11: page 2 skipped
    assert "skipped 1 older page(s)" in (truncation(listed) or "")

    agent = ScriptedAgent({"implementer": [reply("Added it.", write("NOTES.md", "notes\n"))]})
    out = process_feedback(TICKET, project.pack, pr, project.workspace, agent, client, None)
    assert "@alice:\nplease add NOTES.md" in agent.requests[0].prompt
    assert out.truncated and "issues" in out.truncated[0] and "11 pages" in out.truncated[0]
