"""``pull_request``: the PR on the forge, with cited lines resolved or flagged."""

import dagster as dg

from veranda_dagster.assets._metadata import bounded_md
from veranda_dagster.assets._policy import PHASES, dagster_asset
from veranda_dagster.assets._shell import run_phase
from veranda_dagster.domain.core.models import (
    ContextPack,
    Patch,
    PullRequest,
    RedTests,
    RepoGuess,
    Ticket,
)
from veranda_dagster.resources.pipeline import PipelineResource

SPEC = PHASES["pull_request"]


# Declared by hand around ``run_phase`` (not ``_shell.phase_asset``): its metadata links the
# ticket, an upstream value, beside the pull request's own.
@dagster_asset(
    SPEC,
    "Opens (or adopts, by branch) the pull request; citations in the body are resolved "
    "against the default branch and unresolvable ones flagged. Links it on the ticket.",
)
def pull_request(
    context: dg.AssetExecutionContext,
    pipeline: PipelineResource,
    ticket: Ticket,
    repo_guess: RepoGuess,
    context_pack: ContextPack,
    red_tests: RedTests,
    patch: Patch,
) -> dg.Output[PullRequest]:
    return run_phase(
        context,
        SPEC,
        lambda: pipeline.open_pull_request(
            ticket, context_pack, patch, earlier=(repo_guess, red_tests)
        ),
        lambda pr: "opened",
        lambda pr: {
            "pr_url": dg.MetadataValue.url(pr.url),
            "pr_number": pr.number,
            "head_sha": pr.head_sha,
            "citations_resolved": len(pr.citations_resolved),
            "citations_flagged": len(pr.citations_flagged),
            "pr_body": bounded_md(pr.body),
            **({"ticket_url": dg.MetadataValue.url(ticket.url)} if ticket.url else {}),
        },
    )
