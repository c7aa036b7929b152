"""USD per turn and per ticket from the tokens each vendor's own stream reported.

Rates are USD per 1M tokens (input / output / cache read), each row with its source and date:
**M** = the models.dev snapshot bundled in opencode-ai 1.18.33 (npm, 2026-09-28), community
maintained, so verify before billing; **C** = third-party pages named in the reference notes.
``Usage.input`` is *uncached* input and ``Usage.cached`` cache reads: every parser normalizes
to that, so one formula serves every vendor. Reasoning tokens are billed as output and already
counted in ``Usage.output``. Subscription plans (Kimi Code, Z.ai coding plan, logins) bill a
flat fee, priced here at 0 with ``plan=True``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pydantic import BaseModel

from veranda_dagster.domain.models import ModelCall, Usage


class Rate(BaseModel):
    input: float
    output: float
    cached: float
    source: str
    date: str
    plan: bool = False


_M = ("models.dev via opencode-ai 1.18.33", "2026-09-28")


def _m(i: float, o: float, c: float) -> Rate:
    return Rate(input=i, output=o, cached=c, source=_M[0], date=_M[1])


RATES: dict[str, Rate] = {
    "claude-opus-5-5": _m(4, 20, 0.2),
    "claude-opus-5": _m(5, 25, 0.5),
    "claude-opus-4-8": _m(5, 25, 0.5),
    "claude-opus-4-7": _m(5, 25, 0.5),
    "claude-sonnet-5": _m(2, 10, 0.2),
    "claude-sonnet-4-6": _m(3, 15, 0.3),
    "claude-haiku-4-5": _m(1, 5, 0.1),
    "gpt-6-sol": _m(2, 10, 0.2),
    "gpt-6-luna": _m(0.1, 0.5, 0.01),
    "gpt-6-astra": _m(10, 50, 1),
    "gpt-5.5": _m(5, 30, 0.5),
    "gpt-5.3-codex": _m(1.75, 14, 0.175),
    "gemini-3.1-pro-preview": _m(2, 12, 0.2),
    "gemini-3.8-flash": _m(0.75, 3.75, 0.075),
    "gemini-flash-latest": _m(0.75, 3.75, 0.075),
    "gemini-3.5-flash-lite": _m(0.3, 2.5, 0.03),
    "kimi-k3": _m(3, 15, 0.3),
    "kimi-k2.7-code": _m(0.95, 4, 0.19),
    "kimi-k2.7-code-highspeed": _m(1.9, 8, 0.38),
    "kimi-k2.6": _m(0.95, 4, 0.16),
    "grok-4.7": _m(2, 6, 0.5),
    "grok-4.6": _m(2, 6, 0.5),
    "grok-4.5": _m(2, 6, 0.3),
    "grok-4.3": _m(1.25, 2.5, 0.2),
    "grok-build-0.1": _m(1, 2, 0.2),
    "glm-5.3": _m(1.4, 4.4, 0.26),
    "glm-5.3-flashx": _m(0.37, 1.25, 0.075),
    "glm-5.3-flash": _m(0.15, 0.5, 0.03),
    "glm-4.7": _m(0.6, 2.2, 0.11),
    "glm-4.5-air": _m(0.2, 1.1, 0.03),
    "composer-2.5": Rate(
        input=0.5, output=2.5, cached=0.2, source="token-plan.pages.dev", date="2026"
    ),
    "composer-2": Rate(input=0.5, output=2.5, cached=0.2, source="datacamp", date="2026-03-23"),
    "auto": Rate(input=1.25, output=6, cached=0.25, source="Cursor pricing blog", date="2025-12"),
}

ALIASES: dict[str, str] = {
    # Claude Code tier aliases -> the id they resolved to when these rates were taken.
    "opus": "claude-opus-5-5",  # seen: Claude Code 2.1.332 default and ``--model opus``
    "haiku": "claude-haiku-4-5",
}

PLAN_PREFIXES = ("kimi-code/", "zai-coding-plan/")
_DATED = re.compile(r"^(.+)-\d{8}$")


def rate_for(model: str | None) -> Rate | None:
    if not model:
        return None
    mid = model.strip().lower()
    if mid.startswith(PLAN_PREFIXES):
        return Rate(input=0, output=0, cached=0, source="subscription plan", date="-", plan=True)
    mid = ALIASES.get(mid, mid)
    if mid in RATES:
        return RATES[mid]
    for prefix in ("zai/", "xai/", "moonshotai/", "anthropic/", "openai/", "google/"):
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
