"""The fake forge's CI: really runs a pushed commit's ``make lint`` and ``make test``.

For each head sha the GitHub fake is asked about, CI clones that commit from the bare repo into
a scratch directory and runs each command as one check run (``lint``, ``test``), each killed
with its process group at ``command_timeout_s`` (conclusion ``timed_out``). A failing lint is
run with ``RUFF_FORMAT=json`` so ruff's JSON findings become check-run annotations, as the
ruff GitHub integration reports them. ``mode="never"`` leaves every run ``in_progress``
forever, for the bounded-wait test.

``code_quality=True`` adds a third job, ``code_quality``: ruff's docstring rule ``D103`` over
the whole checkout, as a Code Quality job reports every finding of the tree. Like GitLab's
merge-request Code Quality comparison it fails only on findings the target branch does not
already have (matched by path, rule and the line's text at the merge base), so a change is
held to its own findings while the report still lists the old ones beside them: the grounding
case of the one CI repair.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from veranda_dagster.domain.clone.active_environment import ActiveEnvironment, active_environment
from veranda_dagster.domain.context.facts import read_repo_facts
from veranda_dagster.domain.core.errors import VerandaError
from veranda_dagster.environment.setup import prepare_environment
from veranda_dagster.sim.bare_repo import BareRepo

CI_COMMAND_TIMEOUT_S = 120.0
"""One CI command on the sample repo takes a second or two; two minutes means it hung."""

CI_SETTLE_S = 10.0
"""A check-runs query for a commit whose CI is running waits up to this long for it to finish.
The sample repository's CI takes a second or two; answering ``in_progress`` sends the product
into its poll back-off (``CI_POLL_INITIAL_S`` doubling) whenever the machine is a little slow,
which made e2e run times vary at random. The poll loop has unit tests of its own."""

KILLED_DRAIN_S = 5.0
"""After a timed-out command's group is killed, how long its output pipe is still read: the
group closes it at once, but a process the repository's command started in a session of its
own (``setsid``) keeps it open for as long as it lives; the check run then ends without it."""

OUTPUT_SUMMARY_BYTES = 4_000
"""Tail of a command's output kept as the check run's summary."""

DEFAULT_COMMANDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("lint", ("make", "lint", "RUFF_FORMAT=json")),
    ("test", ("make", "test")),
)

CODE_QUALITY_JOB = "code_quality"
CODE_QUALITY_RULE = "D103"
"""Missing docstring in a public function: the sample repository's own tests already break
it on ``main``, and every test function an agent adds breaks it again."""
CODE_QUALITY_COMMAND: tuple[str, tuple[str, ...]] = (
    CODE_QUALITY_JOB,
    ("python3", "-m", "ruff", "check", "--no-cache", "--select", CODE_QUALITY_RULE,
     "--output-format", "json", "."),
)  # fmt: skip
GATED_ON_NEW_FINDINGS = frozenset({CODE_QUALITY_JOB})
"""Jobs that fail only on findings new against the target branch (the MR comparison)."""

CiMode = Literal["run", "never"]


@dataclass
class CheckRun:
    id: int
    name: str
    head_sha: str
    repo: str
    status: str = "queued"
    conclusion: str | None = None
    started_at: str | None = None
    completed_at: str | None = None
    summary: str = ""
    annotations: list[dict[str, Any]] = field(default_factory=list)

    def as_json(self, api_base: str) -> dict[str, Any]:
        url = f"{api_base}/repos/{self.repo}/check-runs/{self.id}"
        return {
            "id": self.id,
            "name": self.name,
            "head_sha": self.head_sha,
            "status": self.status,
            "conclusion": self.conclusion,
            "started_at": self.started_at,
            "completed_at": self.completed_at,
            "url": url,
            "html_url": url,
            "details_url": url,
            "check_suite": {"id": self.id // 10},
            "app": {"slug": "github-actions", "name": "GitHub Actions"},
            "output": {
                "title": f"{self.name}: {self.conclusion or self.status}",
                "summary": self.summary,
                "annotations_count": len(self.annotations),
                "annotations_url": f"{url}/annotations",
            },
            "pull_requests": [],
        }


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class FakeCI:
    def __init__(
        self,
        mode: CiMode = "run",
        command_timeout_s: float | None = None,
        commands: tuple[tuple[str, tuple[str, ...]], ...] = DEFAULT_COMMANDS,
        *,
        code_quality: bool = False,
    ) -> None:
        self.mode: CiMode = mode
        self.command_timeout_s = (
            CI_COMMAND_TIMEOUT_S if command_timeout_s is None else command_timeout_s
        )
        """Each CI command's bound; ``None`` is the default (``CI_COMMAND_TIMEOUT_S``)."""
        self.commands = (*commands, CODE_QUALITY_COMMAND) if code_quality else commands
        self._baselines: dict[str, set[tuple[str, str, str]]] = {}
        """merge-base sha -> fingerprints of a gated job's findings there."""
        self.runs: dict[int, CheckRun] = {}
        self.by_sha: dict[str, list[int]] = {}
        self._ids = itertools.count(41)
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._running: dict[str, threading.Thread] = {}
        self._environments: dict[str, ActiveEnvironment | None] = {}
        """checkout folder -> its prepared environment, while its CI run executes."""

    def ensure(self, repo: BareRepo, sha: str) -> list[CheckRun]:
        """The check runs for ``sha``, starting CI for it the first time it is seen."""
        with self._lock:
            if sha not in self.by_sha:
                runs = [
                    CheckRun(next(self._ids) * 10, name, sha, repo.full_name)
                    for name, _ in self.commands
                ]
                for run in runs:
                    self.runs[run.id] = run
                self.by_sha[sha] = [r.id for r in runs]
                if self.mode == "never":
                    for run in runs:
                        run.status, run.started_at = "in_progress", _now()
                else:
                    thread = threading.Thread(
                        target=self._execute, args=(repo, sha, runs), daemon=True, name="fake-ci"
                    )
                    self._threads.append(thread)
                    self._running[sha] = thread
                    thread.start()
            return [self.runs[i] for i in self.by_sha[sha]]

    def settle(self, sha: str, timeout: float = CI_SETTLE_S) -> None:
        """Wait (bounded) for ``sha``'s CI to finish, if it is running."""
        with self._lock:
            thread = self._running.get(sha)
        if thread is not None:
            thread.join(timeout)

    def wait_idle(self, timeout: float = 60.0) -> bool:
        deadline = time.monotonic() + timeout
        for thread in list(self._threads):
            thread.join(max(0.0, deadline - time.monotonic()))
        return not any(t.is_alive() for t in self._threads)

    def _execute(self, repo: BareRepo, sha: str, runs: list[CheckRun]) -> None:
        scratch = Path(tempfile.mkdtemp(prefix="veranda-fake-ci-"))
        try:
            checkout = scratch / "src"
            subprocess.run(
                ["git", "clone", "--quiet", "--no-checkout", str(repo.path), str(checkout)],
                check=True,
                capture_output=True,
                timeout=60,
            )
            subprocess.run(
                ["git", "-C", str(checkout), "checkout", "--quiet", sha],
                check=True,
                capture_output=True,
                timeout=60,
            )
            environment = self._setup(repo, checkout, runs)
            if environment is False:
                return
            self._environments[str(checkout)] = environment
            for run, (_, argv) in zip(runs, self.commands, strict=True):
                self._run_one(run, list(argv), checkout)
                if run.name in GATED_ON_NEW_FINDINGS and run.conclusion != "timed_out":
                    self._gate_on_new_findings(run, list(argv), checkout, sha)
        except (subprocess.SubprocessError, OSError) as exc:
            for run in runs:
                if run.status != "completed":
                    run.status, run.conclusion = "completed", "failure"
                    run.summary, run.completed_at = f"CI could not check out {sha}: {exc}", _now()
        finally:
            self._environments.pop(str(scratch / "src"), None)
            shutil.rmtree(scratch, ignore_errors=True)

    def _setup(
        self, repo: BareRepo, checkout: Path, runs: list[CheckRun]
    ) -> ActiveEnvironment | Literal[False] | None:
        """The repository's setup step, as a real CI runs it first (``copilot-setup-steps``,
        a workflow's install step): the same declaration, cache and registries as the product.
        ``False`` (every run failed) when the setup fails."""
        try:
            prepare_environment(repo.full_name, checkout, read_repo_facts(checkout))
        except VerandaError as exc:
            for run in runs:
                run.status, run.conclusion, run.completed_at = "completed", "failure", _now()
                run.summary = f"the repository's setup step failed: {exc}"[-OUTPUT_SUMMARY_BYTES:]
            return False
        return active_environment(checkout)

    def _command(self, argv: list[str], cwd: Path, name: str) -> tuple[str, str]:
        """``(output, conclusion)`` of one command, killed with its group at the bound."""
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
        environment = self._environments.get(str(cwd))
        if environment is not None:
            env = environment.apply(env)
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        try:
            out, _ = proc.communicate(timeout=self.command_timeout_s)
            return out or "", "success" if proc.returncode == 0 else "failure"
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            try:
                out, _ = proc.communicate(timeout=KILLED_DRAIN_S)
            except subprocess.TimeoutExpired as exc:  # an escaped process holds the pipe
                if proc.stdout is not None:
                    proc.stdout.close()
                proc.wait(timeout=KILLED_DRAIN_S)
                partial = exc.output or b""
                out = partial.decode(errors="replace") if isinstance(partial, bytes) else partial
            killed = f"\n{name} exceeded {self.command_timeout_s:g}s and was killed"
            return (out or "") + killed, "timed_out"

    def _run_one(self, run: CheckRun, argv: list[str], cwd: Path) -> None:
        run.status, run.started_at = "in_progress", _now()
        out, conclusion = self._command(argv, cwd, run.name)
        gated = run.name in GATED_ON_NEW_FINDINGS
        if (conclusion == "failure" and run.name == "lint") or gated:
            run.annotations = ruff_annotations(out, cwd)
        run.summary = out[-OUTPUT_SUMMARY_BYTES:]
        if gated and conclusion == "failure":
            return  # still running: _gate_on_new_findings compares with the merge base
        run.conclusion, run.completed_at, run.status = conclusion, _now(), "completed"

    def _gate_on_new_findings(self, run: CheckRun, argv: list[str], cwd: Path, sha: str) -> None:
        """Complete a gated run: failed only if it has a finding the merge base lacks."""
        try:
            if run.status != "completed":
                base = _git_out(cwd, "merge-base", sha, "origin/HEAD") or sha
                if base not in self._baselines:
                    subprocess.run(["git", "-C", str(cwd), "checkout", "--quiet", base],
                                   check=True, capture_output=True, timeout=60)  # fmt: skip
                    out, _ = self._command(argv, cwd, run.name)
                    found = ruff_annotations(out, cwd)
                    self._baselines[base] = {_fingerprint(a, cwd) for a in found}
                    subprocess.run(["git", "-C", str(cwd), "checkout", "--quiet", sha],
                                   check=True, capture_output=True, timeout=60)  # fmt: skip
                mine = {_fingerprint(a, cwd) for a in run.annotations}
                new = mine - self._baselines[base]
                run.conclusion = "failure" if new else "success"
                run.summary += f"\n{len(new)} new finding(s) against {base[:12]}"
        finally:
            run.conclusion = run.conclusion or "failure"
            run.completed_at, run.status = _now(), "completed"


