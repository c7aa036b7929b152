"""What every CLI vendor shares: env assembly, credential pre-checks, probe and run.

A vendor module subclasses ``CliVendor`` and supplies its tables (modes, env vars, files,
knobs, and everything the core derives its central tables from: tier ids, model prefixes,
binaries, rates, secret variables, token shapes) plus two functions only it knows:
``build_argv`` and ``parse_stream``; ``registry.VENDORS`` refuses a vendor missing a piece.
The run itself (spawn through the runner seam, parse, classify, raise ``VendorError``) is
written once here, as are the model and effort arguments every argv builds from the declared
flags; the stream-reading mechanics every parser shares are in ``_streams``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Literal, get_args

from veranda_dagster.domain.core.bounds import PROBE_TIMEOUT_S
from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.domain.core.mcp_config import render_mcp_config
from veranda_dagster.domain.core.models import Effort, Tier
from veranda_dagster.domain.core.redaction import TokenShape
from veranda_dagster.sandbox.egress import Egress, KeyCarrier, refused
from veranda_dagster.vendors import health
from veranda_dagster.vendors.command import CommandRunner, LoginStep, RunOutput
from veranda_dagster.vendors.home import private_home
from veranda_dagster.vendors.isolation import TurnIsolation
from veranda_dagster.vendors.plugins._streams import StreamSummary
from veranda_dagster.vendors.port import (
    Capabilities,
    HealthVerdict,
    StreamParseError,
    Turn,
    TurnResult,
    VendorError,
)
from veranda_dagster.vendors.prompt_channel import (
    PromptChannel,
    pointer_prompt,
    prompt_file_path,
    stage_prompt_file,
)
from veranda_dagster.vendors.rates import Rate
from veranda_dagster.vendors.vendor_config import VendorConfig

BASE_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "USER", "TERM", "SHELL", "TZ")
"""Passed to every CLI; nothing else leaks from our environment unless a mode names it."""

PROBE_PROMPT = "Role: probe\nReply with the single word OK."
"""A cheap turn; its ``Role:`` line names the seat as every product prompt does."""

SAME_EFFORT: Mapping[str, str] = {e: e for e in get_args(Effort)}
"""``effort_values`` for a CLI whose knob takes our own low/medium/high words as they are."""


@dataclass(frozen=True)
class ModeSpec:
    name: str
    required_env: tuple[str, ...] = ()
    """All must be set (after the config's name mapping) or the mode is ``auth`` unprobed."""
    any_env: tuple[str, ...] = ()
    """At least one must be set (e.g. an AWS key pair or a profile)."""
    optional_env: tuple[str, ...] = ()
    """Passed when set (regions, profiles, project ids)."""
    fixed_env: Mapping[str, str] = field(default_factory=dict)
    """Set by the vendor, e.g. ``CLAUDE_CODE_USE_BEDROCK=1``."""
    login: bool = False
    """A login/OAuth mode: the login step must report a stored session."""
    credential_paths: tuple[str, ...] = ()
    base_url_env: str | None = None
    """Overrides the vendor's base-URL variable for this mode (e.g. Bedrock's own)."""


@dataclass(frozen=True)
class Install:
    """One exact pin of what a vendor's CLI is installed from: the image (``Dockerfile``) and
    CI (``.ci/run``) install exactly these, checked by ``tests/vendors/test_pins.py``."""

    registry: Literal["npm", "pypi"]
    package: str
    version: str
    docker_arg: str
    """The ``Dockerfile`` ``ARG`` that holds ``version``."""

    @property
    def spec(self) -> str:
        """``package@version`` as npm writes it, ``package==version`` as pip does."""
        joiner = "@" if self.registry == "npm" else "=="
        return f"{self.package}{joiner}{self.version}"


class CliVendor:
    """One vendor CLI in one auth mode; implements the ``Vendor`` port."""

    vendor: ClassVar[str]
    default_binary: ClassVar[str]
    modes: ClassVar[dict[str, ModeSpec]]
    instruction_file: ClassVar[str]
    mcp_format: ClassVar[str]
    vision: ClassVar[bool]
    effort_knob: ClassVar[str | None] = None
    effort_values: ClassVar[Mapping[str, str]] = {}
    model_flag: ClassVar[str | None] = "--model"
    base_url_env: ClassVar[str | None] = None
    default_base_urls: ClassVar[Mapping[str, str]] = {}
    """mode -> where the CLI talks when no ``base_url`` is configured: the credential proxy's
    upstream (the CLI is always given a base URL, so the proxy can stand in for it)."""
    key_carriers: ClassVar[Mapping[str, tuple[KeyCarrier, ...]]] = {}
    """Variable the CLI reads a key from -> where that key travels in a request (a header, a
    ``Bearer`` authorization, a query parameter). The sandbox holds a placeholder instead; the
    proxy puts the real key in exactly these places and refuses a request that has none."""
    unproxied_modes: ClassVar[Mapping[str, str]] = {}
    """mode -> why its credential cannot go through the proxy (request signing, a session file
    the CLI reads itself): such a turn is refused while the sandbox is on."""
    quiet_env: ClassVar[dict[str, str]] = {}
    """Telemetry/auto-update off and the CLI's own retry cap, on every run."""
    home_env: ClassVar[tuple[str, str] | None] = None
    """(variable, folder) for a CLI that keeps its state under its own home variable: with a
    configured ``home`` the variable names that folder inside it (``CODEX_HOME``)."""
    trusts_cli_cost: ClassVar[bool] = False
    """Whether the CLI's own cost figure is right for this vendor (Claude Code on GLM is not)."""
    prompt_channel: ClassVar[PromptChannel] = "stdin"
    """How the prompt reaches the CLI (``vendors.prompt_channel``): never as an argument."""
    token_patterns: ClassVar[tuple[TokenShape, ...]] = ()
    """The shapes of every key and token this vendor issues; the registry hands them to the one
    scrubber (``domain.core.redaction``), so a new vendor brings its own."""
    writes_home_settings: ClassVar[bool] = False
    """Whether the vendor writes the CLI's user settings into its home for a turn (Gemini's
    auth type): such a turn gets an empty private home even when none is configured, removed
    with the turn like every private home."""
    health_rules: ClassVar[tuple[health.Rule, ...]] = ()
    """Failure wordings only this CLI prints, as classifier rules (``health.error_rule``); the
    classifier places them among the shared rules (``health.ordered_rules``)."""
    repo_agent_config: ClassVar[tuple[str, ...]]
    installs: ClassVar[tuple[Install, ...]]
    """What the image and CI install this CLI from, exactly pinned (its runtime too, when it
    needs its own). Required; ``()`` declares a CLI on no public registry (installed by hand)."""
    """Project-level files and folders (relative to the working directory) this CLI reads that
    can run code or grant permissions: hooks, MCP servers, settings, permission grants, plugins
    and commands that execute. They are the repository's, so each turn runs with them masked
    (``vendors.isolation``); instruction files (CLAUDE.md, AGENTS.md) are prompt text and stay
    visible. Required (``registry.missing_pieces``); ``()`` declares that the CLI reads none.
    A vendor whose modes run different CLIs declares the union."""

    # --- what the core's tables are derived from (``registry.missing_pieces`` checks them) ---
    tiers: ClassVar[Mapping[Tier, str]]
    """cheap/standard/high -> this vendor's model id (``tiers.TIERS`` is derived from these)."""
    mode_tiers: ClassVar[Mapping[str, Mapping[Tier, str]]] = {}
    """A mode whose CLI names the models differently (plan aliases, ``provider/model``)."""
    model_prefixes: ClassVar[tuple[str, ...]]
    """Which pinned ids this vendor owns, checked after the exact tier tables: a pin survives
    only on its own vendor, so a missing prefix would move a pinned model elsewhere."""
    rates: ClassVar[Mapping[str, Rate]]
    """USD per 1M tokens of the ids this vendor serves, each with source and date (``cost``)."""
    rate_aliases: ClassVar[Mapping[str, str]] = {}
    """A CLI alias -> the id it resolved to when the rates were taken (Claude's ``opus``)."""
    rate_prefixes: ClassVar[tuple[str, ...]] = ()
    """Provider prefixes (``zai/``) under which a rate row's id may arrive."""
    plan_prefixes: ClassVar[tuple[str, ...]] = ()
    """Ids served on a flat-fee subscription plan, priced per turn at 0."""
    also_spawns: ClassVar[tuple[str, ...]] = ()
    """Executables besides ``default_binary`` a mode may start (the no-real-CLI guard's list)."""
    secret_env: ClassVar[tuple[str, ...]]
    """The variables a deployment provides this vendor's own keys in: each is exported by the
    Helm secret templates and listed in the README. Cloud-provider credentials (Bedrock,
    Vertex, Azure) come from the cluster's workload identity and are not listed."""

    def __init__(
        self,
        mode: str,
        config: VendorConfig,
        runner: CommandRunner,
        login: LoginStep,
        environ: Mapping[str, str] | None = None,
        probe_timeout_s: float = PROBE_TIMEOUT_S,
    ) -> None:
        if mode not in self.modes:
            raise ValueError(f"{self.vendor} has no mode {mode!r}")
        self.mode = mode
        self.spec = self.modes[mode]
        self.config = config
        self.runner = runner
        self.login = login
        self.environ = dict(os.environ if environ is None else environ)
        self.probe_timeout_s = probe_timeout_s
        self._turn_home = threading.local()

    # --- the port ---------------------------------------------------------------------------

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(
            vision=self.vision,
            instruction_file=self.instruction_file,
            mcp_format=self.mcp_format,
            effort_knob=self.effort_knob,
            model_flag=self.model_flag,
            effort_values=dict(self.effort_values),
        )

    @property
    def binary(self) -> str:
        return self.config.binary or self.default_binary

    @property
    def health_key(self) -> tuple[str, ...]:
        return (self.vendor, self.mode, self.binary, self.config.base_url or "")

    def probe(self) -> HealthVerdict:
        """A real cheap turn that names no model, in a scratch directory."""
        missing = self.precheck()
        if missing is not None:
            return missing
        scratch = tempfile.mkdtemp(prefix=f"veranda-probe-{self.vendor}-")
        try:
            turn = Turn(prompt=PROBE_PROMPT, workdir=scratch, model=None, effort="low")
            with self.turn_home():
                out = self._spawn(turn, self.probe_timeout_s)
                verdict, _ = self.outcome(out, turn)
            return verdict
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def run(self, turn: Turn) -> TurnResult:
        missing = self.precheck()
        if missing is not None:
            raise VendorError(missing.verdict, missing.detail)
        timeout = min(turn.timeout_s, self.config.timeout_s or turn.timeout_s)
        with self.turn_home():
            out = self._spawn(turn, timeout)
            verdict, summary = self.outcome(out, turn)
        if verdict.verdict != "ok" or summary is None:
            raise VendorError(verdict.verdict, verdict.detail)
        return TurnResult(
            text=summary.text,
            usage=summary.usage,
            model=summary.model or turn.model,
            events=summary.events,
            cost_usd=summary.cost_usd if self.trusts_cli_cost else None,
        )

    # --- shared machinery -------------------------------------------------------------------

    def precheck(self) -> HealthVerdict | None:
        """Missing credentials are ``auth`` without spawning anything."""
        env = self.credential_env()
        missing = [v for v in self.spec.required_env if not env.get(v)]
        if missing:
            return HealthVerdict(
                verdict="auth",
                detail=f"{self.vendor}/{self.mode}: {', '.join(missing)} not set",
                rule="precheck_env",
            )
        if self.spec.any_env and not any(env.get(v) for v in self.spec.any_env):
            return HealthVerdict(
                verdict="auth",
                detail=f"{self.vendor}/{self.mode}: none of {', '.join(self.spec.any_env)} set",
                rule="precheck_env",
            )
        if self.spec.login:
            status = self.login.ensure(self.vendor, self.mode, self.credential_paths())
            if not status.ok:
                return HealthVerdict(verdict="auth", detail=status.detail, rule="precheck_login")
        return None

    @contextlib.contextmanager
    def turn_home(self) -> Iterator[str | None]:
        """A private copy of the configured ``home`` for one turn (``vendors.home``): the CLI
        runs with it and the vendor reads what the CLI left there before it goes."""
        with private_home(self.config.home, empty=self.writes_home_settings) as home:
            self._turn_home.path = home
            try:
                yield home
            finally:
                self._turn_home.path = None

    @property
    def home_dir(self) -> str | None:
        """The CLI's ``HOME`` now: this turn's private copy during a turn, else the template."""
        return getattr(self._turn_home, "path", None) or self.config.home

    def credential_paths(self) -> list[str]:
        home = self.config.home
        paths = self.spec.credential_paths
        return [p.replace("~", home, 1) if home and p.startswith("~") else p for p in paths]

    def _lookup(self, name: str) -> str | None:
        source = self.config.env.get(name, name)
        return self.environ.get(source) or None

    def credential_env(self) -> dict[str, str]:
        """This mode's variables as found (through the config's name mapping), unadjusted."""
        env: dict[str, str] = {}
        names = (
            *self.spec.required_env,
            *self.spec.any_env,
            *self.spec.optional_env,
            *self.config.passthrough_env,
        )
        for name in names:
            value = self._lookup(name)
            if value:
                env[name] = value
        return env

    def env(self) -> dict[str, str]:
        env = {k: self.environ[k] for k in BASE_ENV if self.environ.get(k)}
        env.update(self.credential_env())
        env.update(self.spec.fixed_env)
        env.update(self.quiet_env)
        url_var = self.spec.base_url_env or self.base_url_env
        base_url = self.upstream_base_url()
        if base_url and url_var:
            env[url_var] = base_url
        home = self.home_dir
        if home:
            env["HOME"] = home
            if self.home_env is not None:
                name, folder = self.home_env
                env[name] = str(Path(home) / folder)
        return self.adjust_env(env)

    def upstream_base_url(self) -> str | None:
        """The configured base URL, else this mode's declared default."""
        return self.config.base_url or self.default_base_urls.get(self.mode)

    def egress(self, env: Mapping[str, str]) -> Egress:
        """How this turn reaches its model from the sandbox (``sandbox.egress``): the upstream
        and each key the CLI was given with where it travels, or why it cannot."""
        who = f"{self.vendor}/{self.mode}"
        reason = self.unproxied_modes.get(self.mode)
        if reason is not None:
            return refused(f"{who}: {reason}")
        keys = {name: env[name] for name in self.key_carriers if env.get(name)}
        if not keys:
            why = (
                "its login session is a file the CLI reads and refreshes itself"
                if self.spec.login
                else "it has no key the credential proxy can carry"
            )
            return refused(f"{who}: {why}, so it cannot run without a credential in the sandbox")
        base_url = self.upstream_base_url()
        if not base_url:
            return refused(f"{who}: no base URL (configured or declared) for the proxy")
        carriers = {name: self.key_carriers[name] for name in keys}
        return Egress(base_url=base_url, keys=keys, carriers=carriers)

    def adjust_env(self, env: dict[str, str]) -> dict[str, str]:
        """Vendor hook for env that depends on other env (e.g. an isolated home)."""
        return env

    def _spawn(self, turn: Turn, timeout: float) -> RunOutput:
        if self.config.home and not getattr(self._turn_home, "path", None):
            # the configured home is a template: a CLI never runs with it as its own
            raise ConfigError(f"{self.vendor}: a turn runs only inside turn_home()")
        argv = self.build_argv(turn)
        staged = None
        if self.channel_for(turn) == "file":
            staged = stage_prompt_file(self.prompt_file(turn), self.full_prompt(turn))
        try:
            env = self.env_for(turn)
            return self.runner.run(
                argv,
                turn.workdir,
                env,
                self.stdin_for(turn),
                timeout,
                egress=self.egress(env),
                isolation=self.isolation_for(turn),
            )
        finally:
            if staged is not None:
                staged.unlink(missing_ok=True)

    def env_for(self, turn: Turn) -> dict[str, str]:
        return self.env()

    def isolation_for(self, turn: Turn) -> TurnIsolation:
        """The repository's agent configuration masked, the product's own shown in its place."""
        return TurnIsolation(hidden=self.repo_agent_config, shown=self.product_config(turn))

    def mcp_by_flag(self) -> bool:
        """Whether this mode's argv hands the product's MCP servers to the CLI itself (Claude
        Code's ``--strict-mcp-config --mcp-config``); else they are shown as a file."""
        return False

    def product_config(self, turn: Turn) -> dict[str, str]:
        """The product's own project-level files for this turn (relative path -> content):
        the turn's MCP servers in this CLI's format, unless the argv carries them."""
        if not turn.mcp_servers or self.mcp_by_flag():
            return {}
        rel, content = render_mcp_config(list(turn.mcp_servers), self.capabilities.mcp_format)
        return {rel: content}

    def channel_for(self, turn: Turn) -> PromptChannel:
        """This turn's prompt channel (a vendor whose modes run different CLIs overrides)."""
        return self.prompt_channel

    def full_prompt(self, turn: Turn) -> str:
        """The whole prompt text as this CLI gets it (vendor hook: image references)."""
        return turn.prompt

    def stdin_for(self, turn: Turn) -> str | None:
        return self.full_prompt(turn) if self.channel_for(turn) == "stdin" else None

    def prompt_file(self, turn: Turn) -> Path:
        """Where a file-channel turn's prompt is staged (named in the argv)."""
        return prompt_file_path(turn.workdir)

    def prompt_pointer(self, turn: Turn) -> str:
        """The short argument a file-channel CLI gets instead of the prompt."""
        return pointer_prompt(turn.prompt, self.prompt_file(turn))

    def outcome(self, out: RunOutput, turn: Turn) -> tuple[HealthVerdict, StreamSummary | None]:
        try:
            summary: StreamSummary | None = self.parse(out.stdout)
            parse_error = None
        except StreamParseError as exc:
            summary, parse_error = None, str(exc)
        if summary is not None:
            summary = self.enrich(summary, turn)
        verdict = health.classify(
            health.ordered_rules(self.health_rules),
            out,
            parsed=summary is not None,
            terminal=bool(summary and summary.terminal),
            stream_error=summary.error if summary else None,
            parse_error=parse_error,
        )
        return verdict, summary

    def enrich(self, summary: StreamSummary, turn: Turn) -> StreamSummary:
        """Vendor hook to add what is not on stdout (Kimi keeps usage in a session file)."""
        return summary

    # --- per vendor ---------------------------------------------------------------------------

    def parse(self, stdout: str) -> StreamSummary:
        """This mode's stream parser (a vendor may run different CLIs per mode)."""
        return self.parse_stream(stdout)

    def build_argv(self, turn: Turn) -> list[str]:
        raise NotImplementedError

    @staticmethod
    def parse_stream(stdout: str) -> StreamSummary:
        """The vendor's stream parser (``parse_stream = staticmethod(parse_<vendor>_stream)``)."""
        raise NotImplementedError

    def model_args(self, turn: Turn) -> list[str]:
        """``<model flag> <id>`` as this mode declares the flag, when the turn names a model."""
        flag = self.capabilities.model_flag
        return [flag, turn.model] if flag and turn.model else []

    def effort_args(self, turn: Turn) -> list[str]:
        """``<effort knob> <value>`` as this mode declares the knob, when negotiation set one."""
        knob = self.capabilities.effort_knob
        return [knob, turn.effort_value] if knob and turn.effort_value else []
