"""The shell every phase asset shares: time the one domain call, bound it, type its failure,
and turn its value into the metadata the UI and the metrics read. ``phase_asset`` declares an
asset by that call alone, so each asset module states only what differs: what the phase needs,
what it calls and what it reports.

Metadata keys are a contract with the ops/report side: ``duration_s``, ``outcome``,
``model_calls``, ``usd``, ``tokens_in``, ``tokens_out``, ``backend`` (``vendor/mode`` of the
last call), ``model``, ``tier``, ``reason`` — plus phase-specific keys from the asset module.
``model_calls`` and ``usd`` are what this attempt paid; work it reused from an earlier run adds
``reused`` (what, from which run), ``reused_calls`` and ``reused_usd``, never counted twice.
No config value (tokens, URLs with passwords) is ever put in metadata.
"""

from __future__ import annotations

import inspect
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import dagster as dg
from dagster._core.errors import DagsterInvalidPropertyError
from pydantic import BaseModel

from veranda_dagster.assets._code_references import SOURCE_ATTR
from veranda_dagster.assets._phase_kill import already_running, kill_started_since, stop_thread
from veranda_dagster.assets._policy import PhaseSpec, dagster_asset
from veranda_dagster.assets._run_title import copy_run_title, tag_run_title
from veranda_dagster.domain.core.errors import (
    StoredValueError,
    TicketRunInProgressError,
    TransientError,
    VerandaError,
)
from veranda_dagster.domain.core.models import CarriesOrder, PhaseValue, Ticket, WorkOrder
from veranda_dagster.domain.core.orgs import org_of
from veranda_dagster.domain.core.provenance import in_run
from veranda_dagster.domain.core.run_failure import failure_detail, failure_headline
from veranda_dagster.domain.core.work_order import carried, order_from
from veranda_dagster.partitions import TICKET_TAG
from veranda_dagster.resources.domain_calls import DOMAIN_CALLS_KEY, DomainCalls
from veranda_dagster.storage import ValueStore

V = TypeVar("V", bound=BaseModel)

Precondition = Callable[[Mapping[str, object]], None]
"""What must hold of a phase's inputs (upstream values by name, and ``partition_key``) before its
call runs; it raises a ``VerandaError`` (typed, not retried) when it does not."""

PHASE_CALLS: dict[str, Callable[..., BaseModel]] = {}
"""Each phase's own call (the undecorated function its asset runs), by phase name, as the
phase's asset module (``veranda_dagster.assets.<phase>``) declares it: a test calls one with
resources of its choosing, and a phase without one is found missing against the registry."""

ASSET_MODULES = "veranda_dagster.assets"

ORDER = "order"
"""The parameter a phase's call names to be handed its ``WorkOrder`` (the ticket and the pack,
carried by its predecessor's value): not an upstream asset, so not an edge of the lineage."""
VALUE_STORE = "value_store"
"""The resource an order is rebuilt from when the predecessor's value predates orders."""


def declare_call(phase: str, call: Callable[..., V]) -> Callable[..., V]:
    """Record ``call`` as ``phase``'s own call (``PHASE_CALLS``) when it lives in the phase's
    own asset module; an asset declared anywhere else (a test's) is not the phase's."""
    if call.__module__ == f"{ASSET_MODULES}.{phase}":
        PHASE_CALLS[phase] = call
    return call


class PhaseTimeoutError(TransientError):
    """One attempt of a phase ran past its declared wall-clock bound."""


def call_with_timeout(fn: Callable[[], V], timeout_s: float, phase: str) -> V:
    """Run ``fn`` on a daemon thread and wait at most ``timeout_s``.

    The domain call has its own inner bounds (agent turn, git, validation); this is the outer
    one, so a hang the inner bounds missed still ends the step. Steps share the run worker's
    process (in-process executor), so at the bound everything the phase started is killed and
    its thread stopped (``_phase_kill``): the next attempt starts with nothing of this one
    still running.
    """
    started = already_running()
    values: list[V] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            values.append(fn())
        except BaseException as exc:
            errors.append(exc)

    worker = threading.Thread(target=target, name=f"veranda-{phase}", daemon=True)
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        killed = kill_started_since(started)
        stop_thread(worker, PhaseTimeoutError)
        detail = f"; killed {len(killed)} process(es) it started" if killed else ""
        raise PhaseTimeoutError(f"phase {phase} exceeded its {timeout_s:g} s timeout{detail}")
    if errors:
        raise errors[0]
    return values[0]


