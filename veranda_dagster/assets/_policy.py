"""Each phase's Dagster policy, built from its spec in the phase registry (``domain.core.phases``).

A model phase is not a git push: a model turn costs money and minutes, so model phases retry
once with a long backoff, while API-only phases (fetching a ticket, building the context pack,
opening a pull request) retry a few times quickly. Which *errors* retry is decided by type in
``_shell``: only an error whose ``retryable`` is true (``TransientError``, a ``VendorError``
for an upstream or unreachable vendor) or an unexpected exception reaches the ``RetryPolicy``;
input and config errors fail the step at once with ``dg.Failure(allow_retries=False)``.

``VERANDA_MODEL_RETRY_DELAY_S``, when set, replaces every model phase's base delay (30 s for
``repo_guess``, 60 s for ``ci_outcome``, 120 s for the rest), so an operator (or an end-to-end
test that injects a 5xx) need not wait minutes. It is read where the ``Definitions`` are built
(``definitions.build_definitions`` calls ``with_model_retry_delay``), never at import: the asset
decorators take each phase's own policy, and every phase asset is declared through
``dagster_asset``, which keeps its declaration so the built Definitions can declare the model
phases again with the operator's delay (Dagster has no public way to replace an asset's op
retry policy afterwards, and a job's ``op_retry_policy`` only fills in for ops that have none,
one policy for all). A Dagster process caches the loaded definitions, so a new value takes
effect in a new process — every run worker in the simulation is one.

Each timeout (from the spec) is the wall-clock bound of one attempt, enforced by the shell
(``PhaseTimeoutError``, retryable).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import dagster as dg

from veranda_dagster.concurrency import FORGE_POOL, FORGE_WRITING_PHASES, MODEL_POOL
from veranda_dagster.domain.core import phases
from veranda_dagster.domain.core.phases import AGENT_TURN_S, GIT_AND_API_S, Phase, Retry
from veranda_dagster.resources.forge import requested_forges
from veranda_dagster.resources.sources_enabled import requested_sources
from veranda_dagster.settings import env_number

__all__ = ["AGENT_TURN_S", "GIT_AND_API_S", "PHASES", "PhaseSpec", "dagster_asset"]

OWNER = "team:veranda"

MODEL_RETRY_DELAY_ENV = "VERANDA_MODEL_RETRY_DELAY_S"


def model_retry_delay_override() -> float | None:
    """The operator's model-phase retry delay in seconds, or None to keep each phase's own; a
    value that is not a non-negative number is a ``ConfigError`` naming the variable."""
    return env_number(MODEL_RETRY_DELAY_ENV, None, float, allow_zero=True)


def retry_policy(
    retry: Retry, calls_model: bool, model_delay_s: float | None = None
) -> dg.RetryPolicy:
    """The spec's retry as Dagster's; ``model_delay_s`` (the operator's, when set) replaces the
    base delay of a model phase."""
    delay = retry.delay_s
    if calls_model and model_delay_s is not None:
        delay = model_delay_s
    return dg.RetryPolicy(
        max_retries=retry.max_retries,
        delay=delay,
        backoff=dg.Backoff.EXPONENTIAL,
        jitter=dg.Jitter.PLUS_MINUS,
    )


PIPELINE_GROUP = "veranda"
"""Every phase's Dagster group. One group on purpose: the UI draws no group boxes around a
single group ('if-varied'), so the global lineage opens as the whole chain, left to right,
instead of four collapsed stage boxes; each phase's stage is its ``veranda/stage`` tag."""


@dataclass(frozen=True)
class PhaseSpec:
    name: str
    group: str
    timeout_s: float
    retry: dg.RetryPolicy
    kinds: frozenset[str] = field(default_factory=frozenset)
    model: bool = False
    """Whether the phase pays for model turns (tagged, so a UI filter finds the costly steps)."""
    forge: bool = False
    """Whether a phase without model turns writes to the forge (opens the pull request)."""

    @property
    def pool(self) -> str | None:
        """The concurrency pool the step claims a slot of, in every run that executes it: a
        sensor's ticket run, a backfill, a UI materialization or a re-execution alike."""
        if self.model:
            return MODEL_POOL
        return FORGE_POOL if self.forge else None

    @classmethod
    def of(cls, phase: Phase) -> PhaseSpec:
        """``phase``'s policy; its kinds are the registry's, placeholders (``tracker``,
        ``forge``) included, named for the deployment where the Definitions are built
        (``with_configured_kinds``)."""
        return cls(
            name=phase.name,
            group=phase.stage,
            timeout_s=phase.timeout_s,
            retry=retry_policy(phase.retry, phase.calls_model),
            kinds=phase.kinds,
            model=phase.calls_model,
            forge=phase.name in FORGE_WRITING_PHASES,
        )

    @property
    def op_tags(self) -> dict[str, str]:
        return {
            "veranda/phase": self.name,
            "veranda/timeout_s": str(int(self.timeout_s)),
            "veranda/model_phase": "true" if self.model else "false",
        }

    @property
    def tags(self) -> dict[str, str]:
        return {"veranda/stage": self.group, "veranda/model": "true" if self.model else "false"}


def configured_names() -> dict[str, frozenset[str]]:
    """The registry's placeholder kinds, named as this deployment configures them, read where
    the Definitions are built by the same functions the resources read them with (the orgs file
    included). The names are shown as written: a source or forge that does not exist is refused
    by the resources built beside them, naming the choices."""
    return {
        phases.TRACKER: frozenset(requested_sources()),
        phases.FORGE: frozenset(requested_forges()),
    }


def shown_kinds(kinds: frozenset[str], names: dict[str, frozenset[str]]) -> frozenset[str]:
    """``kinds`` with ``tracker``/``forge`` replaced by the configured systems' names, so the
    UI's kind icons say GitLab on a GitLab deployment and the domain never names either."""
    return frozenset(k for kind in kinds for k in names.get(kind, {kind}))


def with_configured_kinds(
    assets: Sequence[dg.AssetsDefinition], names: dict[str, frozenset[str]]
) -> list[dg.AssetsDefinition]:
    """``assets`` with each placeholder kind named for this deployment (``configured_names``),
    applied by ``definitions.py`` when it builds the Definitions, never at import."""

    def named(spec: dg.AssetSpec) -> dg.AssetSpec:
        return spec.replace_attributes(kinds=set(shown_kinds(frozenset(spec.kinds), names)))

    return list(dg.map_asset_specs(named, list(assets)))


PHASES: dict[str, PhaseSpec] = {name: PhaseSpec.of(p) for name, p in phases.PHASES.items()}


@dataclass(frozen=True)
class Declaration:
    """What one phase asset was declared from, so it can be declared again with another retry
    policy where the Definitions are built."""

    spec: PhaseSpec
    description: str
    hooks: set[dg.HookDefinition] | None
    compute: Callable[..., Any]


DECLARATIONS: dict[str, Declaration] = {}
"""Phase name -> its declaration, filled by ``dagster_asset`` as the asset modules import."""


def dagster_asset(
    spec: PhaseSpec, description: str, hooks: set[dg.HookDefinition] | None = None
) -> Callable[[Callable[..., Any]], dg.AssetsDefinition]:
    """``@dg.asset`` with everything a phase shares: the tickets partitions, its group, kinds,
    owner, tags, timeout and retry policy, so each asset module states only what differs."""

    def declare(compute: Callable[..., Any]) -> dg.AssetsDefinition:
        DECLARATIONS[spec.name] = Declaration(spec, description, hooks, compute)
        return _phase_asset(spec, description, hooks)(compute)

    return declare


def with_model_retry_delay(
    assets: Sequence[dg.AssetsDefinition], model_delay_s: float | None
) -> list[dg.AssetsDefinition]:
    """``assets`` with every model phase declared again under the operator's retry delay
    (``model_retry_delay_override``, read by the caller where the Definitions are built); the
    others, and all of them when no delay is set, are returned as they are."""
    if model_delay_s is None:
        return list(assets)
    out: list[dg.AssetsDefinition] = []
    for asset in assets:
        name = asset.key.path[-1]
        declared = DECLARATIONS.get(name)
        if declared is None:
            raise KeyError(f"asset {name!r} was not declared through dagster_asset")
        if not declared.spec.model:
            out.append(asset)
            continue
        retry = retry_policy(phases.PHASES[name].retry, True, model_delay_s)
        spec = replace(declared.spec, retry=retry)
        out.append(_phase_asset(spec, declared.description, declared.hooks)(declared.compute))
    return out


def _phase_asset(
    spec: PhaseSpec, description: str, hooks: set[dg.HookDefinition] | None
) -> Callable[[Callable[..., Any]], dg.AssetsDefinition]:
    from veranda_dagster.partitions import TICKETS

    return dg.asset(
        partitions_def=TICKETS,
        group_name=PIPELINE_GROUP,
        kinds=spec.kinds,
        owners=[OWNER],
        tags=spec.tags,
        op_tags=spec.op_tags,
        retry_policy=spec.retry,
        pool=spec.pool,
        description=description,
        hooks=hooks,
    )
