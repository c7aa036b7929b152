"""What a phase asset opens around its one domain call, from the typed resources it asked for.

Each phase asset names the resources it needs (``tickets``, ``forge``, ``agents``,
``workspace``, …) and calls its domain entry point itself; the helpers here are the few
compositions several phases share: the ticket's clone, the budgeted agent, the code search, and
a work phase's open collaborators. They take resources as arguments, so a test swaps one by
passing a different resource.

Each phase opens the clients it needs (the forge's, the ticket sources', a remote code search)
for the length of its domain call and closes them on return, error or not: with the in-process
executor one run worker runs every phase of a ticket, so a client per call left to the
collector would hold its connection pool for the rest of the run.

Secrets live only in the resources (bound with ``dg.EnvVar``, hidden from their reprs) and are
handed only to clients, which redact them; nothing here logs or returns config.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, closing, contextmanager
from functools import cached_property

from veranda_dagster.domain.clone.workspace import Workspace
from veranda_dagster.domain.context.code_search import CodeSearch, LocalGitGrep
from veranda_dagster.domain.core.budget import BudgetedAgent
from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.domain.core.models import Ticket, WorkOrder
from veranda_dagster.domain.core.orgs import org_of
from veranda_dagster.domain.core.work_order import packed
from veranda_dagster.forges.registry import ForgeClient
from veranda_dagster.resources.agents import AgentsResource
from veranda_dagster.resources.forge import ForgeResource
from veranda_dagster.resources.tickets import TicketSourcesResource
from veranda_dagster.resources.workspace import WorkspaceResource
from veranda_dagster.sources.channel import TicketChannel


@contextmanager
def forge_client(forge: ForgeResource) -> Iterator[ForgeClient]:
    """The forge's client, closed on leaving."""
    with closing(forge.client()) as client:
        yield client


def budgeted_agent(
    agents: AgentsResource, ticket: Ticket, channel: TicketChannel, repo: str = ""
) -> BudgetedAgent:
    """The resolving agent, held to the ticket's budget (and, once ``repo`` is known, its org's
    daily one): every phase's turns go through one ``BudgetedAgent`` reading and writing the
    ticket's durable spend ledger; the note that a cap was hit goes to ``channel``, once per
    cap however often it is hit."""
    key = f"budget:{agents.ticket_cap_usd(ticket.id):g}"
    org = org_of(repo) if repo and "/" in repo else ""
    return agents.agent(ticket, lambda text: channel.post(ticket, text, key=key), org)


def clone(
    forge: ForgeResource,
    workspace: WorkspaceResource,
    ticket_id: str,
    repo: str | None,
    clone_url: str = "",
    branch: str = "",
) -> Workspace:
    """The ticket's clone: of ``clone_url`` when the pack recorded one, else of the forge's URL
    for ``repo``; the forge's token and git username go with it."""
    if not repo or "/" not in repo:
        raise InputError(f"ticket {ticket_id}: repository {repo!r} is not <org>/<name>")
    org_forge = forge.for_repo(repo)  # the repository's org's forge, token and user
    return workspace.clone(
        ticket_id,
        clone_url or org_forge.clone_url(repo),
        branch,
        org_forge.token,
        org_forge.git_username,
    )


@contextmanager
def code_search(
    forge: ForgeResource, agents: AgentsResource, repo: str, workspace: Workspace
) -> Iterator[CodeSearch]:
    """The forge's code search when it holds a token (closed on leaving), else ``git grep`` in
    the clone."""
    org_forge = forge.for_repo(repo)
    if not org_forge.configured:
        yield LocalGitGrep(workspace.path)
        return
    search = org_forge.code_search(repo, agents.budget_state())
    try:
        yield search
    finally:
        close = getattr(search, "close", None)
        if callable(close):
            close()


class WorkClients:
    """What a work phase hands its domain call: the pack's clone and the open ticket channel;
    the forge client and the budgeted agent are built only when the phase takes them (writing
    tests and implementing talk to no forge; opening a pull request calls no model, so no
    vendors file is read for it). What is opened here closes with the phase's ``opened``
    stack."""

    def __init__(
        self,
        ticket: Ticket,
        workspace: Workspace,
        channel: TicketChannel,
        forge: ForgeResource,
        agents: AgentsResource,
        opened: ExitStack,
        repo: str = "",
    ) -> None:
        self._ticket, self._forge, self._agents, self._opened = ticket, forge, agents, opened
        self.workspace, self.channel, self._repo = workspace, channel, repo

    @cached_property
    def forge(self) -> ForgeClient:
        return self._opened.enter_context(forge_client(self._forge))

    @cached_property
    def agent(self) -> BudgetedAgent:
        return budgeted_agent(self._agents, self._ticket, self.channel, self._repo)

    def post(self, text: str) -> str | None:
        """A note on the ticket's own thread."""
        return self.channel.post(self._ticket, text)


@contextmanager
def work_on(
    order: WorkOrder,
    tickets: TicketSourcesResource,
    forge: ForgeResource,
    agents: AgentsResource,
    workspace: WorkspaceResource,
) -> Iterator[WorkClients]:
    """A work phase's collaborators on the clone its order's pack describes, open for the
    domain call."""
    ticket, pack = order.ticket, packed(order)
    with ExitStack() as opened:
        channel = opened.enter_context(tickets.connected())
        clone_of_pack = clone(forge, workspace, ticket.id, pack.repo, pack.clone_url, pack.branch)
        yield WorkClients(ticket, clone_of_pack, channel, forge, agents, opened, pack.repo or "")
