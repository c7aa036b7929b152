"""USD per turn and per ticket from the tokens each vendor's own stream reported.

Rates are USD per 1M tokens (input / output / cache read), each row declared on its vendor's
vendor (``CliVendor.rates``) with its source and date: mostly the models.dev snapshot bundled
in opencode-ai 1.18.33 (``rates.MODELS_DEV``), community maintained, so verify before billing;
otherwise third-party pages named in the reference notes.
``Usage.input`` is *uncached* input and ``Usage.cached`` cache reads: every parser normalizes
to that, so one formula serves every vendor. Reasoning tokens are billed as output and already
counted in ``Usage.output``. Subscription plans (Kimi Code, Z.ai coding plan, logins) bill a
flat fee, priced here at 0 with ``plan=True``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.domain.core.models import ModelCall, Usage
from veranda_dagster.vendors import registry
from veranda_dagster.vendors.rates import PLAN_RATE, Rate

__all__ = ["ALIASES", "PLAN_PREFIXES", "RATES", "Rate", "rate_for", "ticket_usd", "turn_usd"]


RATES: dict[str, Rate] = {}
"""model id -> rate, derived from every vendor's ``rates`` (one id belongs to one vendor)."""
ALIASES: dict[str, str] = {}
"""A CLI alias -> the id it resolved to when its rate was taken (each vendor's own)."""
for _vendor in registry.vendor_classes():
    for _model, _rate in _vendor.rates.items():
        if _model in RATES:
            raise ConfigError(f"rate for {_model!r} declared twice (again by {_vendor.vendor})")
        RATES[_model] = _rate
    ALIASES.update(_vendor.rate_aliases)

PLAN_PREFIXES = tuple(p for a in registry.vendor_classes() for p in a.plan_prefixes)
PROVIDER_PREFIXES = tuple(p for a in registry.vendor_classes() for p in a.rate_prefixes)
_DATED = re.compile(r"^(.+)-\d{8}$")


def rate_for(model: str | None) -> Rate | None:
    if not model:
        return None
    mid = model.strip().lower()
    if mid.startswith(PLAN_PREFIXES):
        return PLAN_RATE
    mid = ALIASES.get(mid, mid)
    if mid in RATES:
        return RATES[mid]
    for prefix in PROVIDER_PREFIXES:
        if mid.startswith(prefix) and mid[len(prefix) :] in RATES:
            return RATES[mid[len(prefix) :]]
    # Dated snapshots ("claude-haiku-4-5-20251001") price like their base id; a different
    # version ("claude-sonnet-5-5") does not.
    dated = _DATED.match(mid)
    if dated and dated.group(1) in RATES:
        return RATES[dated.group(1)]
    return None


def turn_usd(model: str | None, usage: Usage) -> float | None:
    """USD of one turn, or None when no rate is known for the model (never a guess)."""
    rate = rate_for(model)
    if rate is None:
        return None
    usd = (usage.input * rate.input + usage.output * rate.output + usage.cached * rate.cached) / 1e6
    return round(usd, 6)


def ticket_usd(calls: Iterable[ModelCall]) -> float:
    return round(sum(c.usd for c in calls), 6)
