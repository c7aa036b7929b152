"""A repo whose test command hangs: the product's own validation kills it at its bound.

``acme/billing``'s ``make test`` is replaced (a commit on the bare repo, before the ticket is
filed) by one that sleeps far longer than any run; ``VERANDA_VALIDATION_TIMEOUT_S=2``. The red
tests still run pytest on their own file and are accepted, so the hang meets ``patch``, whose
repository validation runs ``make test`` on every implementer attempt: each must be killed at
2 s with its whole process group, the phase must fail with a typed error that says so, and the
values stored before it must be untouched. The sleep carries a per-test marker (``sleep
600.<n>`` is still a valid GNU sleep), so a surviving grandchild of ``make`` is found by
``pgrep`` and cannot be confused with anyone else's.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.e2e.conftest import step_failures, step_successes
from veranda_dagster.domain.core.bounds import MAX_PATCH_ATTEMPTS
from veranda_dagster.domain.core.models import ContextPack, RedTests, RepoGuess, Ticket
from veranda_dagster.sim.driver import SensorDriver, run_tags, run_ticket_process
from veranda_dagster.sim.sample_org import (
    BILLING,
    MAKEFILE,
    SAMPLE_TICKET_BODY,
    SAMPLE_TICKET_TITLE,
    developer_git,
)
from veranda_dagster.sim.world import SimWorld
from veranda_dagster.storage import ValueStore

pytestmark = pytest.mark.slow

BOUND_S = 2
ORIGINAL_TEST_RECIPE = "\t@$(PYTHON) -m pytest -q -p no:cacheprovider tests\n"


def hang_make_test(world: SimWorld, marker: str, scratch: Path) -> str:
    """Commit a ``test`` target that never finishes on the bare repo's main; its sha."""
    assert ORIGINAL_TEST_RECIPE in MAKEFILE
    work = scratch / "billing-hang"

    def git(*args: str, cwd: Path = work) -> str:
        return developer_git(*args, cwd=cwd)

    git("clone", "--quiet", str(world.org.bare(BILLING)), str(work), cwd=scratch)
    hung = MAKEFILE.replace(ORIGINAL_TEST_RECIPE, f"\t@sleep {marker}\n")
    (work / "Makefile").write_text(hung)
    git("commit", "--quiet", "-am", "CI: integration tests (they wait for a service)")
    git("push", "--quiet", "origin", "HEAD:main")
    return git("rev-parse", "HEAD")


def surviving(marker: str) -> list[str]:
    found = subprocess.run(
        ["pgrep", "-a", "-f", f"sleep {marker}"], capture_output=True, text=True, check=False
    )
    return [line for line in found.stdout.splitlines() if line.strip()]


def test_hung_make_test_is_killed_at_the_bound_and_patch_fails_typed(
    world: SimWorld, instance, tmp_path: Path
) -> None:
    marker = f"600.{os.getpid()}{time.monotonic_ns() % 1_000_000:06d}"
    head = hang_make_test(world, marker, tmp_path)
    world.env["VERANDA_VALIDATION_TIMEOUT_S"] = str(BOUND_S)
    key = world.linear.file_ticket(SAMPLE_TICKET_TITLE, SAMPLE_TICKET_BODY)["identifier"]
    (request,) = SensorDriver().tick(instance, "linear_tickets")

    started = time.monotonic()
    run_id, ok = run_ticket_process(run_tags(request), world.env, timeout=120)
    elapsed = time.monotonic() - started

    assert not ok
    failures = step_failures(instance, run_id)
    assert set(failures) == {"patch"}, failures
    assert {"ticket", "repo_guess", "context_pack", "red_tests"} <= step_successes(instance, run_id)
    message = failures["patch"]
    assert f"still failing after {MAX_PATCH_ATTEMPTS} implementer attempts" in message
    assert "$ make test  (timed out)" in message
    assert f"[veranda: killed after {BOUND_S}s bound]" in message
    # every attempt waited the bound once, and no attempt waited much more than it
    assert MAX_PATCH_ATTEMPTS * BOUND_S <= elapsed < 60, elapsed
    assert world.model.calls_by_role()["implementer"] == MAX_PATCH_ATTEMPTS
    assert surviving(marker) == []

    store = ValueStore(base_dir=world.env["VERANDA_VALUES_DIR"])
    ticket = store.load("ticket", key)
    guess = store.load("repo_guess", key)
    pack = store.load("context_pack", key)
    red = store.load("red_tests", key)
    assert isinstance(ticket, Ticket) and ticket.id == key
    assert ticket.title == SAMPLE_TICKET_TITLE
    assert isinstance(guess, RepoGuess) and guess.repo == BILLING
    assert isinstance(pack, ContextPack) and pack.base_sha == head
    assert pack.facts.test == ["make test"]
    assert isinstance(red, RedTests) and red.base_sha == head and red.test_files
    assert red.base_run.exit_code not in (0, None) and not red.base_run.timed_out
    assert not store.values().exists("patch", key)
