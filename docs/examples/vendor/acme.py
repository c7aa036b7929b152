"""A worked example of a vendor plugin: copy to ``veranda_dagster/vendors/plugins/<name>.py``.

Acme Code is a made-up vendor whose CLI (``acme-code``) is a build of Claude Code that reads its
key from ``ACME_API_KEY`` and talks to Acme's own Anthropic-compatible endpoint, so the vendor
reuses Claude Code's argv and stream parser and
declares everything else about the vendor once, on the class. The registry derives the rest
(tier routing, USD rates, the no-real-CLI guard's binary, the scrubber's token shapes, the
default vendors config) and refuses the file if a piece is missing; ``PLUGIN`` is all it
registers, and it registers nothing at import.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from veranda_dagster.domain.core.models import Tier
from veranda_dagster.domain.core.redaction import TokenShape
from veranda_dagster.sandbox.egress import X_API_KEY, KeyCarrier
from veranda_dagster.vendors.plugins._base import ModeSpec
from veranda_dagster.vendors.plugins.claude import ClaudeVendor
from veranda_dagster.vendors.rates import Rate
from veranda_dagster.vendors.registry import VendorInfo

ACME_URL = "https://api.acme-code.test/anthropic"
PRICES = "example price list (cite the vendor's page and the day it was read)"


class AcmeVendor(ClaudeVendor):
    vendor = "acme"
    default_binary = "acme-code"
    token_patterns: ClassVar[tuple[TokenShape, ...]] = (
        TokenShape(
            "acme_api_key",
            r"acme-sk-[A-Za-z0-9]{32,}",
            "acme-sk-" + "Q7x2" * 8,
            "made up for this example: cite the vendor's own docs for a real one",
        ),
    )
    modes: ClassVar[dict[str, ModeSpec]] = {
        "api_key": ModeSpec("api_key", required_env=("ACME_API_KEY",)),
    }
    repo_agent_config = (".claude", ".mcp.json")
    tiers: ClassVar[Mapping[Tier, str]] = {
        "cheap": "acme-small",
        "standard": "acme-medium",
        "high": "acme-large",
    }
    mode_tiers: ClassVar[Mapping[str, Mapping[Tier, str]]] = {}
    model_prefixes: ClassVar[tuple[str, ...]] = ("acme-",)
    rates: ClassVar[Mapping[str, Rate]] = {
        model: Rate(input=i, output=o, cached=i / 10, source=PRICES, date="2026-12-01")
        for model, i, o in (("acme-small", 0.5, 2.0), ("acme-medium", 2, 8), ("acme-large", 6, 24))
    }
    rate_aliases: ClassVar[Mapping[str, str]] = {}
    rate_prefixes: ClassVar[tuple[str, ...]] = ("acme/",)
    secret_env: ClassVar[tuple[str, ...]] = ("ACME_API_KEY",)
    default_base_urls: ClassVar[Mapping[str, str]] = {"api_key": ACME_URL}
    key_carriers: ClassVar[Mapping[str, tuple[KeyCarrier, ...]]] = {"ACME_API_KEY": (X_API_KEY,)}
    unproxied_modes: ClassVar[Mapping[str, str]] = {}


PLUGIN = VendorInfo("acme", tuple(AcmeVendor.modes), rank=90, factory=AcmeVendor)
