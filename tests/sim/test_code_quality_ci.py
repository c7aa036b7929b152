"""The fake CI's Code Quality job and the scripted CI repairer, without a pipeline run.

The job reports every ``D103`` finding of the tree but fails only on those the merge base does
not have; the repairer edits exactly the findings its prompt lists. Together they are the
grounded-repair case of the e2e runs (``tests/e2e/test_sources_and_forges.py``).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from veranda_dagster.domain.core.models import Violation
from veranda_dagster.domain.work.static_analysis import render
from veranda_dagster.sim.bare_repo import BareRepo
from veranda_dagster.sim.fake_ci import CODE_QUALITY_JOB, FakeCI
from veranda_dagster.sim.sample_org import BILLING, SampleOrg
from veranda_dagster.sim.scripted_agent import RED_TEST, EditFile
from veranda_dagster.sim.scripted_seats import script_reply


def push_branch(org: SampleOrg, tmp: Path, branch: str, files: dict[str, str]) -> str:
    work = tmp / branch.replace("/", "_")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "clone", "-q", str(org.bare(BILLING)), str(work)], check=True)
    subprocess.run([*git, "checkout", "-q", "-b", branch], cwd=work, check=True)
    for rel, text in files.items():
        (work / rel).write_text(text)
    subprocess.run([*git, "add", "-A"], cwd=work, check=True)
    subprocess.run([*git, "commit", "-qm", "change"], cwd=work, check=True)
    subprocess.run([*git, "push", "-q", "origin", branch], cwd=work, check=True)
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=work, capture_output=True, text=True, check=True
    ).stdout.strip()


def quality_run(ci: FakeCI, repo: BareRepo, sha: str):
    ci.ensure(repo, sha)
    assert ci.wait_idle(timeout=120)
    (run,) = [r for r in ci.ensure(repo, sha) if r.name == CODE_QUALITY_JOB]
    return run


def test_the_job_reports_every_finding_but_fails_only_on_new_ones(sample_org, tmp_path):
    ci = FakeCI(code_quality=True)
    assert [name for name, _ in ci.commands] == ["lint", "test", CODE_QUALITY_JOB]
    assert [name for name, _ in FakeCI().commands] == ["lint", "test"]
    repo = BareRepo(sample_org.bare(BILLING), BILLING)

    red = push_branch(sample_org, tmp_path, "veranda/red", {"tests/test_quantity.py": RED_TEST})
    run = quality_run(ci, repo, red)
    assert run.conclusion == "failure"
    assert sorted(a["path"] for a in run.annotations) == [
        "tests/test_invoice.py",  # two on main already
        "tests/test_invoice.py",
        "tests/test_quantity.py",  # the change's own
    ]
    assert "1 new finding(s)" in run.summary

    documented = RED_TEST.replace(
        "-> None:\n", '-> None:\n    """Quantity multiplies the unit price."""\n'
    )
    green = push_branch(
        sample_org, tmp_path, "veranda/green", {"tests/test_quantity.py": documented}
    )
    run = quality_run(ci, repo, green)
    assert run.conclusion == "success"  # main's two findings are still in the report
    assert sorted(a["path"] for a in run.annotations) == ["tests/test_invoice.py"] * 2


def findings(*where: tuple[str, int]) -> str:
    return render(
        [
            Violation(tool=CODE_QUALITY_JOB, rule="D103", path=path, line=line, message="m")
            for path, line in where
        ]
    )


def test_the_repairer_edits_exactly_the_findings_its_prompt_lists():
    prompt = "Role: ci_repairer\n" + findings(
        ("tests/test_quantity.py", 4), ("tests/test_quantity_edges.py", 8), ("src/x.py", 3)
    )
    reply = script_reply("ci_repairer", prompt, 1)
    edits = [a for a in reply.actions if isinstance(a, EditFile)]
    assert [(e.path, e.old) for e in edits] == [
        ("tests/test_quantity.py", "def test_quantity_multiplies_the_unit_price() -> None:\n"),
        (
            "tests/test_quantity_edges.py",
            "def test_discount_applies_to_the_quantity_weighted_subtotal() -> None:\n",
        ),
    ]
    assert edits[0].new.endswith('    """Quantity multiplies the unit price."""\n')
    # a finding on another change's file is edited too if the prompt lists it: the e2e runs
    # would see it in the repair commit, so the grounding's filter is what keeps it out
    theirs = script_reply(
        "ci_repairer", "Role: ci_repairer\n" + findings(("tests/test_invoice.py", 4)), 1
    )
    assert [a.path for a in theirs.actions if isinstance(a, EditFile)] == ["tests/test_invoice.py"]
    plain = script_reply("ci_repairer", "Role: ci_repairer\nthe log tail", 1)
    assert plain.actions == []
