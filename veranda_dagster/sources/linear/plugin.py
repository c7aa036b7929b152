"""Linear: issues assigned or delegated to the bot, or labelled for it, keyed ``ENG-123``.

Linear's identifiers are the one unqualified key shape, so partitions made before keys were
source-qualified keep working; on by default.
"""

from __future__ import annotations

from veranda_dagster.sources.linear import resource as linear
from veranda_dagster.sources.linear import ticket as linear_ticket
from veranda_dagster.sources.linear.sensor import linear_tickets
from veranda_dagster.sources.registry import TicketSourceInfo, register

SOURCE = register(
    TicketSourceInfo(
        port=linear_ticket.LinearTicketSource,
        title="Linear",
        resource=linear.LinearResource,
        secret_env=linear.SECRET_ENV,
        setup_hint="set LINEAR_API_KEY",
        sensor=linear_tickets,
        on_by_default=True,
    )
)
