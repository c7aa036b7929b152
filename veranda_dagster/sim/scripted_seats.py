"""Which scripted reply a seat gets: the storefront sample's when the prompt is about it, else
the billing sample's, then the hostile-ticket behaviours every seat obeys; and which tickets
the script knows at all (any other ticket's work seats are refused).

Kept apart from ``scripted_agent`` (the actions and the billing seats) and
``scripted_frontend`` (the storefront's seats, built on those actions), so the two import in one
direction only.
"""

from __future__ import annotations

from veranda_dagster.sim import scripted_frontend
from veranda_dagster.sim.scripted_agent import (
    SAMPLE_SEATS_ONLY,
    SAMPLE_TITLE_WORDS,
    STAND_IN_REFUSAL,
    ScriptedReply,
    billing_reply,
    obey_exfiltration,
    obey_injection,
    ticket_title,
)


def script_reply(role: str, prompt: str, round_no: int, system: str = "") -> ScriptedReply:
    """The reply for the ``round_no``-th turn (1-based) this server has seen for ``role``."""
    reply = None
    if scripted_frontend.is_storefront(prompt):
        reply = scripted_frontend.storefront_reply(role, prompt, round_no)
    if reply is None:
        reply = billing_reply(role, prompt, round_no)
    return obey_injection(obey_exfiltration(reply, role, prompt), role, prompt, system)


def knows_ticket(prompt: str) -> bool:
    """Whether the script has an honest answer for the prompt's ticket: a prompt with no
    ticket, the storefront sample, or a title naming the invoice sample's bug."""
    title = ticket_title(prompt)
    if title is None or scripted_frontend.is_storefront(prompt):
        return True
    lowered = title.lower()
    return all(word in lowered for word in SAMPLE_TITLE_WORDS)


def refusal(role: str, prompt: str) -> str | None:
    """``STAND_IN_REFUSAL`` when ``role`` is a work seat and the prompt's ticket is not one
    the script knows; ``None`` when the seat may be answered."""
    if role in SAMPLE_SEATS_ONLY and not knows_ticket(prompt):
        return STAND_IN_REFUSAL
    return None
