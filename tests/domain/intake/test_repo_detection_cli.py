"""The ``veranda detect-repo`` contract, run as a subprocess the way evaluation scripts run it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from veranda_dagster.cli import main

ROOT = Path(__file__).resolve().parents[3]
CATALOG = ROOT / "tests/fixtures/repo_detection/catalog.json"
KEYS = {"repo", "confidence", "signal", "decision", "candidates", "question"}


def veranda(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("veranda")
    cmd = (
        [exe]
        if exe
        else [
            sys.executable,
            "-c",
            "import sys; from veranda_dagster.cli import main; sys.exit(main())",
        ]
    )
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [*cmd, "detect-repo", *args], capture_output=True, text=True, env=full_env, timeout=60
    )


def write_ticket(tmp_path: Path, **fields) -> Path:
    ticket = {
        "id": "ENG-1",
        "source": "linear",
        "title": "t",
        "description": "",
        "labels": [],
        "attachments": [],
        "url": None,
        **fields,
    }
    path = tmp_path / "ticket.json"
    path.write_text(json.dumps(ticket))
    return path


def test_proceed_output_is_one_json_object_with_exactly_the_contract_keys(tmp_path):
    ticket = write_ticket(
        tmp_path,
        title="Crash on launch",
        attachments=[{"url": "https://github.com/acme/mobile-app/issues/5"}],
    )
    done = veranda("--catalog", str(CATALOG), "--ticket", str(ticket), "--no-model")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1
    out = json.loads(lines[0])
    assert set(out) == KEYS
    assert out == {
        "repo": "acme/mobile-app",
        "confidence": "high",
        "signal": "url",
        "decision": "proceed",
        "candidates": ["acme/mobile-app"],
        "question": None,
    }


def test_ask_output_lists_candidates_in_the_question(tmp_path):
    ticket = write_ticket(tmp_path, title="gateway strips the header before gatekeeper sees it")
    done = veranda("--catalog", str(CATALOG), "--ticket", str(ticket), "--no-model")
    out = json.loads(done.stdout)
    assert out["decision"] == "ask" and out["repo"] is None and out["confidence"] == "low"
    assert out["signal"] == "prose"
    assert set(out["candidates"]) == {"acme/api-gateway", "acme/auth-service"}
    assert all(c in out["question"] for c in out["candidates"])


def test_without_a_usable_vendor_the_deterministic_guess_is_printed(tmp_path):
    ticket = write_ticket(tmp_path, title="x", description="repo: acme/ledger")
    env = {"VERANDA_VENDORS_FILE": str(tmp_path / "missing-vendors.yaml")}
    done = veranda("--catalog", str(CATALOG), "--ticket", str(ticket), env=env)
    assert done.returncode == 0
    assert json.loads(done.stdout)["repo"] == "acme/ledger"
    assert "no model pass" in done.stderr


@pytest.mark.parametrize(
    ("which", "content", "needle"),
    [
        ("catalog", "{broken", "not valid JSON"),
        ("catalog", '{"org": "acme", "repositories": "x"}', "repositories"),
        ("ticket", "[]", "ticket"),
        ("ticket", '{"id": "ENG-1", "source": "trello", "title": "t"}', "source"),
        ("ticket", "{nope", "not valid JSON"),
    ],
)
def test_bad_files_exit_2_with_one_line_on_stderr(tmp_path, capsys, which, content, needle):
    """In-process (same ``main`` the script calls) to keep the suite fast; the subprocess
    path for exit 2 is covered by the missing-file test below."""
    bad = tmp_path / f"bad-{which}.json"
    bad.write_text(content)
    catalog = bad if which == "catalog" else CATALOG
    ticket = bad if which == "ticket" else write_ticket(tmp_path)
    code = main(["detect-repo", "--catalog", str(catalog), "--ticket", str(ticket), "--no-model"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert len(captured.err.strip().splitlines()) == 1 and needle in captured.err


def test_missing_file_exits_2(tmp_path):
    done = veranda(
        "--catalog", str(tmp_path / "nope.json"), "--ticket", str(write_ticket(tmp_path))
    )
    assert done.returncode == 2 and done.stdout == "" and "cannot read" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_several_catalogs_are_weighed_together(tmp_path, capsys):
    """A ticket several orgs may take: each org's catalog once, one guess over all of them."""
    data = tmp_path / "data.json"
    data.write_text(
        json.dumps(
            {"org": "acme-data", "repositories": [{"full_name": "acme-data/warehouse-loader"}]}
        )
    )
    ticket = tmp_path / "t.json"
    ticket.write_text(
        json.dumps(
            {"id": "jira-D-1", "source": "jira", "title": "The warehouse-loader job drops rows"}
        )
    )
    args = ["--ticket", str(ticket), "--no-model"]
    assert main(["detect-repo", "--catalog", str(CATALOG), "--catalog", str(data), *args]) == 0
    guess = json.loads(capsys.readouterr().out)
    assert (guess["decision"], guess["repo"]) == ("proceed", "acme-data/warehouse-loader")
    assert main(["detect-repo", "--catalog", str(data), "--catalog", str(data), *args]) == 2
    assert "two catalogs" in capsys.readouterr().err
