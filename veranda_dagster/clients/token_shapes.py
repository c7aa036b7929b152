"""The token shapes the trackers and forges issue, declared beside their clients (a forge's
reach the scrubber through its row in ``clients.forges``).

The domain's scrubber (``domain.core.redaction``) knows only generic shapes; these reach it through
``provider_token_shapes``, which the package registers at import, together with every model
vendor's own ``token_patterns`` from the vendor registry.
"""

from __future__ import annotations

from veranda_dagster.domain.core.redaction import TokenShape

SERVICE_TOKENS: tuple[TokenShape, ...] = (
    TokenShape(
        "slack",
        r"xox[a-z](?:\.xox[a-z])?-[A-Za-z0-9-]{10,}",
        "xoxb-1234567890-1234567890-abcdefghijklmnopqrstuvwx",
        "api.slack.com/authentication/token-types (xoxb, xoxp, xoxe.xoxp config tokens)",
    ),
    TokenShape(
        "slack_app",
        r"xapp-[0-9]-[A-Za-z0-9-]{10,}",
        "xapp-1-A052FGTS2DL-5171572773297-610b6a11f4b7eb819e87b767d80e6575",
        "api.slack.com/authentication/token-types#app",
    ),
    TokenShape(
        "slack_webhook",
        r"hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}",
        "hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
        "api.slack.com/messaging/webhooks (the path is the credential)",
    ),
    TokenShape(
        "linear",
        r"lin_(?:api|oauth)_[A-Za-z0-9]{16,}",
        "lin_api_abcdefghijklmnop1234",
        "Linear API docs: personal API keys (lin_api_) and OAuth tokens (lin_oauth_)",
    ),
    TokenShape(
        "atlassian_api_token",
        r"ATATT[A-Za-z0-9_=-]{20,}",
        "ATATT3xFfGF0T4nJ8x2kq9Zr1sVb6yU0wH3eL5pD7mC_Ng=A1B2C3D4",
        "unverified: Atlassian API tokens seen in the wild start with ATATT; no published format",
    ),
)
"""Slack, Linear and Atlassian (Jira) tokens; a forge's are on its row (``clients.forges``)."""


def provider_token_shapes() -> tuple[TokenShape, ...]:
    """The trackers' shapes, every registered forge's, then every registered model vendor's."""
    from veranda_dagster.forges.registry import forge_token_shapes
    from veranda_dagster.vendors.registry import token_patterns

    return SERVICE_TOKENS + forge_token_shapes() + tuple(token_patterns())
