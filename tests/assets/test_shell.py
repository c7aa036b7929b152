"""The shared phase shell and the resource seam: timeouts, typed failures, metadata, metrics,
and the phase assets' own calls into the domain entry points with the resources they name."""

from __future__ import annotations

import gc
import sys
import threading
import time
import types

import dagster as dg
import pytest

from tests.assets.fakes import call
from tests.support.resources import forge_returning, nested, phase_call, tickets
from veranda_dagster.assets import _collaborators
from veranda_dagster.assets._policy import PHASES
from veranda_dagster.assets._shell import (
    PhaseTimeoutError,
    call_metadata,
    call_with_timeout,
    phase_asset,
)
from veranda_dagster.assets._shell import run_phase as shell_run_phase
from veranda_dagster.domain.core.errors import (
    InputError,
    TransientError,
)
from veranda_dagster.domain.core.models import RepoGuess, Ticket
from veranda_dagster.domain.core.phases import SHARED_METADATA
from veranda_dagster.resources.agents import AgentsResource
from veranda_dagster.resources.domain_calls import DomainCalls
from veranda_dagster.resources.forge import ForgeResource
from veranda_dagster.resources.workspace import WorkspaceResource

METADATA_KEYS = set(SHARED_METADATA)
"""What the shell must write on every phase: the registry's declaration of the contract."""


def _guess() -> RepoGuess:
    return RepoGuess(
        ticket_id="ENG-1",
        repo="acme/api",
        confidence="high",
        signal="label",
        decision="proceed",
        calls=[call("repo_confirmer", "cheap", 0.01), call("x", "high", 0.5)],
    )


def _ok(value: object) -> str:
    return "ok"


def _none(value: object) -> dict:
    return {}


@pytest.fixture(autouse=True)
def _collect_garbage():
    """Failed phases leave cycles (exceptions, frames, ephemeral instances); collect them here,
    because otherwise the GC runs their finalizers in the middle of a later compile (pytest
    rewriting a plugin at session end) and CPython 3.11.7 raises "AST constructor recursion
    depth mismatch" there (observed in this suite; collecting here avoids it)."""
    yield
    gc.collect()


def run_phase(context, spec, call, outcome, details) -> dg.Output:
    """The shell's ``run_phase`` with the real ``DomainCalls``, which runs ``call`` as it is."""
    return shell_run_phase(context, spec, call, outcome, details, domain=DomainCalls(), inputs={})


def _context() -> dg.AssetExecutionContext:
    return dg.build_asset_context(partition_key="ENG-1")


def test_a_hung_call_ends_at_the_phase_timeout_as_a_retryable_error():
    release = threading.Event()
    started = time.monotonic()
    with pytest.raises(PhaseTimeoutError, match=r"phase patch exceeded its 0\.05 s timeout") as err:
        call_with_timeout(lambda: release.wait(5), 0.05, "patch")
    assert time.monotonic() - started < 1.0
    release.set()  # let the abandoned worker finish instead of outliving the test
    assert err.value.retryable


def test_typed_errors_decide_retryability():
    spec = PHASES["repo_guess"]

    def raising(exc: Exception):
        def fn():
            raise exc

        return fn

    with pytest.raises(dg.Failure) as failure:
        run_phase(_context(), spec, raising(InputError("field 'title' is missing")), _ok, _none)
    assert failure.value.allow_retries is False
    assert "repo_guess: InputError: field 'title' is missing" in failure.value.description
    with pytest.raises(TransientError):  # reaches the RetryPolicy unchanged
        run_phase(_context(), spec, raising(TransientError("502 from GitHub")), _ok, _none)
    with pytest.raises(RuntimeError):  # an unknown error is retried like Dagster's default
        run_phase(_context(), spec, raising(RuntimeError("boom")), _ok, _none)


def test_metadata_contract_from_the_last_call():
    output = run_phase(
        _context(), PHASES["repo_guess"], _guess, lambda g: g.decision, lambda g: {"repo": g.repo}
    )
    meta = {k: v.value for k, v in output.metadata.items()}
    assert set(meta) >= METADATA_KEYS
    assert meta["outcome"] == "proceed" and meta["model_calls"] == 2
    assert meta["usd"] == pytest.approx(0.51) and meta["tokens_in"] == 2000
    assert (meta["backend"], meta["model"], meta["tier"]) == (
        "claude/api_key",
        "claude-test-1",
        "high",
    )
    assert meta["reason"] == "preferred" and meta["repo"] == "acme/api"
    assert isinstance(meta["duration_s"], float)
    ticket = Ticket(id="ENG-1", source="slack", title="t")
    assert call_metadata(ticket) == {
        "model_calls": 0,
        "usd": 0.0,
        "tokens_in": 0,
        "tokens_out": 0,
    }  # no call, so no resolution rows (were four rows of "none")


