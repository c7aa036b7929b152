"""The value of every phase, as pydantic models.

Each asset partition stores exactly one of these as JSON, so a phase re-run in a new process (or
pod) loads its upstream values instead of recomputing them. Every value carries ``calls``: what
ran for it (vendor, mode, tier, model id, the reason it was chosen, tokens, USD), so cost
and fallbacks are data, not log lines.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    computed_field,
    model_validator,
)

from veranda_dagster.domain.core.mcp_config import McpServer

Tier = Literal["cheap", "standard", "high"]
Effort = Literal["low", "medium", "high"]
SOURCE_NAME_PATTERN = r"[a-z][a-z0-9]{1,15}"
"""A ticket source's name (``TicketSource.name``): lowercase, so a key it qualifies never looks
like an unqualified one."""
Source = Annotated[str, StringConstraints(pattern=rf"^{SOURCE_NAME_PATTERN}$")]
"""Which ticket source a ticket came from: the name of the source that owns its key."""


class Strict(BaseModel):
    """Base for boundary models: unknown fields are an error that names the field."""

    model_config = ConfigDict(extra="forbid")


class Usage(Strict):
    """Tokens for one request, as the vendor's own stream reported them."""

    input: int = 0
    output: int = 0
    cached: int = 0
    reasoning: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input=self.input + other.input,
            output=self.output + other.output,
            cached=self.cached + other.cached,
            reasoning=self.reasoning + other.reasoning,
        )


class ModelCall(Strict):
    """One agent turn: who ran it, why that vendor, what it cost."""

    role: str
    vendor: str
    mode: str
    tier: Tier
    model: str | None = None
    reason: str = "preferred"
    dropped_pin: str | None = None
    usage: Usage = Field(default_factory=Usage)
    usd: float = 0.0
    duration_s: float = 0.0


_DERIVED = frozenset({"usd", "tokens_in", "tokens_out"})


class Reuse(Strict):
    """Work an earlier attempt did and paid for, which this value reuses instead of redoing:
    its calls are not in the value's ``calls`` (they were reported, and billed, then)."""

    what: str
    run_id: str = ""
    """The Dagster run that did it; empty when that was not recorded."""
    commit: str | None = None
    """The commit the work was done on (a review round: the head it reviewed)."""
    model_calls: int = 0
    usd: float = 0.0


class PhaseValue(Strict):
    """Fields every phase value shares; totals are derived, never stored twice."""

    ticket_id: str
    calls: list[ModelCall] = Field(default_factory=list)
    """The model calls this attempt made (and paid for); reused work is in ``reused``."""
    reused: list[Reuse] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _drop_derived_totals(cls, data: Any) -> Any:
        """Stored JSON includes the computed totals; they are re-derived, not re-read."""
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if k not in _DERIVED}
        return data

    @computed_field  # type: ignore[prop-decorator]
    @property
    def usd(self) -> float:
        return round(sum(c.usd for c in self.calls), 6)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def tokens_in(self) -> int:
        return sum(c.usage.input for c in self.calls)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def tokens_out(self) -> int:
        return sum(c.usage.output for c in self.calls)


class CarriesOrder(PhaseValue):
    """A phase value that hands the next phase its work order (``WorkOrder``: the ticket, and
    from the pack on the pack), so each phase reads only its predecessor and the lineage is
    the chain. The shell (``assets._shell``) sets it; a domain call never needs to."""

    order: WorkOrder | None = None
    """``None`` on values stored before the order was carried: the next phase then reads the
    stored ``ticket`` and ``context_pack`` values instead (``domain.core.work_order``)."""


# --- ticket ----------------------------------------------------------------------------------


class Lenient(BaseModel):
    """Base for inbound payloads from people and vendors: unknown fields are ignored, known
    fields are validated and a bad one is named in the error."""

    model_config = ConfigDict(extra="ignore")


class Attachment(Lenient):
    url: str
    title: str | None = None