IN_PROGRESS = [
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
    dg.DagsterRunStatus.CANCELING,
]
PARTITION_TAG = "dagster/partition"
"""Dagster's own tag on every partitioned run: it finds the runs launched without ours
(a backfill, a materialization from the UI)."""


def older_run_in_progress(instance: dg.DagsterInstance, run_id: str, key: str) -> str | None:
    """The first-created other run of ticket ``key`` still in progress, if it was created
    before ``run_id``; else ``None``. Only the younger of two twins yields, so the older one's
    own later steps, asking the same question, carry on."""
    mine = instance.get_run_record_by_id(run_id)
    my_place = (mine.create_timestamp.timestamp() if mine else math.inf, run_id)
    others: dict[str, float] = {}
    for tags in ({TICKET_TAG: key}, {PARTITION_TAG: key}):
        records = instance.get_run_records(filters=dg.RunsFilter(tags=tags, statuses=IN_PROGRESS))
        for record in records:
            if record.dagster_run.run_id != run_id:
                others[record.dagster_run.run_id] = record.create_timestamp.timestamp()
    older = sorted((at, other) for other, at in others.items() if (at, other) < my_place)
    return older[0][1] if older else None


def tag_with_ticket(instance: dg.DagsterInstance, run: dg.DagsterRun, key: str) -> None:
    """Give a run launched without ``ticket_run``'s tags (a backfill, a materialization from
    the UI: the implicit asset job) the ticket tag, so filtering runs by ticket finds it."""
    if run.tags.get(TICKET_TAG) != key:
        instance.add_run_tags(run.run_id, {TICKET_TAG: key})


CLEARED_RUNS_REMEMBERED = 64
"""Runs this process remembers as cleared by the twin check (the oldest forgotten first): a
run worker holds one run, the in-process executor runs all of its steps, so this only needs
to outlast one run; a forgotten run is simply asked about again."""

_cleared_runs: OrderedDict[str, None] = OrderedDict()
_cleared_lock = threading.Lock()


def refuse_a_twin(context: dg.AssetExecutionContext) -> None:
    """Every phase asks first, so a run that starts mid-graph (re-executed from failure) is
    held to the same rule as one that starts at ``ticket``: before any model call.

    The answer is asked once per run and process (up to four runs queries per phase were about
    a tenth of a run's execution CPU, docs/benchmarks.md): once a run has found no older twin
    in progress, none can appear later. A run created afterwards is younger (its creation time
    comes later), so it is the one that yields, at its own first phase; an older run that has
    finished never returns to in progress (a retry or a re-execution is a new, younger run)."""
    if not context.has_partition_key:
        return
    run_id = _run_id(context)
    if not run_id:
        return  # invoked directly (a unit test): not a run, so it has no twin
    with _cleared_lock:
        if run_id in _cleared_runs:
            return
    tag_with_ticket(context.instance, context.run, context.partition_key)
    copy_run_title(context.instance, context.run, context.partition_key)
    other = older_run_in_progress(context.instance, run_id, context.partition_key)
    if other is not None:
        raise TicketRunInProgressError(context.partition_key, other, run_id)
    _remember_cleared(run_id)


def _remember_cleared(run_id: str) -> None:
    with _cleared_lock:
        _cleared_runs[run_id] = None
        while len(_cleared_runs) > CLEARED_RUNS_REMEMBERED:
            _cleared_runs.popitem(last=False)


def _run_id(context: dg.AssetExecutionContext) -> str:
    try:
        return context.run.run_id
    except DagsterInvalidPropertyError:
        return ""


def _typed_failure(spec: PhaseSpec, exc: VerandaError) -> dg.Failure:
    """The step's failure, headed by its root cause in one line (``failure_headline``): the
    run page, the ticket's note and ``veranda sim notes`` all read this, not a wrapper's
    "Exceeded max_retries"."""
    kind = type(exc).__name__
    detail = failure_detail(str(exc))
    headline = failure_headline(spec.name, kind, detail)
    whole = f"{spec.name}: {kind}: {exc}"  # the full message below it, as before (a test log)
    return dg.Failure(
        description=headline if whole == headline else f"{headline}\n\n{whole}",
        metadata={
            "error": kind,
            "detail": detail,
            "outcome": "failed",
            "retryable": bool(getattr(exc, "retryable", False)),
        },
        allow_retries=False,
    )


