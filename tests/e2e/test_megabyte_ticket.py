"""A 1 MB ticket through a whole run with the REAL Claude Code CLI, offline.

Before, a ticket over about 128 KiB killed every model phase: the prompt rode in one argv
argument and the kernel refused it (``E2BIG``). Now the description is cut at intake with a
visible note (``MAX_TICKET_DESCRIPTION_CHARS``) and every prompt reaches the CLI on stdin, so
the run completes: every asset, one PR, CI green.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e import offline
from tests.e2e.conftest import linear_ticket_run, step_failures
from veranda_dagster.domain.core.bounds import MAX_TICKET_DESCRIPTION_CHARS
from veranda_dagster.domain.core.models import Ticket
from veranda_dagster.sim.sample_org import SAMPLE_TICKET_BODY, SAMPLE_TICKET_TITLE
from veranda_dagster.sim.summary import ASSETS, run_summary
from veranda_dagster.sim.world import SimWorld
from veranda_dagster.storage import ValueStore

pytestmark = [pytest.mark.slow, pytest.mark.real_cli]

AGENT = "claude"
PASTED_LOG = "2026-12-03T05:00:00Z worker-7 WARN retrying invoice export (attempt 3 of 5)\n"


def test_a_megabyte_ticket_runs_end_to_end(tmp_path: Path, request: pytest.FixtureRequest):
    offline.require_cli(AGENT)
    if offline.ran_offline(request):
        return
    body = SAMPLE_TICKET_BODY + "\n\nLog:\n" + PASTED_LOG * (1_048_576 // len(PASTED_LOG) + 1)
    assert len(body) > 1_048_576
    with SimWorld(root=tmp_path / "world", agent=AGENT) as world:
        with linear_ticket_run(world, SAMPLE_TICKET_TITLE, body) as (key, instance, run_id, ok):
            assert ok, step_failures(instance, run_id)
            summary = run_summary(instance, key, world.linear.bot_comments(key))
        assert list(summary.assets) == list(ASSETS)
        assert {a.status for a in summary.assets.values()} == {"materialized"}
        assert summary.ci == "success" and len(world.github.all_pulls()) == 1
        ticket = ValueStore(base_dir=world.env["VERANDA_VALUES_DIR"]).load("ticket", key)
        assert isinstance(ticket, Ticket)
        assert ticket.description.startswith(SAMPLE_TICKET_BODY)
        assert f"[veranda: description cut at {MAX_TICKET_DESCRIPTION_CHARS:,} of" in (
            ticket.description
        )
