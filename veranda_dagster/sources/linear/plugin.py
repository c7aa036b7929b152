"""Linear: issues assigned or delegated to the bot, or labelled for it, keyed ``ENG-123``.

Linear's identifiers are the one unqualified key shape, so partitions made before keys were
source-qualified keep working; on by default.
"""

from __future__ import annotations

from veranda_dagster.domain.core.redaction import TokenShape
from veranda_dagster.sources.linear.resource import SECRET_ENV, LinearResource
from veranda_dagster.sources.linear.sensor import linear_tickets
from veranda_dagster.sources.linear.ticket import LinearTicketSource
from veranda_dagster.sources.registry import TicketSourceInfo

TOKENS: tuple[TokenShape, ...] = (
    TokenShape(
        "linear",
        r"lin_(?:api|oauth)_[A-Za-z0-9]{16,}",
        "lin_api_abcdefghijklmnop1234",
        "Linear API docs: personal API keys (lin_api_) and OAuth tokens (lin_oauth_)",
    ),
)
"""Linear's token formats, so the scrubber masks them wherever they appear."""

PLUGIN = TicketSourceInfo(
    port=LinearTicketSource,
    title="Linear",
    resource=LinearResource,
    secret_env=SECRET_ENV,
    setup_hint="set LINEAR_API_KEY",
    sensor=linear_tickets,
    on_by_default=True,
    token_shapes=TOKENS,
)
