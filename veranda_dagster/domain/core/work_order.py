"""Which work order a phase works from: the one its predecessor's value carries.

Every phase after the ticket reads one upstream value, its predecessor in the chain, and
takes the ticket (and, from the red phase on, the context pack) from the ``WorkOrder`` that
value carries: the lineage is the chain, not a fan-out of ``ticket`` and ``context_pack``
into every phase. A value stored before orders were carried has none; then the order is
rebuilt from the partition's stored ``ticket`` and ``context_pack`` values (what the phase
read directly before), so re-executing an old run from failure still works.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from pydantic import BaseModel

from veranda_dagster.domain.core.errors import InputError, StoredValueError
from veranda_dagster.domain.core.models import (
    CarriesOrder,
    ContextPack,
    RepoGuess,
    Ticket,
    WorkOrder,
)

M = TypeVar("M", bound=BaseModel)
V = TypeVar("V", bound=BaseModel)

Stored = Callable[[str], BaseModel]
"""The partition's stored value of an asset, by asset name (the value store's ``load``)."""


def order_from(upstream: BaseModel, stored: Stored) -> WorkOrder:
    """The order a phase works from, given its predecessor's value: a ticket starts one; the
    pack hands itself on inside it; any later value passes on the order it carries."""
    if isinstance(upstream, Ticket):
        return WorkOrder(ticket=upstream)
    if isinstance(upstream, ContextPack):
        ticket = upstream.order.ticket if upstream.order else _stored(stored, "ticket", Ticket)
        return WorkOrder(ticket=ticket, pack=upstream.model_copy(update={"order": None}))
    if isinstance(upstream, CarriesOrder):
        if upstream.order is not None:
            return upstream.order
        ticket = _stored(stored, "ticket", Ticket)  # a value stored before orders were carried
        if isinstance(upstream, RepoGuess):
            return WorkOrder(ticket=ticket)
        return WorkOrder(ticket=ticket, pack=_stored(stored, "context_pack", ContextPack))
    raise InputError(f"a {type(upstream).__name__} carries no work order")


def packed(order: WorkOrder) -> ContextPack:
    """The order's pack, for a phase that works in the clone it describes; an order without
    one (a pack that was never built) is refused by name, not met with an ``AttributeError``."""
    if order.pack is None:
        raise InputError(f"ticket {order.ticket.id}: the work order holds no context pack yet")
    return order.pack


def _stored(stored: Stored, asset: str, model: type[M]) -> M:
    value = stored(asset)
    if not isinstance(value, model):
        raise StoredValueError(
            f"asset {asset!r}: stored a {type(value).__name__}, not {model.__name__}"
        )
    return value


def carried(value: V, order: WorkOrder) -> V:
    """``value`` handing ``order`` on to the next phase (a value with no next phase to hand it
    to, ``feedback``'s, is returned as it is)."""
    if isinstance(value, CarriesOrder):
        return value.model_copy(update={"order": order})
    return value
