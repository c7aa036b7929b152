"""Pick a healthy vendor for each turn, run it, and say why that one ran.

Order: the vendor owning a pinned model first (if any), then the configured vendor order; in
each vendor its modes in order. A vendor is skipped when its measured health is not ``ok``
(probe cached per process, see ``HealthCache``), or when a turn on it fails with ``auth``,
``quota`` or ``unreachable``: then another mode of the same vendor is tried first, because
staying with the vendor keeps the model, then the other vendors. A tier resolves to a model
id only for the vendor that runs; a pin survives only on its own vendor and is otherwise
dropped and recorded. Every resolution carries its reason into ``ModelCall.reason`` and to the
resolution hooks (ops metrics count them by a low-cardinality label).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from pydantic import BaseModel, Field

from veranda_dagster.domain.core.agent import AgentReply, AgentRequest
from veranda_dagster.domain.core.models import ModelCall
from veranda_dagster.domain.core.spend_meter import current_meter
from veranda_dagster.vendors import cost, registry, tiers
from veranda_dagster.vendors.command import CommandRunner, LoginStep
from veranda_dagster.vendors.config import VendorsConfig
from veranda_dagster.vendors.health import PROCESS_HEALTH, HealthCache
from veranda_dagster.vendors.negotiate import negotiate
from veranda_dagster.vendors.port import (
    HealthVerdict,
    NoHealthyVendorError,
    Vendor,
    VendorError,
    Verdict,
)
from veranda_dagster.vendors.runner import CredentialFileLogin, SubprocessRunner

log = logging.getLogger(__name__)

MAX_PARALLEL_PROBES = 8
"""Probes run at once by ``probe_all``: each is a CLI process, so bound the fan-out."""

FALLBACK_VERDICTS: frozenset[Verdict] = frozenset({"auth", "quota", "unreachable"})
"""A turn failing this way moves to the next vendor; ``upstream``/``turn_failed`` propagate
(the phase's own retry decides), since another vendor cannot fix a bad turn. ``timeout``
propagates too: a CLI still working at its bound was served by a healthy vendor, and the next
vendor would spend another whole bound (a looping real Claude Code did exactly that twice)."""

REASON_LABELS = (
    "preferred",
    "pinned",
    "fallback_auth",
    "fallback_quota",
    "fallback_turn_failed",
    "fallback_upstream",
    "fallback_unreachable",
)


@dataclass(frozen=True)
class Attempt:
    vendor: str
    mode: str
    verdict: Verdict
    detail: str
    stage: str  # "probe" or "turn"

    def __str__(self) -> str:
        return f"{self.vendor}/{self.mode} {self.stage}: {self.verdict} ({self.detail})"


class ResolutionEvent(BaseModel):
    """One resolution, for metrics (``label`` is low-cardinality) and audit (``reason``)."""

    role: str
    vendor: str
    mode: str
    tier: str
    model: str | None
    reason: str
    label: str
    dropped_pin: str | None = None
    attempts: list[str] = Field(default_factory=list)


ResolutionHook = Callable[[ResolutionEvent], None]

RESOLVED_FIELDS = {"vendor", "mode", "tier", "model", "reason", "dropped_pin"}
"""What a resolution event repeats of the call it resolved, field for field."""


def reason_label(reason: str) -> str:
    """``fallback:auth:claude/api_key`` -> ``fallback_auth``; ``preferred``/``pinned`` as is."""
    if reason.startswith("fallback:"):
        return "fallback_" + reason.split(":", 2)[1]
    return reason


class ResolvingAgent:
    """The ``AgentPort`` phases call: health-checked, fallback-aware, cost-accounted."""

    def __init__(
        self,
        config: VendorsConfig,
        vendors: list[Vendor],
        health: HealthCache | None = None,
        hooks: list[ResolutionHook] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.vendors = vendors
        self.health = health or PROCESS_HEALTH
        self.hooks = list(hooks or [])
        self.clock = clock

    def add_hook(self, hook: ResolutionHook) -> None:
        self.hooks.append(hook)

    # --- AgentPort ----------------------------------------------------------------------------

    def instruction_files(self) -> list[str]:
        return _unique(b.capabilities.instruction_file for b in self.vendors)

    def mcp_formats(self) -> list[str]:
        return _unique(b.capabilities.mcp_format for b in self.vendors)

    def run(self, request: AgentRequest) -> AgentReply:
        pin = request.pinned_model
        pin_vendor = self.pin_vendor(pin)
        attempts: list[Attempt] = []
        for vendor in self.order(pin_vendor):
            verdict = self.health.verdict(vendor)
            if verdict.verdict != "ok":
                attempts.append(_attempt(vendor, verdict, "probe"))
                continue
            choice = tiers.choose_model(vendor.vendor, vendor.mode, request.tier, pin, pin_vendor)
            turn, notes = negotiate(
                vendor=vendor.vendor,
                caps=vendor.capabilities,
                prompt=request.prompt,
                workdir=request.workdir,
                model=choice.model,
                effort=request.effort,
                images=request.images,
                timeout_s=request.timeout_s,
                mcp_servers=request.mcp_servers,
            )
            started = self.clock()
            try:
                result = vendor.run(turn)
            except VendorError as exc:
                if exc.verdict not in FALLBACK_VERDICTS or _budget_refused():
                    raise  # a budget refusal is no vendor's fault: no fallback, no health mark
                failed = HealthVerdict(verdict=exc.verdict, detail=exc.detail)
                self.health.mark(vendor, failed)
                attempts.append(_attempt(vendor, failed, "turn"))
                continue
            duration = round(self.clock() - started, 3)
            reason = _reason(attempts, pinned=choice.note == "pinned")
            model = result.model or choice.model
            usd = cost.turn_usd(model, result.usage)
            if usd is None and result.cost_usd is not None:
                usd = round(result.cost_usd, 6)
                notes.append(f"no USD rate for model {model!r}; used the CLI's own cost")
            elif usd is None:
                notes.append(f"no USD rate for model {model!r}; cost recorded as 0")
            if choice.dropped_pin:
                notes.append(str(choice.note))
            notes += [f"skipped {a}" for a in attempts] + result.notes
            call = ModelCall(
                role=request.role,
                vendor=vendor.vendor,
                mode=vendor.mode,
                tier=request.tier,
                model=model,
                reason=reason,
                dropped_pin=choice.dropped_pin,
                usage=result.usage,
                usd=usd or 0.0,
                duration_s=duration,
            )
            self._emit(request, call, attempts)
            return AgentReply(text=result.text, call=call, notes=notes)
        tried = "; ".join(str(a) for a in attempts) or "no vendors configured"
        raise NoHealthyVendorError(f"no vendor could serve {request.role}: {tried}")

    # --- resolution order ---------------------------------------------------------------------

    def pin_vendor(self, pin: str | None) -> str | None:
        """The vendor owning a pin; an id no vendor claims is tried on the preferred vendor."""
        if not pin:
            return None
        owner = tiers.vendor_of_model(pin)
        if owner is None and self.vendors:
            owner = self.vendors[0].vendor
        return owner

    def order(self, pin_vendor: str | None = None) -> list[Vendor]:
        if pin_vendor is None:
            return list(self.vendors)
        first = [b for b in self.vendors if b.vendor == pin_vendor]
        return first + [b for b in self.vendors if b.vendor != pin_vendor]

    def probe_all(self, parallel: int = MAX_PARALLEL_PROBES) -> list[HealthVerdict]:
        """A fresh probe of every vendor, in parallel, recorded in the health cache (the
        ``veranda vendors`` command and readiness checks)."""
        with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
            verdicts = list(pool.map(lambda b: b.probe(), self.vendors))
        for vendor, verdict in zip(self.vendors, verdicts, strict=True):
            self.health.mark(vendor, verdict)
        return verdicts

    def _emit(self, request: AgentRequest, call: ModelCall, attempts: list[Attempt]) -> None:
        event = ResolutionEvent(
            role=request.role,
            label=reason_label(call.reason),
            attempts=[str(a) for a in attempts],
            **call.model_dump(include=RESOLVED_FIELDS),
        )
        for hook in self.hooks:
            try:
                hook(event)
            except Exception:  # a metrics hook must never fail a paid turn
                log.exception("resolution hook failed")


def _budget_refused() -> bool:
    """The turn's proxy refused a request because a spend cap is full (``spend_meter``)."""
    meter = current_meter()
    return meter is not None and meter.refusal is not None


def _attempt(vendor: Vendor, verdict: HealthVerdict, stage: str) -> Attempt:
    return Attempt(vendor.vendor, vendor.mode, verdict.verdict, verdict.detail, stage)


def _reason(attempts: list[Attempt], *, pinned: bool) -> str:
    if attempts:
        first = attempts[0]
        return f"fallback:{first.verdict}:{first.vendor}/{first.mode}"
    return "pinned" if pinned else "preferred"


def _unique(items: Iterable[str]) -> list[str]:
    """First occurrence of each, in order."""
    return list(dict.fromkeys(items))


def build_vendors(
    config: VendorsConfig,
    runner: CommandRunner,
    login: LoginStep,
    environ: Mapping[str, str] | None = None,
) -> list[Vendor]:
    """One vendor per (vendor, mode) in resolution order."""
    vendors: list[Vendor] = []
    for fam in config.vendors:
        info = registry.get(fam.vendor)
        for mode in config.modes_of(fam):
            vendor = info.factory(mode, fam, runner, login, environ)
            if hasattr(vendor, "probe_timeout_s"):
                vendor.probe_timeout_s = config.probe_timeout_s
            vendors.append(vendor)
    return vendors


def build_agent(
    config: VendorsConfig,
    runner: CommandRunner | None = None,
    login: LoginStep | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    health: HealthCache | None = None,
    on_resolution: ResolutionHook | None = None,
) -> ResolvingAgent:
    """The agent phases use. ``runner``/``login`` are the seams (real ones by default);
    ``environ`` is where key variables are read from (``os.environ`` by default)."""
    vendors = build_vendors(
        config, runner or SubprocessRunner(), login or CredentialFileLogin(), environ
    )
    hooks = [on_resolution] if on_resolution else []
    return ResolvingAgent(config, vendors, health=health, hooks=hooks)
