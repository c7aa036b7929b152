"""Acme Desk, declared: the one object the source registry reads (``PLUGIN``).

Opt-in (``on_by_default=False``): enabled by ``VERANDA_SOURCES=...,acmedesk``."""

from __future__ import annotations

from veranda_dagster.domain.core.redaction import TokenShape
from veranda_dagster.sources.registry import TicketSourceInfo

from .resource import SECRET_ENV, AcmeDeskResource
from .sensor import acmedesk_tickets
from .ticket import AcmeDeskTicketSource

TOKENS: tuple[TokenShape, ...] = (
    TokenShape(
        "acmedesk",
        r"adk_[A-Za-z0-9]{24,}",
        "adk_" + "Zp4w" * 6,
        "made up for this example: cite the source's token-format docs for a real one",
    ),
)

PLUGIN = TicketSourceInfo(
    port=AcmeDeskTicketSource,
    title="Acme Desk",
    resource=AcmeDeskResource,
    secret_env=SECRET_ENV,
    setup_hint="set ACMEDESK_TOKEN",
    sensor=acmedesk_tickets,
    token_shapes=TOKENS,
)