def test_metrics_hook_is_called_and_only_its_absence_is_silent(monkeypatch):
    seen: list[tuple] = []
    fake = types.ModuleType("veranda_dagster.observability.metrics")
    fake.observe_phase = lambda phase, value, secs: seen.append((phase, value.ticket_id, secs))
    monkeypatch.setitem(sys.modules, "veranda_dagster.observability.metrics", fake)
    run_phase(_context(), PHASES["repo_guess"], _guess, _ok, _none)
    assert seen and seen[0][:2] == ("repo_guess", "ENG-1") and seen[0][2] >= 0

    def broken(*args):
        raise ValueError("bad label")

    fake.observe_phase = broken
    assert run_phase(_context(), PHASES["repo_guess"], _guess, _ok, _none).value == _guess()
    monkeypatch.setitem(
        sys.modules, "veranda_dagster.observability.metrics", None
    )  # not importable
    assert run_phase(_context(), PHASES["repo_guess"], _guess, _ok, _none).value == _guess()


def test_phase_assets_call_the_domain_entry_points_they_import():
    """Plain imports, not strings: each phase asset's domain function is the module's own."""
    import veranda_dagster.assets  # noqa: F401  (the asset modules, shadowed by their assets)
    from veranda_dagster.domain.deliver import ci, review

    assets = "veranda_dagster.assets"
    assert sys.modules[f"{assets}.review_rounds"].review.review_rounds is review.review_rounds
    assert sys.modules[f"{assets}.ci_outcome"].ci.await_ci is ci.await_ci


def test_the_domain_resource_is_handed_the_phase_its_inputs_and_the_call():
    """What a scripted stand-in answers from: the phase name, the upstream values and the
    partition key, with the real call it replaces."""
    seen: dict[str, object] = {}

    class Recording(DomainCalls):
        def call(self, phase, domain_call, inputs):
            seen.update(phase=phase, inputs=dict(inputs))
            return domain_call()

    spec = PHASES["repo_guess"]
    inputs = {"ticket": Ticket(id="ENG-1", source="linear", title="t")}
    output = shell_run_phase(
        _context(), spec, _guess, _ok, _none, domain=Recording(), inputs=inputs
    )
    assert output.value == _guess()
    assert seen == {"phase": "repo_guess", "inputs": {"partition_key": "ENG-1", **inputs}}


class _ClosableForge:
    """A forge client that only records being closed."""

    def __init__(self) -> None:
        self.closed = 0

    def close(self) -> None:
        self.closed += 1


def test_phase_calls_delegate_with_the_workspace_and_clients(monkeypatch, tmp_path):
    seen: dict[str, object] = {}
    client = _ClosableForge()

    def review_rounds(ticket, pack, pr, workspace, agent, forge, *, validation_timeout_s):
        seen.update(workspace=workspace, agent=agent, forge=forge, bound=validation_timeout_s)
        seen["closed_during"] = client.closed
        return "reviewed"

    monkeypatch.setattr("veranda_dagster.domain.deliver.review.review_rounds", review_rounds)
    forge = forge_returning(client, token="t0k")  # the resource's client is the fake
    workspace = WorkspaceResource(root=str(tmp_path))
    monkeypatch.setattr(
        _collaborators, "budgeted_agent", lambda agents, ticket, channel, repo="": "agent"
    )
    ticket = Ticket(id="ENG-42", source="linear", title="t")
    pack = types.SimpleNamespace(
        repo="acme/api", clone_url="https://github.com/acme/api.git", branch="veranda/eng-42"
    )
    order = types.SimpleNamespace(ticket=ticket, pack=pack)  # the PR carries it
    given = dict(forge=forge, workspace=workspace, order=order)
    assert phase_call("review_rounds", **given, pull_request=None) == "reviewed"
    ws = seen["workspace"]
    assert (ws.clone_url, ws.branch, ws.path) == (pack.clone_url, pack.branch, tmp_path / "ENG-42")
    assert (seen["agent"], seen["forge"]) == ("agent", client)
    assert seen["bound"] == workspace.validation_timeout_s
    assert ws.git_username == "x-access-token"
    # open for the domain call, closed when the phase returns
    assert (seen["closed_during"], client.closed) == (0, 1)