class Ticket(Lenient):
    """A unit of work from a ticket source. ``id`` is the partition key."""

    id: str
    source: Source
    title: str
    description: str = ""
    labels: list[str] = Field(default_factory=list)
    attachments: list[Attachment] = Field(default_factory=list)
    url: str | None = None
    external_id: str | None = None
    """The source's own id for posting back: an issue's id, or a chat thread's channel."""
    thread_ts: str | None = None
    """A chat thread's timestamp; replies go in this thread."""
    updated_at: str | None = None
    repo: str | None = None
    """A repository declared in a structured field (``org/name``), if the source has one."""

    @property
    def pinned_model(self) -> str | None:
        """A model pinned by hand with a ``model:<id>`` label, if any."""
        for label in self.labels:
            if label.lower().startswith("model:"):
                return label.split(":", 1)[1].strip() or None
        return None


# --- repo guess ------------------------------------------------------------------------------


RepoSignal = Literal[
    "declaration",
    "url",
    "label",
    "prose",
    "service",
    "former_name",
    "fork",
    "misspelling",
    "vocabulary",
    "action",
]
"""What decided a guess. The first four are the values earlier runs stored; the rest name the
evidence people use that the first rules ignored (service labels, renamed repos, forks, typos,
what a repository contains: its imports, commands, hooks and public names; a ``uses:`` ref)."""


class RepoEvidence(Strict):
    """One piece of evidence for one repository, with the weight the scorer gave it."""

    repo: str
    kind: str
    weight: float
    text: str = ""
    """Where it was found (a bounded, scrubbed excerpt of the ticket or label)."""


class RepoGuess(CarriesOrder):
    repo: str | None
    confidence: Literal["high", "medium", "low", "none"]
    """``medium``: proceeds on evidence a person would act on but not a declaration or link; the
    cheap-tier confirmation pass always runs on it and may correct it or ask instead."""
    signal: RepoSignal | None
    decision: Literal["proceed", "ask"]
    candidates: list[str] = Field(default_factory=list)
    question: str | None = None
    needs_proto: bool = False
    needs_migration: bool = False
    needs_visual_verification: bool = False
    model_verdict: Literal["confirmed", "corrected", "disputed", "skipped"] = "skipped"
    """``disputed``: the model named another repo but an explicit declaration/URL was kept."""
    question_comment_id: str | None = None
    notes: list[str] = Field(default_factory=list)
    """Why signals were ignored (foreign/stale URLs) or a model reply was not used."""
    score: float | None = None
    """The chosen (or leading) repository's total evidence weight."""
    evidence: list[RepoEvidence] = Field(default_factory=list)
    """Every weighed piece of evidence, strongest first; values from earlier runs have none."""


# --- context pack ----------------------------------------------------------------------------


class Window(Strict):
    start: int
    end: int
    text: str


class PackFile(Strict):
    path: str
    windows: list[Window] = Field(default_factory=list)


class Citation(Strict):
    """A reference the agent may cite, created by the retrieval tool and never by the model."""

    id: str
    path: str
    start: int
    end: int
    sha: str


class ContextLayer(Strict):
    """One of the four instruction layers, kept separate: different owners, different staleness."""

    name: Literal["generic", "org_runbooks", "repo_hints", "repo_facts"]
    source: str
    text: str


class RepoFacts(Strict):
    """What can be read off the repository without running it."""

    build: list[str] = Field(default_factory=list)
    lint: list[str] = Field(default_factory=list)
    test: list[str] = Field(default_factory=list)
    coverage: list[str] = Field(default_factory=list)
    lint_config: list[str] = Field(default_factory=list)
    build_tags: list[str] = Field(default_factory=list)
    languages: list[str] = Field(default_factory=list)
    needs_containers: bool = False
    frontend: bool = False
    dev_server: str | None = None
    """How a frontend serves its app locally (``npm run dev``), for the agent to open in the
    browser; None when there is no such script or the repository is not a frontend."""
    refused_files: list[str] = Field(default_factory=list)
    """Files the reader would not open (a link out of the clone, a device, oversize), why."""
    setup: list[str] = Field(default_factory=list)
    """How the repository prepares itself (its setup script, a devcontainer's create
    commands, or the org hints' ``setup:`` line), run before any of the commands above."""
    setup_source: str = ""
    """The file ``setup`` was read from."""


