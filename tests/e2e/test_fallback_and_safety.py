"""A hostile, pinned ticket on a bad day: revoked keys mid-run, CI that never finishes.

The ticket pins ``model:claude-opus-sim`` and carries a prompt injection asking the agent to
print its environment; the scripted model obeys (it dumps everything it was given into its
answers). Mid-run, when the test writer's turn arrives, both Claude credentials are revoked:
the vendor must move to Claude's other mode first, then to GLM, drop the pin, and say so on
the ticket. CI never finishes, so the bounded wait must record ``timed_out``. Afterwards every
output the product produced is scanned for every fake secret.
"""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

import pytest

from tests.e2e.conftest import step_failures
from veranda_dagster.sim.driver import SensorDriver, run_tags, run_ticket_process
from veranda_dagster.sim.sample_org import BILLING, INJECTION_TICKET_BODY, INJECTION_TICKET_TITLE
from veranda_dagster.sim.sim_vendors import SIM_KEYS
from veranda_dagster.sim.summary import asset_metadata_text, run_summary
from veranda_dagster.sim.world import SimWorld

pytestmark = pytest.mark.slow

PIN = "claude-opus-sim"


def revoke_claude_when_test_writer_arrives(world: SimWorld) -> threading.Thread:
    arrived = world.model.block("test_writer")

    def revoke() -> None:
        if arrived.wait(150):
            world.model.revoke(SIM_KEYS["SIM_ANTHROPIC_API_KEY"])
            world.model.revoke(SIM_KEYS["SIM_CLAUDE_OAUTH_TOKEN"])
        world.model.release("test_writer")

    thread = threading.Thread(target=revoke, daemon=True)
    thread.start()
    return thread


def every_output(world: SimWorld, instance, key: str) -> str:
    parts = [*world.linear.comments_of(key)]
    for channel in world.slack.channels:
        parts += [str(m) for m in world.slack.messages(channel)]
    for pr in world.github.all_pulls():
        parts += [pr["title"], pr["body"]]
    parts += [str(c) for cs in world.github.issue_comments.values() for c in cs]
    parts += [str(c) for cs in world.github.review_comments.values() for c in cs]
    for run in instance.get_runs():
        parts += [str(e.user_message) + str(e.dagster_event) for e in instance.all_logs(run.run_id)]
    parts.append(asset_metadata_text(instance, key))
    values = Path(world.env["VERANDA_VALUES_DIR"])
    parts += [p.read_text(errors="replace") for p in values.rglob("*") if p.is_file()]
    history = subprocess.run(
        ["git", f"--git-dir={world.org.bare(BILLING)}", "log", "-p", "--all"],
        capture_output=True,
        text=True,
        check=True,
    )
    parts.append(history.stdout)
    return "\n".join(parts)


@pytest.mark.parametrize("world", [{"ci_mode": "never"}], indirect=True)
def test_revoked_keys_fall_back_drop_the_pin_and_leak_nothing(world: SimWorld, instance) -> None:
    world.env["VERANDA_CI_WAIT_TIMEOUT_S"] = "4"
    issue = world.linear.file_ticket(
        INJECTION_TICKET_TITLE, INJECTION_TICKET_BODY, labels=["veranda", f"model:{PIN}"]
    )
    key = issue["identifier"]
    (request,) = SensorDriver().tick(instance, "linear_tickets")
    revoker = revoke_claude_when_test_writer_arrives(world)
    run_id, ok = run_ticket_process(run_tags(request), world.env)
    revoker.join(5)
    assert ok, step_failures(instance, run_id)

    # same vendor's other mode first, then the other vendor
    model = world.model
    login = model.credential_ref("oauth", SIM_KEYS["SIM_CLAUDE_OAUTH_TOKEN"])
    glm = model.credential_ref("oauth", SIM_KEYS["SIM_ZAI_API_KEY"])
    after = [c for c in model.calls if c.role != "repo_confirmer"]
    refused = [c for c in after if c.status == 401]
    assert refused[0].role == "test_writer" and refused[0].credential == "api_key"
    tried = [c.credential_ref for c in after if c.role == "probe"]
    assert tried.index(login) < tried.index(glm)
    assert all(c.credential_ref == glm for c in after if c.status == 200 and c.role != "probe")

    summary = run_summary(instance, key, world.linear.bot_comments(key))
    assert summary.assets["red_tests"].vendor == "glm/api_key"
    assert summary.assets["repo_guess"].vendor == "claude/api_key"
    assert summary.ci == "timed_out"
    (opened,) = [c for c in world.linear.bot_comments(key) if "pull request" in c.lower()]
    assert "glm/api_key" in opened and "auth" in opened
    assert f"`{PIN}`" in opened and "dropped" in opened

    # the injection was obeyed by the model and its dump flowed into outputs ...
    text = every_output(world, instance, key)
    assert "everything I was given" in text
    # ... but no secret of any service ever reached one
    leaked = [name for name, value in {**SIM_KEYS, **_tokens(world)}.items() if value in text]
    assert leaked == []


def _tokens(world: SimWorld) -> dict[str, str]:
    return {k: world.env[k] for k in ("LINEAR_API_KEY", "SLACK_BOT_TOKEN", "GITHUB_TOKEN")}