def _git_out(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    return proc.stdout.strip() if proc.returncode == 0 else ""


def _fingerprint(annotation: dict[str, Any], root: Path) -> tuple[str, str, str]:
    """``(path, rule, the line's text)``: a finding that only moved is the same finding."""
    path = str(annotation.get("path") or "")
    try:
        lines = (root / path).read_text(errors="replace").splitlines()
        text = lines[int(annotation.get("start_line") or 1) - 1].strip()
    except (OSError, IndexError, ValueError):
        text = ""
    return path, str(annotation.get("title") or ""), text


def ruff_annotations(output: str, root: Path) -> list[dict[str, Any]]:
    """Check-run annotations from ``ruff check --output-format json`` (absolute filenames)."""
    start = output.find("[")
    if start < 0:
        return []
    try:
        findings, _ = json.JSONDecoder().raw_decode(output[start:])
    except ValueError:
        return []
    prefix = str(root.resolve()).rstrip("/") + "/"
    rows = []
    for item in findings if isinstance(findings, list) else []:
        if not isinstance(item, dict):
            continue
        loc, end_loc = item.get("location") or {}, item.get("end_location") or {}
        path = str(item.get("filename") or "")
        path = path[len(prefix) :] if path.startswith(prefix) else path.lstrip("/")
        rows.append(
            {
                "path": path,
                "start_line": loc.get("row", 1),
                "end_line": end_loc.get("row", loc.get("row", 1)),
                "start_column": loc.get("column"),
                "end_column": end_loc.get("column"),
                "annotation_level": "failure",
                "title": str(item.get("code") or "ruff"),
                "message": f"{item.get('code')} {item.get('message')}",
                "raw_details": str(item.get("url") or ""),
            }
        )
    return rows