def _last_attempt(context: dg.AssetExecutionContext, spec: PhaseSpec) -> bool:
    """Whether the step's RetryPolicy has no attempt left after this one."""
    try:
        attempt = int(context.retry_number)
    except (DagsterInvalidPropertyError, AttributeError, TypeError):
        return False  # invoked directly (a unit test): leave retrying to the caller
    return attempt >= int(spec.retry.max_retries if spec.retry else 0)


def call_metadata(value: BaseModel) -> dict[str, Any]:
    """Totals, and the last call's resolution when there was a call: a phase that called no
    model shows its zero totals, not four rows of ``none`` (``CALL_METADATA`` is optional)."""
    calls = value.calls if isinstance(value, PhaseValue) else []
    last = calls[-1] if calls else None
    resolution = (
        {
            "backend": f"{last.vendor}/{last.mode}",
            "model": last.model,
            "tier": last.tier,
            "reason": last.reason,
        }
        if last
        else {}
    )
    return {
        **reuse_metadata(value),
        "model_calls": len(calls),
        "usd": float(value.usd) if isinstance(value, PhaseValue) else 0.0,
        "tokens_in": int(value.tokens_in) if isinstance(value, PhaseValue) else 0,
        "tokens_out": int(value.tokens_out) if isinstance(value, PhaseValue) else 0,
        **resolution,
    }


def reuse_metadata(value: BaseModel) -> dict[str, Any]:
    """What the value reused instead of redoing, and from which run (none: no keys)."""
    reused = value.reused if isinstance(value, PhaseValue) else []
    if not reused:
        return {}
    said = [
        f"{r.what} from run {r.run_id[:8] or '(unrecorded)'} ({r.model_calls} call(s), "
        f"${r.usd:.4f})"
        for r in reused
    ]
    return {
        "reused": "; ".join(said),
        "reused_calls": sum(r.model_calls for r in reused),
        "reused_usd": round(sum(r.usd for r in reused), 6),
    }


def has_value(value: Any) -> bool:
    """Whether a metadata value says something: not ``None``, not blank text (plain or in a
    ``MetadataValue``). Zero is a value; nothing is not."""
    inner = value.value if isinstance(value, dg.MetadataValue) else value
    if inner is None:
        return False
    return not isinstance(inner, str) or bool(inner.strip())


def phase_metadata(
    value: BaseModel, duration_s: float, outcome: str, extra: Mapping[str, Any]
) -> dict[str, Any]:
    """The materialization's rows; a row with nothing to say is left out, not shown empty
    (the keys that can be absent are the phase's ``optional_keys``)."""
    rows = {
        "duration_s": round(float(duration_s), 3),
        "outcome": outcome,
        **call_metadata(value),
        **dict(extra),
    }
    return {key: row for key, row in rows.items() if has_value(row)}


def _title_the_run(context: dg.AssetExecutionContext, title: str) -> None:
    try:
        run = context.run
    except DagsterInvalidPropertyError:
        return  # invoked directly (a unit test): no run to tag
    tag_run_title(context.instance, run, title)


def _observe(context: dg.AssetExecutionContext, phase: str, value: BaseModel, secs: float) -> None:
    """Feed the Prometheus side; metrics are optional, so only an absent module is skipped."""
    try:
        from veranda_dagster.observability.metrics import observe_phase
    except ImportError:
        return
    try:
        observe_phase(phase, value, secs)
    except Exception as exc:  # metrics must never fail the paid-for work
        context.log.warning(f"metrics for phase {phase} not recorded: {type(exc).__name__}")


