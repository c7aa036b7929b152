"""One price row, and the helper for rows taken from the models.dev snapshot.

Kept apart from ``cost`` so an vendor module can declare its own rates (``CliVendor.rates``)
without importing the table that is derived from every vendor's declaration.
"""

from __future__ import annotations

from pydantic import BaseModel


class Rate(BaseModel):
    """USD per 1M tokens (input / output / cache read), with where and when it was read."""

    input: float
    output: float
    cached: float
    source: str
    date: str
    plan: bool = False


MODELS_DEV = ("models.dev via opencode-ai 1.18.33", "2026-09-28")
"""The models.dev snapshot bundled in opencode-ai 1.18.33 (npm): community maintained, so
verify before billing."""


def models_dev(input: float, output: float, cached: float) -> Rate:
    """A row read from the ``MODELS_DEV`` snapshot."""
    return Rate(input=input, output=output, cached=cached, source=MODELS_DEV[0], date=MODELS_DEV[1])


SCRIPTED = ("veranda scripted model server (loopback; sim.agent_cli.RATES_PER_MTOK)", "-")
"""The offline demo's model: no vendor bills it; priced so spend is measurable end to end."""


def scripted(input: float, output: float) -> Rate:
    """A row for one of the scripted model server's ids (no cache reads there)."""
    return Rate(input=input, output=output, cached=0, source=SCRIPTED[0], date=SCRIPTED[1])


PLAN_RATE = Rate(input=0, output=0, cached=0, source="subscription plan", date="-", plan=True)
"""Subscription plans (Kimi Code, Z.ai coding plan) bill a flat fee, priced per turn at 0."""