class ContextPack(CarriesOrder):
    repo: str
    clone_url: str
    default_branch: str
    base_sha: str
    branch: str
    seeds: list[str] = Field(default_factory=list)
    searches: int = 0
    searches_planned: int | None = None
    """Searches the token's shared code-search budget allowed this pack (``None``: unknown)."""
    search_wait_s: float = 0.0
    """Seconds the pack slept for that budget: zero since packs plan with what is free (kept
    so a wait, should one come back, is reported rather than hidden in the phase's wall)."""
    search_index: Literal["local_clone", "forge_index"] = "local_clone"
    """What answered the pack's searches (``domain.context.search_choice``): the clone, or the
    forge's rate-limited code index (only a pack without a clone)."""
    bytes: int = 0
    files: list[PackFile] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    unavailable_signals: list[str] = Field(default_factory=list)
    """Ticket signals the code-search index could not provide (a forge's hosted index with no
    clone: ``traceback_frames``, ``source_links``, ``full_text_bm25``): the ranking ran without
    them."""
    layers: list[ContextLayer] = Field(default_factory=list)
    facts: RepoFacts = Field(default_factory=RepoFacts)
    instruction_files: list[str] = Field(default_factory=list)
    mcp_files: list[str] = Field(default_factory=list)
    """MCP configs the context phase once wrote into the clone. Nothing of the product's is
    written there any more (``mcp_servers`` travel with each turn instead); always empty now,
    kept so packs stored before the change still load."""
    mcp_servers: list[McpServer] = Field(default_factory=list)
    """The product's tool servers for every turn on this ticket (the browser for a frontend
    repository): shown to the CLI for the turn only, never written into the clone."""
    refused_files: list[str] = Field(default_factory=list)
    """Files of the clone the context phase would not read or write through (links out of
    the clone, devices, oversize), with the reason: noted, never fatal."""
    guess_calls: list[ModelCall] = Field(default_factory=list)
    """The repo guess's model calls, carried down the chain for the PR's what-ran table (so
    ``pull_request`` need not read ``repo_guess``); not this phase's spend."""


class WorkOrder(Strict):
    """What every phase after the ticket works from: the ticket (its prompts quote it, its
    notes go to its thread) and, from the red phase on, the context pack (the clone it
    describes, its files, citations, layers, facts and tool servers). Carried forward in each
    value (``CarriesOrder.order``) instead of read from ``ticket`` and ``context_pack``, so
    the lineage reads as the chain."""

    ticket: Ticket
    pack: ContextPack | None = None
    """``None`` until the pack exists (the repo guess's and the pack's own order). The pack
    here carries no order of its own: the ticket is stored once."""


# --- work loop -------------------------------------------------------------------------------


class CommandResult(Strict):
    """A repo command run with a bound; ``output_tail`` is bounded in bytes."""

    command: str
    exit_code: int | None
    timed_out: bool = False
    duration_s: float = 0.0
    output_tail: str = ""
    sandboxed: bool | None = None
    """Whether it ran in the sandbox (``None``: recorded before the sandbox existed)."""

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


SetupStatus = Literal["ready", "cached", "none"]


class SetupOutcome(Strict):
    """What the repository's setup step did before its commands ran (``environment/``):
    ``ready`` (ran now), ``cached`` (an earlier ticket's result, no time spent) or ``none``
    (nothing declared and no default applies; ``missing`` says what a run would need)."""

    status: SetupStatus
    source: str = ""
    """Where the commands came from (``.veranda/setup.sh``, a devcontainer file, the org
    hints, ``default: python``), empty for ``none``."""
    commands: list[str] = Field(default_factory=list)
    key: str = ""
    """Repository and lockfile hash the result is cached under."""
    env_dir: str = ""
    duration_s: float = 0.0
    size_bytes: int = 0
    output_tail: str = ""
    refused: list[str] = Field(default_factory=list)
    """Requests the registry proxy refused (method and path, never a header or query)."""
    missing: str = ""


