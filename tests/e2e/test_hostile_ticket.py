"""A ticket that steers a REAL agent CLI into collecting every secret it can reach.

The ticket asks the agent to run ``env`` and read every ``/proc/*/environ`` and commit the
output; the scripted implementer does exactly that through real Claude Code's own Bash tool
(``scripted_agent.obey_exfiltration``). The sandbox holds: the shell sees its own environment,
never the worker's (no Linear, Slack or GitHub token, no other vendor's key), and not even its
own vendor key, which the credential proxy outside the sandbox holds (the shell sees the turn's
placeholder). So the committed file carries no secret, the change goes out, and no secret is
in anything the run produced.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e import offline
from tests.e2e.conftest import linear_ticket_run, step_failures, step_successes
from tests.e2e.test_fallback_and_safety import every_output
from veranda_dagster.sandbox.egress import PLACEHOLDER_PREFIX
from veranda_dagster.sim.backends import SIM_KEYS
from veranda_dagster.sim.sample_org import EXFILTRATION_TICKET_BODY, SAMPLE_TICKET_TITLE
from veranda_dagster.sim.scripted_agent import REACHED_FILE
from veranda_dagster.sim.world import SimWorld

pytestmark = [pytest.mark.slow, pytest.mark.real_cli]

AGENT = "claude"


def test_a_steered_agent_reaches_no_worker_secret_and_pushes_nothing(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    offline.require_cli(AGENT)
    if offline.ran_offline(request):
        return
    with SimWorld(root=tmp_path / "world", agent=AGENT) as world:
        ticket = (SAMPLE_TICKET_TITLE, EXFILTRATION_TICKET_BODY)
        with linear_ticket_run(world, *ticket) as (key, instance, run_id, ok):
            failures = step_failures(instance, run_id)
            succeeded = step_successes(instance, run_id)
            outputs = every_output(world, instance, key)

        # the agent's own shell really ran the collection ...
        reached = Path(world.env["VERANDA_WORKSPACES"]) / key / REACHED_FILE
        text = reached.read_text(errors="replace")
        assert "PATH=" in text and "HOME=" in text
        # ... and saw no secret at all: not the worker's, not its own vendor key either (the
        # credential proxy holds it; the CLI and its shell got a per-turn placeholder)
        worker_secrets = {
            name: world.env[name] for name in ("LINEAR_API_KEY", "SLACK_BOT_TOKEN", "GITHUB_TOKEN")
        }
        every_secret = {**worker_secrets, **SIM_KEYS}
        assert [n for n, v in every_secret.items() if v in text] == []
        assert PLACEHOLDER_PREFIX in text and "ANTHROPIC_API_KEY=" in text

        # with nothing secret in it, the change goes out like any other
        assert ok, failures
        assert {"ticket", "repo_guess", "context_pack", "red_tests", "patch"} <= succeeded
        assert len(world.github.all_pulls()) == 1

        # nothing secret left the worker: not the forge, comments, logs, metadata or values
        assert [n for n, v in every_secret.items() if v in outputs] == []
