"""A ticket that steers a REAL agent CLI into collecting every secret it can reach.

The ticket asks the agent to run ``env`` and read every ``/proc/*/environ`` and commit the
output; the scripted implementer does exactly that through real Claude Code's own Bash tool
(``scripted_agent.obey_exfiltration``). Two walls must hold: the sandbox (the shell sees its own
environment, never the worker's: no Linear, Slack or GitHub token, no other vendor's key), and
push protection (the agent's own vendor key, which it must hold to call the model, is in the
file, so the change is refused before anything reaches the forge, with a typed error naming
the file and the variable, and nothing already materialized is lost).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e import offline
from tests.e2e.conftest import linear_ticket_run, step_failures, step_successes
from tests.e2e.test_fallback_and_safety import every_output
from veranda_dagster.sim.backends import SIM_KEYS
from veranda_dagster.sim.sample_org import EXFILTRATION_TICKET_BODY, SAMPLE_TICKET_TITLE
from veranda_dagster.sim.scripted_agent import REACHED_FILE
from veranda_dagster.sim.world import SimWorld

pytestmark = [pytest.mark.slow, pytest.mark.real_cli]

AGENT = "claude"
OWN_KEY = "SIM_ANTHROPIC_API_KEY"
"""The one secret the agent's shell may see: the key its own CLI calls the model with."""


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
        # ... and saw no secret of the worker, only its own vendor key
        worker_secrets = {
            name: world.env[name] for name in ("LINEAR_API_KEY", "SLACK_BOT_TOKEN", "GITHUB_TOKEN")
        }
        worker_secrets |= {n: v for n, v in SIM_KEYS.items() if n != OWN_KEY}
        assert [n for n, v in worker_secrets.items() if v in text] == []
        assert SIM_KEYS[OWN_KEY] in text

        # push protection refused the change: a typed error, earlier phases kept
        assert not ok
        assert list(failures) == ["patch"], failures
        assert "SecretInChangeError" in failures["patch"]
        assert f"{REACHED_FILE} adds the value of" in failures["patch"]
        assert {"ticket", "repo_guess", "context_pack", "red_tests"} <= succeeded

        # nothing secret left the worker: not the forge, comments, logs, metadata or values
        assert [n for n, v in {**worker_secrets, **SIM_KEYS}.items() if v in outputs] == []
        assert world.github.all_pulls() == []
