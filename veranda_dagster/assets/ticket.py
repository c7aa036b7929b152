"""``ticket``: the ticket behind the partition key, read from Linear or Slack."""

from collections.abc import Mapping

import dagster as dg

from veranda_dagster.assets._policy import PHASES
from veranda_dagster.assets._shell import phase_asset
from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.domain.core.models import Ticket
from veranda_dagster.partitions import is_ticket_key
from veranda_dagster.resources.tickets import TicketSourcesResource
from veranda_dagster.sources.dedup import mark_taken


def require_ticket_key(given: Mapping[str, object]) -> None:
    """A partition key that is no ticket key is refused before anything is fetched."""
    key = given.get("partition_key")
    if not isinstance(key, str) or not is_ticket_key(key):
        raise InputError(
            f"partition key {key!r} is not a ticket key (ENG-123 or slack-<channel>-<ts>)"
        )


@phase_asset(
    PHASES["ticket"],
    Ticket,
    "The ticket (Linear issue or Slack thread) behind this partition key.",
    outcome=lambda t: "fetched",
    details=lambda t: {
        "source": t.source,
        "title": t.title[:120],
        "labels": len(t.labels),
        **({"url": dg.MetadataValue.url(t.url)} if t.url else {}),
    },
    hooks={mark_taken},  # the dedup guard reads "this run took the ticket" from the run
    precondition=require_ticket_key,
)
def ticket(context: dg.AssetExecutionContext, tickets: TicketSourcesResource) -> Ticket:
    return tickets.fetch(context.partition_key)