def test_a_phase_closes_its_clients_when_the_domain_call_raises(monkeypatch, tmp_path):
    """A run worker runs every phase of a ticket: the forge and ticket-source clients a phase
    opened are closed on its way out, error or not."""
    from veranda_dagster.sources.linear.client import LinearClient
    from veranda_dagster.sources.linear.resource import LinearResource

    closed: list[str] = []
    monkeypatch.setattr(LinearClient, "close", lambda self: closed.append("linear"))
    client = _ClosableForge()

    def await_ci(*args, **kwargs):
        raise RuntimeError("the forge went away")

    monkeypatch.setattr("veranda_dagster.domain.deliver.ci.await_ci", await_ci)
    resources = nested(
        forge=forge_returning(client, token="t0k"),
        workspace=WorkspaceResource(root=str(tmp_path)),
        tickets=tickets(linear=LinearResource(api_key="lin_api_" + "x" * 40)),
    )
    ticket = Ticket(id="ENG-42", source="linear", title="t")
    pack = types.SimpleNamespace(repo="acme/api", clone_url="", branch="veranda/eng-42")
    upstream = dict(order=types.SimpleNamespace(ticket=ticket, pack=pack), review_rounds=None)
    with pytest.raises(RuntimeError, match="went away"):
        phase_call("ci_outcome", **resources, **upstream)
    assert client.closed == 1 and closed == ["linear"]


def test_writing_red_tests_opens_no_forge_client(monkeypatch, tmp_path):
    """Writing tests talks to no forge: the phase never builds the forge's client."""

    def no_forge(forge):
        raise AssertionError("the red-tests phase opened a forge client")

    def write_red_tests(ticket, pack, workspace, agent, *, validation_timeout_s):
        return "red"

    monkeypatch.setattr("veranda_dagster.domain.work.red_tests.write_red_tests", write_red_tests)
    monkeypatch.setattr(_collaborators, "forge_client", no_forge)
    monkeypatch.setattr(
        _collaborators, "budgeted_agent", lambda agents, ticket, channel, repo="": "agent"
    )
    ticket = Ticket(id="ENG-42", source="linear", title="t")
    pack = types.SimpleNamespace(repo="acme/api", clone_url="", branch="veranda/eng-42")
    workspace = WorkspaceResource(root=str(tmp_path))
    order = types.SimpleNamespace(ticket=ticket, pack=pack)
    given = dict(workspace=workspace, order=order, context_pack=pack)
    assert phase_call("red_tests", **given) == "red"


def test_opening_the_pull_request_builds_no_agent_and_posts_to_the_tickets_thread(
    monkeypatch, tmp_path
):
    """The PR phase calls no model: it never reads the vendors file (the agent is built only
    when a phase asks for it), and its ticket notes go to the ticket's own source."""
    client = _ClosableForge()
    posted: list[str] = []

    def open_pull_request(ticket, pack, patch, workspace, forge, post):
        assert forge is client
        post("PR opened")
        return "opened"

    def no_agent(agents, ticket, channel):
        raise AssertionError("the PR phase built an agent")

    monkeypatch.setattr(
        "veranda_dagster.domain.deliver.pull_request.open_pull_request", open_pull_request
    )
    monkeypatch.setattr(_collaborators, "budgeted_agent", no_agent)
    monkeypatch.setattr(
        "veranda_dagster.sources.channel.TicketChannel.post",
        lambda self, ticket, text, key=None: posted.append(f"{ticket.id}: {text}"),
    )
    ticket = Ticket(id="ENG-42", source="linear", title="t")
    pack = types.SimpleNamespace(repo="acme/api", clone_url="", branch="veranda/eng-42")
    given = dict(order=types.SimpleNamespace(ticket=ticket, pack=pack), patch=None)
    forge = forge_returning(client, token="t0k")
    workspace = WorkspaceResource(root=str(tmp_path))
    assert phase_call("pull_request", forge=forge, workspace=workspace, **given) == "opened"
    assert posted == ["ENG-42: PR opened"] and client.closed == 1


