"""A 5xx from the model that gets through the CLI: the phase's RetryPolicy retries, no fallback.

One 500 is absorbed by the vendor CLI's own retry (``CLAUDE_CODE_MAX_RETRIES=1``, see
``test_durability``). Here the implementer's turn meets two in a row, so the CLI gives up and the
vendor raises a ``VendorError`` with verdict ``upstream``: retryable, but not a reason to move
to another vendor (another vendor cannot fix a vendor's bad minute). The ``patch`` step must
fail retryably, be retried by its own ``RetryPolicy`` (delay cut to 1 s with
``VERANDA_MODEL_RETRY_DELAY_S``, read by the fresh run worker), and finish on the preferred
vendor, without recomputing or re-billing anything upstream of it, and with one PR.
"""

from __future__ import annotations

import time

import dagster as dg
import pytest

from tests.e2e.conftest import step_failures, step_successes
from veranda_dagster.domain.core.models import Patch
from veranda_dagster.sim.driver import SensorDriver, run_tags, run_ticket_process
from veranda_dagster.sim.sample_org import BILLING, SAMPLE_TICKET_BODY, SAMPLE_TICKET_TITLE
from veranda_dagster.sim.world import SimWorld
from veranda_dagster.storage import ValueStore

pytestmark = pytest.mark.slow

CLI_ATTEMPTS = 2
"""One try plus ``CLAUDE_CODE_MAX_RETRIES=1`` (the claude vendor's env): both must fail."""


def step_events(instance: dg.DagsterInstance, run_id: str, step: str) -> list[str]:
    return [
        e.dagster_event.event_type_value
        for e in instance.all_logs(run_id)
        if e.dagster_event is not None and e.step_key == step
    ]


def test_model_5xx_past_the_cli_retries_the_phase_on_the_same_vendor(
    world: SimWorld, instance
) -> None:
    world.env["VERANDA_MODEL_RETRY_DELAY_S"] = "1"
    key = world.linear.file_ticket(SAMPLE_TICKET_TITLE, SAMPLE_TICKET_BODY)["identifier"]
    (request,) = SensorDriver().tick(instance, "linear_tickets")
    world.model.fail_role("implementer", 500, times=CLI_ATTEMPTS)

    started = time.monotonic()
    run_id, ok = run_ticket_process(run_tags(request), world.env, timeout=120)
    elapsed = time.monotonic() - started
    assert ok, step_failures(instance, run_id)
    assert len(instance.get_runs()) == 1

    # the step failed once, retryably, and its policy ran it again
    events = step_events(instance, run_id, "patch")
    assert events.count("STEP_UP_FOR_RETRY") == 1, events
    assert events.count("STEP_RESTARTED") == 1, events
    assert events.count("STEP_FAILURE") == 0 and events.count("STEP_SUCCESS") == 1, events
    assert {"ticket", "repo_guess", "context_pack", "red_tests", "patch"} <= step_successes(
        instance, run_id
    )

    # the model saw the two 500s, then the retried turn answered on the same credential
    model = world.model
    implementer = [c for c in model.calls if c.role == "implementer"]
    assert [c.status for c in implementer[:CLI_ATTEMPTS]] == [500] * CLI_ATTEMPTS
    assert all(c.status == 200 for c in implementer[CLI_ATTEMPTS:]) and implementer[CLI_ATTEMPTS:]
    assert len({(c.credential, c.credential_ref) for c in implementer}) == 1
    assert implementer[0].credential == "api_key"

    # no fallback: every turn patch paid for ran on the preferred vendor, for that reason
    patch = ValueStore(base_dir=world.env["VERANDA_VALUES_DIR"]).load("patch", key)
    assert isinstance(patch, Patch) and patch.calls
    assert {(c.vendor, c.mode, c.reason) for c in patch.calls} == {
        ("claude", "api_key", "preferred")
    }

    # nothing upstream was recomputed or re-billed, and there is one PR
    calls = model.calls_by_role()
    assert calls["repo_confirmer"] == 1 and calls["test_writer"] == 1, calls
    assert len(world.github.all_pulls()) == len(world.github.all_pulls(BILLING)) == 1
    print(f"model 5xx e2e: run took {elapsed:.1f} s")