def run_phase(
    context: dg.AssetExecutionContext,
    spec: PhaseSpec,
    call: Callable[[], V],
    outcome: Callable[[V], str],
    details: Callable[[V], Mapping[str, Any]],
    spend: Callable[[V], Mapping[str, float]] = lambda _v: {},
    *,
    domain: DomainCalls,
    inputs: Mapping[str, object],
    precondition: Precondition | None = None,
    order: WorkOrder | None = None,
) -> dg.Output[V]:
    """Run one phase's domain call (through ``domain``, which a test may script from the
    phase's upstream ``inputs``, its work ``order`` and the partition key) and wrap its value
    for the IO manager, handing ``order`` on in it (``CarriesOrder``); ``spend``: the ticket's
    spend and caps after it, as numeric metadata. The phase's ``precondition`` on those
    inputs is the asset's own rule, so it holds before any call, scripted or real."""
    started = time.monotonic()
    try:
        refuse_a_twin(context)
        run_id = _run_id(context)
        key = {"partition_key": context.partition_key} if context.has_partition_key else {}
        given = {**key, **inputs, **({ORDER: order} if order is not None else {})}
        if precondition is not None:
            precondition(given)
        value = call_with_timeout(
            lambda: in_run(run_id, lambda: domain.call(spec.name, call, given), spec.name),
            spec.timeout_s,
            spec.name,
        )
    except VerandaError as exc:
        if getattr(exc, "retryable", False) and not _last_attempt(context, spec):
            raise
        raise _typed_failure(spec, exc) from exc
    secs = time.monotonic() - started
    if order is not None:
        value = carried(value, order)
    if isinstance(value, Ticket) and context.has_partition_key:
        _title_the_run(context, value.title)
    result = outcome(value)
    _observe(context, spec.name, value, secs)
    extra = {**details(value), **_truncation(context, spec.name, value)}
    extra.update(_spend(context, spec.name, spend, value))
    return dg.Output(value, metadata=phase_metadata(value, secs, result, extra))


def _spend(
    context: dg.AssetExecutionContext,
    phase: str,
    spend: Callable[[V], Mapping[str, float]],
    value: V,
) -> dict[str, float]:
    """The ledger's figures; a ledger that cannot be read costs the metadata, not the work."""
    try:
        return {k: float(v) for k, v in spend(value).items()}
    except Exception as exc:
        context.log.warning(f"{phase}: spend metadata not read: {type(exc).__name__}")
        return {}


def ledger_figures(
    upstream: Mapping[str, Any], order: WorkOrder | None
) -> Callable[[BaseModel], Mapping[str, float]]:
    """The ticket's spend and caps (``AgentsResource.spend_metadata``), read after the phase
    through the agents resource it was given (a phase that asked for none reports none); the org
    is the pack's repository's (the work order's), once there is one."""
    agents = upstream.get("agents")
    if agents is None or not hasattr(agents, "spend_metadata"):
        return lambda _v: {}
    repo = str(order.pack.repo if order is not None and order.pack is not None else "")
    org = org_of(repo) if "/" in repo else ""

    def figures(value: BaseModel) -> Mapping[str, float]:
        ticket_id = getattr(value, "ticket_id", None) or getattr(value, "id", None)
        return agents.spend_metadata(str(ticket_id), org) if ticket_id else {}

    return figures


def _truncation(context: dg.AssetExecutionContext, phase: str, value: BaseModel) -> dict[str, str]:
    """A forge list the phase read was cut at its bound (``truncated`` on its value): said in
    the run log and the metadata, never silent."""
    cuts = [str(c) for c in getattr(value, "truncated", None) or []]
    for cut in cuts:
        context.log.warning(f"{phase}: a list was cut at its bound: {cut}")
    return {"lists_truncated": "; ".join(cuts)} if cuts else {}


def work_order(
    context: dg.AssetExecutionContext,
    spec: PhaseSpec,
    store: ValueStore | None,
    inputs: Mapping[str, object],
) -> WorkOrder:
    """The order the phase works from, off its one upstream value (its predecessor); a value
    stored before orders were carried has it rebuilt from the partition's stored ``ticket`` and
    ``context_pack``. A stored value that is missing or of the wrong shape fails the step as
    a typed failure, before any call."""
    (upstream,) = inputs.values()
    try:
        if not isinstance(upstream, BaseModel):
            raise StoredValueError(f"{spec.name}: its upstream is a {type(upstream).__name__}")
        return order_from(upstream, lambda asset: _stored(store, asset, context.partition_key))
    except VerandaError as exc:
        raise _typed_failure(spec, exc) from exc


def _stored(store: ValueStore | None, asset: str, key: str) -> BaseModel:
    if store is None:  # a phase whose predecessor is the ticket never asks
        raise StoredValueError(f"asset {asset!r} partition {key!r}: no value store to read it")
    return store.load(asset, key)


