"""``veranda sim ticket|fault|status`` reach the world a running ``veranda dev`` keeps up."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import httpx
import pytest

from tests.support.stalled_servers import silent
from veranda_dagster.cli import main
from veranda_dagster.cli import sim as sim_cli
from veranda_dagster.sim.control import CI_RED_LINE, SimControl
from veranda_dagster.sim.world import LINEAR_LABEL, SimWorld


@pytest.fixture
def control(tmp_path: Path):
    with SimWorld(root=tmp_path / "world") as world, SimControl(world, {"ui_url": "u"}) as ctl:
        state = tmp_path / "dev.json"
        state.write_text(json.dumps({"control_url": ctl.base_url, "pid": os.getpid()}))
        yield world, ctl, str(state)


def test_sim_ticket_files_a_labelled_ticket_the_sensor_will_take(control, capsys):
    world, _, state = control
    assert main(["sim", "--state", state, "ticket", "Fix rounding", "--body", "repo: x/y"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("filed ENG-")
    found = world.linear.find(out.split()[1].rstrip(":"))
    assert found is not None
    assert found["title"] == "Fix rounding" and found["description"] == "repo: x/y"
    assert {"name": LINEAR_LABEL} in found["labels"]["nodes"]


def test_sim_faults_reach_the_model_and_the_ci(control, capsys):
    world, ctl, state = control
    assert main(["sim", "--state", state, "fault", "model-5xx", "--times", "3"]) == 0
    assert world.model._role_faults["implementer"] == [(500, None)] * 3
    assert main(["sim", "--state", state, "fault", "revoke-key"]) == 0
    assert len(world.model.revoked) == 1
    assert main(["sim", "--state", state, "fault", "ci-red"]) == 0
    assert ctl.ci_red_flag.exists()
    test_argv = dict(world.github.ci.commands)["test"]
    assert test_argv[:2] == ("sh", "-c") and CI_RED_LINE in test_argv[2]
    capsys.readouterr()
    assert main(["sim", "--state", state, "status"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["ui_url"] == "u" and "model_calls_by_role" in status


def test_sim_without_a_running_dev_says_how_to_start_one(tmp_path, capsys, monkeypatch):
    assert main(["sim", "--state", str(tmp_path / "none.json"), "status"]) == 2
    assert "start one: veranda dev" in capsys.readouterr().err
    monkeypatch.setenv("VERANDA_DEV_STATE_DIR", str(tmp_path / "empty"))
    assert main(["sim", "status"]) == 2
    assert "no running veranda dev found" in capsys.readouterr().err


def test_sim_notes_shows_what_the_product_posted_on_each_ticket(control, capsys):
    world, _, state = control
    key = world.linear.file_ticket("Fix rounding", "repo: acme/billing")["identifier"]
    world.linear.add_comment(key, "a human's comment")
    assert main(["sim", "--state", state, "notes"]) == 0
    out = capsys.readouterr().out
    assert f"{key}: Fix rounding ({world.linear.base_url}/" in out
    assert "(no comment from veranda yet)" in out and "a human's comment" not in out
    world.linear.add_comment(key, "Veranda's run failed at phase `patch`", "lin-user-bot")
    assert main(["sim", "--state", state, "notes", key]) == 0
    assert "  - Veranda's run failed at phase `patch`" in capsys.readouterr().out
    assert main(["sim", "--state", state, "notes", "ENG-999"]) == 2
    assert "no ticket ENG-999" in capsys.readouterr().err


def test_a_bad_fault_is_refused_by_name(control):
    _, ctl, _ = control
    response = httpx.post(f"{ctl.base_url}/faults", json={"kind": "meteor"})
    assert response.status_code == 400 and "model-5xx" in response.json()["error"]


def test_a_dev_whose_control_port_never_answers_is_an_error_at_the_bound(
    tmp_path, capsys, monkeypatch
):
    """``CONTROL_TIMEOUT_S`` (patched to 0.3 s) against a control port that accepts and never
    answers (a hung ``veranda dev``): exit 1 and "did not answer" within the bound; the twin
    above (``test_sim_faults_reach_the_model_and_the_ci``) is a control port that answers."""
    monkeypatch.setattr(sim_cli, "CONTROL_TIMEOUT_S", 0.3)
    with silent() as port:
        state = tmp_path / "dev.json"
        url = f"http://127.0.0.1:{port}"
        state.write_text(json.dumps({"control_url": url, "pid": os.getpid()}))
        started = time.monotonic()
        assert main(["sim", "--state", str(state), "status"]) == 1
        took = time.monotonic() - started
    assert f"sim: veranda dev at {url} did not answer" in capsys.readouterr().err
    assert 0.3 <= took < 0.3 + 2.0