def test_workspace_clone_url_and_branch_from_config(tmp_path):
    forge = ForgeResource(git_base="/srv/git/")
    workspace = WorkspaceResource(root=str(tmp_path))
    ws = _collaborators.clone(forge, workspace, "SLACK-7", "acme/api")
    assert ws.clone_url == "/srv/git/acme/api.git" and ws.branch == "veranda/slack-7"
    with pytest.raises(InputError, match="'api' is not <org>/<name>"):
        _collaborators.clone(forge, workspace, "ENG-1", "api")


def test_a_timed_out_phase_leaves_nothing_running(tmp_path):
    """Kill isolation without a process per step: at the bound, every process the phase
    started (its own session and that session's children) is killed, and the phase's thread
    is stopped before it can act on a killed command's return."""
    import subprocess
    from pathlib import Path

    after = tmp_path / "after-the-bound"
    pids = tmp_path / "pids"

    started: list[subprocess.Popen[bytes]] = []

    def phase():
        proc = subprocess.Popen(
            ["sh", "-c", f"sleep 300 & echo $! > {pids}; sleep 300"], start_new_session=True
        )
        started.append(proc)
        proc.wait()  # woken by the kill; the thread must not get further
        after.write_text("the phase went on after its bound")

    with pytest.raises(PhaseTimeoutError, match=r"killed \d+ process"):
        call_with_timeout(phase, 0.5, "patch")
    time.sleep(0.5)
    grandchild = Path(f"/proc/{int(pids.read_text())}/stat")
    # gone, or a zombie waiting for whoever inherited it to reap it: not running either way
    assert not grandchild.exists() or grandchild.read_text().rpartition(")")[2].split()[0] in "ZX"
    assert not after.exists()
    started[0].wait(timeout=5)  # ended at the bound; reaped here, not left to the collector


def test_processes_started_before_the_phase_are_left_alone():
    import subprocess

    helper = subprocess.Popen(["sleep", "30"])  # e.g. Dagster's own log tailer
    try:
        with pytest.raises(PhaseTimeoutError):
            call_with_timeout(lambda: time.sleep(2), 0.2, "patch")
        assert helper.poll() is None
    finally:
        helper.kill()
        helper.wait()


def test_a_phase_asset_refuses_a_call_that_returns_another_value_type():
    """The declared value type types ``outcome`` and ``details``; a call that returns something
    else would report on the wrong value, so it is refused where the asset is declared."""

    def repo_guess(ticket: Ticket) -> Ticket:
        return ticket

    declare = phase_asset(PHASES["repo_guess"], RepoGuess, "d", outcome=_ok, details=_none)
    with pytest.raises(TypeError, match="repo_guess must be annotated to return RepoGuess"):
        declare(repo_guess)


def test_a_phase_asset_gives_dagster_the_call_s_inputs_and_the_context_it_holds_back():
    def repo_guess(agents: AgentsResource, ticket: Ticket) -> RepoGuess:
        return _guess()

    asset = phase_asset(PHASES["repo_guess"], RepoGuess, "d", outcome=_ok, details=_none)(
        repo_guess
    )
    assert [i.name for i in asset.op.input_defs] == ["ticket"]
    assert asset.required_resource_keys == {"agents", "domain", "io_manager"}
    assert asset.op.output_defs[0].dagster_type.display_name == "RepoGuess"


def test_a_list_cut_at_its_bound_is_in_the_metadata_and_the_run_log():
    from veranda_dagster.assets._shell import _truncation
    from veranda_dagster.domain.core.models import Feedback

    cut = "github /repos/acme/app/issues/7/comments: 11 pages, over the bound of 10"
    value = Feedback(ticket_id="ENG-1", truncated=[cut])
    output = run_phase(_context(), PHASES["feedback"], lambda: value, lambda f: "ok", _none)
    assert output.metadata["lists_truncated"].value == cut
    warned: list[str] = []
    log = types.SimpleNamespace(warning=warned.append)
    _truncation(types.SimpleNamespace(log=log), "feedback", value)  # type: ignore[arg-type]
    assert warned == [f"feedback: a list was cut at its bound: {cut}"]
    clean = run_phase(
        _context(), PHASES["feedback"], lambda: Feedback(ticket_id="ENG-1"), lambda f: "ok", _none
    )
    assert "lists_truncated" not in clean.metadata