def phase_asset(
    spec: PhaseSpec,
    value_type: type[V],
    description: str,
    *,
    outcome: Callable[[V], str],
    details: Callable[[V], Mapping[str, Any]],
    hooks: set[dg.HookDefinition] | None = None,
    precondition: Precondition | None = None,
) -> Callable[[Callable[..., V]], dg.AssetsDefinition]:
    """Declare a phase's asset by its one domain call, so the asset module reads as a table of
    contents: what the phase needs, what it calls, what it reports.

    The decorated ``call`` names as parameters the resources and upstream values it needs
    (Dagster reads the lineage from them), plus ``context`` only when it reads the partition
    key and ``order`` when it works from the ticket or the pack, and returns the phase's
    value, of ``value_type`` (named up front so ``outcome`` and ``details`` are type-checked
    against it). A call with an ``order`` (or a value that carries one) names exactly one
    upstream value, its predecessor: the order rides in the values, so the lineage is the
    chain. The asset around it is the one every phase shares: ``run_phase`` with ``outcome``
    and ``details`` as the phase's own metadata."""

    def declare(call: Callable[..., V]) -> dg.AssetsDefinition:
        signature = inspect.signature(call, eval_str=True)
        if signature.return_annotation is not value_type:
            raise TypeError(f"{call.__name__} must be annotated to return {value_type.__name__}")
        if DOMAIN_CALLS_KEY in signature.parameters:
            raise TypeError(f"{call.__name__}: {DOMAIN_CALLS_KEY!r} is the shell's parameter")
        declare_call(spec.name, call)
        passes_context = "context" in signature.parameters
        passes_order = ORDER in signature.parameters
        ordered = passes_order or issubclass(value_type, CarriesOrder)
        needs = [p for p in signature.parameters.values() if p.name not in ("context", ORDER)]
        # an order starts from the ticket itself: only a later predecessor may predate orders
        predecessor = _one_predecessor(call.__name__, needs) if ordered else None
        adds_store = (
            predecessor is not None
            and predecessor.annotation is not Ticket
            and VALUE_STORE not in signature.parameters
        )

        def compute(
            context: dg.AssetExecutionContext, domain: DomainCalls, **upstream: Any
        ) -> dg.Output[V]:
            store = upstream.pop(VALUE_STORE) if adds_store else upstream.get(VALUE_STORE)
            inputs = {
                k: v for k, v in upstream.items() if not isinstance(v, dg.ConfigurableResource)
            }
            order = work_order(context, spec, store, inputs) if ordered else None
            args = {
                **({"context": context} if passes_context else {}),
                **({ORDER: order} if passes_order else {}),
                **upstream,
            }
            return run_phase(
                context,
                spec,
                lambda: call(**args),
                outcome,
                details,
                ledger_figures(upstream, order),
                domain=domain,
                inputs=inputs,
                precondition=precondition,
                order=order,
            )

        context_param = inspect.Parameter(
            "context", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=dg.AssetExecutionContext
        )
        domain_param = inspect.Parameter(
            DOMAIN_CALLS_KEY, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=DomainCalls
        )
        store_param = inspect.Parameter(
            VALUE_STORE, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=ValueStore
        )
        params = [context_param, domain_param, *([store_param] if adds_store else []), *needs]
        returns = dg.Output[value_type]  # type: ignore[valid-type]
        compute.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=params, return_annotation=returns
        )
        compute.__annotations__ = {p.name: p.annotation for p in params}
        compute.__annotations__["return"] = returns
        compute.__name__ = compute.__qualname__ = call.__name__
        compute.__module__, compute.__doc__ = call.__module__, call.__doc__
        setattr(compute, SOURCE_ATTR, call)  # its code reference is the phase's own module
        return dagster_asset(spec, description, hooks)(compute)

    return declare


def _one_predecessor(name: str, needs: list[inspect.Parameter]) -> inspect.Parameter:
    """A call that works from an order reads one upstream value, the one carrying it: a
    second would be an edge out of the chain (a resource is no upstream value)."""
    resource = dg.ConfigurableResource
    values = [
        p
        for p in needs
        if not (isinstance(p.annotation, type) and issubclass(p.annotation, resource))
    ]
    if len(values) != 1:
        raise TypeError(
            f"{name} works from the order its predecessor carries: it names one upstream "
            f"value, not {[p.name for p in values]}"
        )
    return values[0]