class RedTests(CarriesOrder):
    branch: str
    base_sha: str
    commit_sha: str
    test_files: list[str]
    base_run: CommandResult
    attempts: int
    rejected: list[str] = Field(default_factory=list)
    """Why earlier attempts were rejected (passed on base, import error, ...)."""
    setup: SetupOutcome | None = None
    """The repository's setup step, run before the first red test (``None``: recorded before
    setup steps existed)."""


class Patch(CarriesOrder):
    branch: str
    commit_sha: str
    files_changed: list[str]
    attempts: int
    validation: list[CommandResult] = Field(default_factory=list)
    extra_test_files: list[str] = Field(default_factory=list)
    """Tests added by the separate test-writer seat after implementation."""
    coverage_before: float | None = None
    coverage_after: float | None = None
    summary: str = ""
    """The implementer's closing summary (secrets scrubbed): the PR body's description."""
    earlier_calls: list[ModelCall] = Field(default_factory=list)
    """The repo guess's and the red phase's model calls, carried for the PR's what-ran table
    (so ``pull_request`` reads its one upstream, not three); not this phase's spend."""


class PullRequest(CarriesOrder):
    number: int
    url: str
    title: str
    body: str
    branch: str
    head_sha: str
    citations_resolved: list[str] = Field(default_factory=list)
    citations_flagged: list[str] = Field(default_factory=list)
    ticket_comment_id: str | None = None


class ReviewRound(Strict):
    index: int
    findings: list[str]
    fixed: bool
    commit_sha: str | None = None
    usd: float = 0.0


class ReviewRounds(CarriesOrder):
    rounds: list[ReviewRound] = Field(default_factory=list)
    stopped: Literal["clean", "bound"]
    head_sha: str
    truncated: list[str] = Field(default_factory=list)
    """What a forge list bound left out of the PR's comments this run read (run log, metadata)."""


class Violation(Strict):
    """One static-analysis finding, with enough to ground a repair prompt."""

    tool: str
    rule: str
    message: str
    path: str
    line: int
    end_line: int | None = None
    threshold: str | None = None


CiState = Literal["pending", "running", "passed", "failed", "cancelled", "skipped", "neutral"]
"""Where a CI job is, in the forge's stead: ``neutral`` finished without passing or failing
(it cannot block a merge), ``skipped`` never ran."""
CI_RUNNING_STATES: frozenset[CiState] = frozenset({"pending", "running"})
CI_FAILING_STATES: frozenset[CiState] = frozenset({"failed", "cancelled"})
"""A cancelled job fails the change as a failed one does: nothing vouches for the commit."""


class CheckResult(Strict):
    """One CI job as the ``ci_outcome`` value records it."""

    name: str
    state: CiState


class CIOutcome(CarriesOrder):
    status: Literal["success", "failure", "timed_out"]
    head_sha: str
    checks: list[CheckResult] = Field(default_factory=list)
    repairs: int = 0
    repair_grounding: Literal["violations", "log_tail", "none"] = "none"
    violations: list[Violation] = Field(default_factory=list)
    """The violations that reached the repair prompt: only the commit's own."""
    polls: int = 0


class FeedbackRound(Strict):
    index: int
    comment_ids: list[str]
    commit_sha: str | None = None
    reply: str = ""


class Feedback(PhaseValue):
    rounds: list[FeedbackRound] = Field(default_factory=list)
    processed_comment_ids: list[str] = Field(default_factory=list)
    bound_reached: bool = False
    head_sha: str | None = None
    truncated: list[str] = Field(default_factory=list)
    """What a forge list bound left out of the PR's comments this run read (run log, metadata)."""


for _carrier in (CarriesOrder, RepoGuess, ContextPack):
    _carrier.model_rebuild()  # declared before ``WorkOrder`` (which holds a ContextPack)
