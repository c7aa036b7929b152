"""What every intake sensor does around its own walk of its source, written once.

A source's sensor (``linear_tickets``, ``slack_mentions``, ``jira_tickets``) differs only in how
it walks its source for candidate tickets and what cursor that walk leaves. The rest is shared:

- ``intake_sensor`` builds the ``dg.sensor``: it takes the source's resource under the source's
  name, skips naming the setting to make until the source is configured, opens one client per
  tick and closes it, and turns a rejected credential into an error naming the variables
  (``polled`` makes the tick of a source that needs only that client: Linear's, Jira's);
- ``JsonCursor`` is the stored cursor, a pydantic model as JSON, a bad one an ``InputError``;
- ``settle`` turns a walk into the tick's result: one batched dedup question to the instance
  (``dedup.ticket_holds``: never process memory, so a restart starts no second run), the
  source's own reasons to drop a key (our own comment, a mention of a ticket in flight) and a
  ticket whose ``MAX_TICKET_RUNS`` runs all failed before ``ticket``, the run requests (a
  re-run's own ``run_key``), and on an error the walk's kept cursor with a skip when nothing
  new was read.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar, Self

import dagster as dg
from pydantic import BaseModel, ValidationError

from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.http.client import HttpAuthError
from veranda_dagster.partitions import TICKET_JOB
from veranda_dagster.sources import registry
from veranda_dagster.sources.dedup import (
    MAX_TICKET_RUNS,
    TicketHolds,
    sensor_result,
    ticket_holds,
)

Tick = Callable[[dg.SensorEvaluationContext, Any, Any], dg.SensorResult | dg.SkipReason]
"""One tick of a source: (the context, its resource, an open client) -> the result."""

Poll = Callable[[dg.DagsterInstance, Any, str | None, Any], dg.SensorResult | dg.SkipReason]
"""A source's walk and settle over (the instance, an open client, the stored cursor, the log):
what a tick is when the source needs nothing more of its resource (``polled``)."""

DropReason = Callable[[str, TicketHolds], str | None]
"""Why a key that no run holds is still not new work (logged), or ``None`` to take it."""


class JsonCursor(BaseModel):
    """A sensor's cursor as JSON; ``SENSOR`` names it in the error for a bad stored one."""

    SENSOR: ClassVar[str]

    @classmethod
    def parse(cls, raw: str | None) -> Self:
        if not raw:
            return cls()
        try:
            return cls.model_validate(json.loads(raw))
        except (ValueError, ValidationError):
            raise InputError(f"{cls.SENSOR}: the stored cursor is not valid JSON") from None

    def dump(self) -> str:
        return json.dumps(self.model_dump(), sort_keys=True)


@dataclass(frozen=True)
class Walk:
    """What one tick read from its source."""

    found: list[str]
    """Candidate ticket keys, in the order first seen."""
    cursor: Callable[[], str]
    """The cursor to store, advanced past a complete walk and kept where an error cut it;
    dumped once the drop rules ran, since a rule may learn what it keeps (Jira's account id)."""
    error: str | None = None
    kept: str = "cursor kept"
    """What an error left in place, in the messages (Slack keeps one mark per channel)."""


def settle(
    instance: dg.DagsterInstance,
    source: str,
    walk: Walk,
    log: Any,
    *,
    drop: DropReason | None = None,
    also_ask: Iterable[str] = (),
) -> dg.SensorResult | dg.SkipReason:
    """The tick's result for ``walk``: keys no run holds (asked with ``also_ask`` in one query,
    registered partitions included when a ``drop`` rule needs to know them), less those
    ``drop`` gives a reason for; see the module docstring."""
    info = registry.get(source)
    found = list(dict.fromkeys(walk.found))
    holds = ticket_holds(instance, [*found, *also_ask], registered=drop is not None)
    keys: list[str] = []
    for key in (k for k in found if k not in holds.taken):
        reason = drop(key, holds) if drop is not None else None
        if reason is None and holds.runs.get(key, 0) >= MAX_TICKET_RUNS:
            reason = (
                f"{key}: its {holds.runs[key]} runs all failed before `ticket`; not starting "
                "another (re-execute one from the UI once the cause is fixed)"
            )
        if reason:
            log.info(f"{info.sensor.name}: {reason}")
        else:
            keys.append(key)
    if walk.error is not None:
        log.warning(
            f"{info.sensor.name}: {walk.error}; {walk.kept}, {len(keys)} new ticket(s) requested"
        )
        if not keys:
            return dg.SkipReason(
                f"{info.title} poll failed ({walk.error}); {walk.kept}, retrying next tick"
            )
    return sensor_result(keys, walk.cursor(), holds.runs)


def polled(poll: Poll) -> Tick:
    """The tick that runs ``poll`` over the context's instance, cursor and log."""

    def tick(
        context: dg.SensorEvaluationContext, resource: Any, client: Any
    ) -> dg.SensorResult | dg.SkipReason:
        return poll(context.instance, client, context.cursor, context.log)

    return tick


def intake_sensor(
    *,
    name: str,
    source: str,
    tick: Tick,
    interval_s: int,
    description: str,
    default_status: dg.DefaultSensorStatus,
) -> dg.SensorDefinition:
    """The ``dg.sensor`` of ``source``'s intake, named ``name``; ``tick`` does the walk."""

    @dg.sensor(
        name=name,
        job_name=TICKET_JOB,
        minimum_interval_seconds=interval_s,
        default_status=default_status,
        description=description,
        required_resource_keys={source},
    )
    def intake(
        context: dg.SensorEvaluationContext, **_invoked_with: object
    ) -> dg.SensorResult | dg.SkipReason:
        # a direct call (``sensor(context)`` in a test) also passes the required resources as
        # keywords; the daemon does not, so both read the one on the context
        info = registry.get(source)
        resource = getattr(context.resources, source)
        if not resource.configured:
            return dg.SkipReason(f"{info.title} is not configured: {info.setup_hint}")
        client = resource.client()
        try:
            return tick(context, resource, client)
        except HttpAuthError as exc:
            raise HttpAuthError(f"{exc}; check {' and '.join(info.secret_env)}") from None
        finally:
            client.close()

    return intake
