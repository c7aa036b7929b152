"""The ``pr_feedback`` sensor: new human comments on a ticket's PR re-materialize ``feedback``.

It speaks the forge-neutral ``domain.core.forge_port.Forge`` through the shared ``forge`` resource
(``ForgeResource``: GitHub or GitLab by ``VERANDA_FORGE``), so on GitLab the comments are a
merge request's discussions and notes, and the PR/MR URL grammar is the forge row's.

Which tickets have a PR is read from the instance: each ``pull_request`` materialization carries
``pr_url``/``pr_number`` metadata, read incrementally after the storage id in the cursor. For
each known PR the sensor lists its comments, keeps the human ones (never the bot's own: our
marker, a bot author, a ``[bot]`` login) and, when one is not among the ids the cursor holds
for that PR, requests one run of ``feedback`` for that partition with ``run_key =
<ticket>:feedback:<digest of the human comment ids>``, so a batch is asked for once even across
restarts. The cursor keeps only ids the forge still lists, so it is bounded by the forge's own
listing. A PR whose ``feedback`` reported ``bound_reached`` is forgotten (no longer polled). A
PR whose ticket still has a run in flight is passed over that tick (one dedup query for all the
tick's PRs), so its comments are not marked seen by a feedback run the twin guard would refuse.

Polling is fair: a tick polls at most ``MAX_FEEDBACK_PRS_PER_TICK`` PRs, taking them round-robin
in the tickets' natural order (``ENG-5`` before ``ENG-30``) from where the last tick stopped, so
each of N watched PRs is polled within ⌈N / MAX_FEEDBACK_PRS_PER_TICK⌉ ticks. The cursor holds
at most ``MAX_WATCHED_PRS`` PRs; past that the earliest learned are dropped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import dagster as dg
from pydantic import BaseModel, Field, ValidationError, field_validator

from veranda_dagster.domain.core.bounds import (
    MATERIALIZATIONS_PER_TICK,
    MAX_FEEDBACK_PRS_PER_TICK,
    MAX_WATCHED_PRS,
    PR_FEEDBACK_POLL_INTERVAL_S,
)
from veranda_dagster.domain.core.errors import InputError, TransientError
from veranda_dagster.domain.core.forge_port import Forge, human_comments
from veranda_dagster.domain.deliver.progress import comments_digest
from veranda_dagster.forges.registry import forge_provider
from veranda_dagster.http.client import HttpAuthError
from veranda_dagster.partitions import TICKET_JOB, TICKET_TAG
from veranda_dagster.resources.forge import DEFAULT_FORGE, ForgeResource
from veranda_dagster.sources.dedup import ticket_holds
from veranda_dagster.sources.sensor_status import sensor_default_status

PULL_REQUEST = dg.AssetKey("pull_request")
FEEDBACK = dg.AssetKey("feedback")
PrUrlParser = Callable[[str], tuple[str, int] | None]
"""``(repo, number)`` of a PR/MR URL on the configured forge (``ForgeResource.parse_pr_url``)."""


class WatchedPR(BaseModel):
    repo: str
    number: int
    seen: list[str] = Field(default_factory=list)
    """Ids of the human comments already asked for."""

    @field_validator("seen", mode="before")
    @classmethod
    def _forget_high_water_marks(cls, value: Any) -> Any:
        """Cursors written before comments had one id space held two numeric high-water
        marks, which cannot be compared with ids: they are read as nothing seen, so each such
        PR gets one more ``feedback`` run, which answers only comments it has not handled."""
        if isinstance(value, list) and any(isinstance(v, int) for v in value):
            return []
        return value


class FeedbackCursor(BaseModel):
    after: int | None = None
    """Storage id of the last ``pull_request`` materialization read."""
    after_feedback: int | None = None
    prs: dict[str, WatchedPR] = Field(default_factory=dict)
    """The watched PRs by ticket, in the order they were learned (at most ``MAX_WATCHED_PRS``)."""
    done: list[str] = Field(default_factory=list)
    """Read from cursors written before PRs were forgotten; emptied on parse."""
    next_after: str | None = None
    """The ticket polled last: the next tick starts after it (round-robin)."""

    @classmethod
    def parse(cls, raw: str | None) -> FeedbackCursor:
        if not raw:
            return cls()
        try:
            cursor = cls.model_validate(json.loads(raw))
        except (ValueError, ValidationError):
            raise InputError("pr_feedback: the stored cursor is not valid JSON") from None
        for key in cursor.done:
            cursor.prs.pop(key, None)
        cursor.done = []
        return cursor

    def forget_oldest(self) -> None:
        """Keep the cursor bounded: drop the PRs learned earliest past ``MAX_WATCHED_PRS``."""
        for key in list(self.prs)[: max(0, len(self.prs) - MAX_WATCHED_PRS)]:
            del self.prs[key]

    def due(self) -> list[str]:
        """This tick's PRs: the next ``MAX_FEEDBACK_PRS_PER_TICK`` after ``next_after`` in
        ticket order, wrapping around."""
        order = sorted(self.prs, key=ticket_order)
        start = 0
        if self.next_after is not None:
            last = ticket_order(self.next_after)
            start = next((i for i, k in enumerate(order) if ticket_order(k) > last), 0)
        return (order[start:] + order[:start])[:MAX_FEEDBACK_PRS_PER_TICK]

    def dump(self) -> str:
        return json.dumps(self.model_dump(), sort_keys=True)


def ticket_order(key: str) -> tuple[tuple[int, int | str], ...]:
    """Natural order: ``ENG-5`` < ``ENG-30`` (numbers compare as numbers), then the key."""
    parts = re.split(r"(\d+)", key)
    return (
        *((0, int(p)) if p.isdigit() else (1, p.lower()) for p in parts if p),
        (1, key),
    )


def _meta(record: Any) -> tuple[str | None, dict[str, Any]]:
    mat = record.asset_materialization
    if mat is None:
        return None, {}
    return mat.partition, {k: getattr(v, "value", v) for k, v in (mat.metadata or {}).items()}


def _materialized_since(
    instance: dg.DagsterInstance, asset: dg.AssetKey, after: int | None
) -> list[tuple[int, str | None, dict[str, Any]]]:
    """``asset``'s materializations after storage id ``after``, oldest first, at most
    ``MATERIALIZATIONS_PER_TICK``: (storage id, partition, metadata values)."""
    result = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=asset, after_storage_id=after),
        limit=MATERIALIZATIONS_PER_TICK,
        ascending=True,
    )
    return [(record.storage_id, *_meta(record)) for record in result.records]


def _learn_prs(
    instance: dg.DagsterInstance, cursor: FeedbackCursor, parse_pr_url: PrUrlParser
) -> None:
    for stored, key, meta in _materialized_since(instance, PULL_REQUEST, cursor.after):
        cursor.after = stored
        parsed = parse_pr_url(str(meta.get("pr_url") or ""))
        if key and parsed:
            repo, number = parsed[0], int(meta.get("pr_number") or parsed[1])
            known = cursor.prs.get(key)
            if known is None or (known.repo, known.number) != (repo, number):
                cursor.prs[key] = WatchedPR(repo=repo, number=number)
    for stored, key, meta in _materialized_since(instance, FEEDBACK, cursor.after_feedback):
        cursor.after_feedback = stored
        if key and meta.get("outcome") == "bound_reached":
            cursor.prs.pop(key, None)  # finished: forgotten, so the cursor stays bounded
    cursor.forget_oldest()


def feedback_run_request(key: str, batch: str) -> dg.RunRequest:
    return dg.RunRequest(
        partition_key=key,
        asset_selection=[FEEDBACK],
        run_key=f"{key}:feedback:{batch}",
        tags={TICKET_TAG: key, "veranda/feedback-run": "1"},
    )


def poll_pr_feedback(
    instance: dg.DagsterInstance,
    forge: Forge,
    raw_cursor: str | None,
    log: Any,
    parse_pr_url: PrUrlParser | None = None,
) -> dg.SensorResult | dg.SkipReason:
    """One tick over ``forge`` (any ``domain.core.forge_port.Forge``: GitHub's comments, GitLab's
    notes and discussions); ``parse_pr_url`` reads the forge's PR/MR URLs (GitHub's by
    default)."""
    cursor = FeedbackCursor.parse(raw_cursor)
    _learn_prs(instance, cursor, parse_pr_url or forge_provider(DEFAULT_FORGE).parse_pr_url)
    watched = cursor.due()
    if not watched:
        return dg.SensorResult(
            skip_reason=dg.SkipReason("pr_feedback: no ticket pull requests to watch"),
            cursor=cursor.dump(),
        )
    requests: list[dg.RunRequest] = []
    cursor.next_after = watched[-1]
    busy = ticket_holds(instance, watched).in_flight  # one query for the tick's PRs
    for key in watched:
        if key in busy:  # its run is still going: a feedback run now would be refused as a
            continue  # twin and its comments marked seen; they are asked for next round
        pr = cursor.prs[key]
        try:
            comments = human_comments(forge, pr.repo, pr.number)
        except (TransientError, InputError) as exc:  # a slow, huge or bad answer: this PR only
            log.warning(f"pr_feedback: {key} ({pr.repo}#{pr.number}) not polled: {exc}")
            continue
        if comments.truncated:
            log.warning(f"pr_feedback: {key}: comments cut at the list bound: {comments.truncated}")
        listed = [c.id for c in comments]
        if set(listed) - set(pr.seen):
            requests.append(feedback_run_request(key, comments_digest(listed)))
        pr.seen = listed
    return dg.SensorResult(run_requests=requests, cursor=cursor.dump())


@dg.sensor(
    name="pr_feedback",
    job_name=TICKET_JOB,
    minimum_interval_seconds=PR_FEEDBACK_POLL_INTERVAL_S,
    default_status=sensor_default_status(),
    description="New human comments on a ticket's pull request -> re-materialize its feedback.",
)
def pr_feedback(
    context: dg.SensorEvaluationContext, forge: ForgeResource
) -> dg.SensorResult | dg.SkipReason:
    if not forge.configured:
        return dg.SkipReason(
            f"the forge ({forge.forge}) is not configured: set {forge.token_env} to watch "
            "pull/merge request comments"
        )
    client = forge.client()
    try:
        return poll_pr_feedback(
            context.instance, client, context.cursor, context.log, forge.parse_pr_url
        )
    except HttpAuthError as exc:
        raise HttpAuthError(f"{exc}; check {forge.token_env}") from None
    finally:
        client.close()
