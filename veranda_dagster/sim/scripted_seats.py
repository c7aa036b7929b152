"""Which scripted reply a seat gets: the storefront sample's when the prompt is about it, else
the billing sample's, then the hostile-ticket behaviours every seat obeys.

Kept apart from ``scripted_agent`` (the actions and the billing seats) and
``scripted_frontend`` (the storefront's seats, built on those actions), so the two import in one
direction only.
"""

from __future__ import annotations

from veranda_dagster.sim import scripted_frontend
from veranda_dagster.sim.scripted_agent import (
    ScriptedReply,
    billing_reply,
    obey_exfiltration,
    obey_injection,
)


def script_reply(role: str, prompt: str, round_no: int, system: str = "") -> ScriptedReply:
    """The reply for the ``round_no``-th turn (1-based) this server has seen for ``role``."""
    reply = None
    if scripted_frontend.is_storefront(prompt):
        reply = scripted_frontend.storefront_reply(role, prompt, round_no)
    if reply is None:
        reply = billing_reply(role, prompt, round_no)
    return obey_injection(obey_exfiltration(reply, role, prompt), role, prompt, system)
