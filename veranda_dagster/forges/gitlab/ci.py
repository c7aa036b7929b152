"""GitLab pipelines and jobs as the forge port's CI: jobs, findings, report text, log tails.

A pipeline is found by the pushed commit (``GET /projects/:id/pipelines?sha=``, newest first);
its jobs (``GET /projects/:id/pipelines/:pipeline_id/jobs``) become ``CiJob`` values, so
``domain.deliver.ci`` waits on them and picks the failing ones without knowing the forge. Job
status mapping (docs.gitlab.com/api/jobs): ``created``/``pending``/``preparing``/
``waiting_for_resource``/``scheduled`` are pending, ``running``/``canceling`` running,
``success`` passed, ``failed`` failed, ``canceled`` cancelled, a failed job with
``allow_failure`` is ``neutral`` (it does not fail the pipeline), and a ``manual`` job, which
never starts on its own, is ``skipped``.

A job's log (``/jobs/:id/trace``) and its reports are streamed with a byte bound: only the last
``LOG_TAIL_BYTES`` of a log are kept (the failure is at the end) and a report past
``MAX_CI_REPORT_BYTES`` is refused. Reports are read through the single-file artifact endpoint
(``/jobs/:id/artifacts/*artifact_path``), which serves files a job keeps under
``artifacts:paths`` (the Code Quality template keeps ``gl-code-quality-report.json`` there);
Code Climate and security reports are parsed by ``domain.work.code_quality`` and handed to the port
as ``CiFinding`` values, each attributed to the job (the tool the gate ran).
"""

from __future__ import annotations

import gzip
import time
import zlib
from typing import Any

import httpx

from veranda_dagster.domain.core.bounds import MAX_CI_REPORT_BYTES, OUTPUT_TAIL_BYTES
from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.domain.core.forge_port import CiFinding, CiJob
from veranda_dagster.domain.core.models import CiState, Violation
from veranda_dagster.domain.work.code_quality import parse_any_report
from veranda_dagster.forges.gitlab.base import API, GitLabApi, GitLabNotFoundError, project_ref
from veranda_dagster.http.bounded import Keep, bounded, read_body

LOG_TAIL_BYTES = OUTPUT_TAIL_BYTES * 4
"""Bytes of a job log kept, as for the other forge: the phase cuts it further."""

REPORT_FILES = ("gl-code-quality-report.json", "gl-sast-report.json")
"""The report file names GitLab's Code Quality and SAST templates write."""

REPORT_TYPES = frozenset({"codequality", "sast"})

_QUEUED = frozenset({"created", "pending", "preparing", "waiting_for_resource", "scheduled"})
_SETTLED: dict[str, CiState] = {
    "success": "passed",
    "failed": "failed",
    "canceled": "cancelled",
    "manual": "skipped",
    "skipped": "skipped",
}


def job_state(job: dict[str, Any]) -> CiState:
    """A job's ``status`` as one state (see the module docstring for the mapping)."""
    raw = str(job.get("status") or "created")
    if raw in _QUEUED:
        return "pending"
    if raw in ("running", "canceling"):
        return "running"
    if raw == "failed" and job.get("allow_failure"):
        return "neutral"
    return _SETTLED.get(raw, "neutral")


def ci_job(job: dict[str, Any]) -> CiJob:
    return CiJob(id=str(int(job["id"])), name=str(job.get("name") or ""), state=job_state(job))


def job_id(job: CiJob) -> int:
    """The job's numeric id back from a ``CiJob`` this client made."""
    if not job.id.isdigit():
        raise InputError(f"gitlab: job id {job.id!r} is not a number")
    return int(job.id)


def ci_finding(violation: Violation, tool: str) -> CiFinding:
    """A parsed report finding as the port's finding: GitLab's reports keep only findings
    that fail the gate (``info`` was dropped by the parser), so each is an error."""
    return CiFinding(
        path=violation.path,
        start_line=violation.line,
        end_line=violation.end_line or violation.line,
        rule=violation.rule,
        message=violation.message,
        severity="error",
        tool=tool,
    )


class GitLabCI(GitLabApi):
    # --- pipelines and jobs -------------------------------------------------------------------

    def list_pipelines(
        self, project: str, *, sha: str | None = None, ref: str | None = None
    ) -> list[dict[str, Any]]:
        """Pipelines for a commit and/or ref, newest first."""
        params: dict[str, Any] = {"order_by": "id", "sort": "desc"}
        if sha:
            params["sha"] = sha
        if ref:
            params["ref"] = ref
        return self._pages(f"/projects/{project_ref(project)}/pipelines", **params)

    def list_pipeline_jobs(self, project: str, pipeline_id: int) -> list[dict[str, Any]]:
        return self._pages(
            f"/projects/{project_ref(project)}/pipelines/{int(pipeline_id)}/jobs",
            include_retried="false",
        )

    def list_ci_jobs(self, project: str, sha: str) -> list[CiJob]:
        """The latest pipeline's jobs for ``sha``; ``[]`` while no pipeline exists yet."""
        pipelines = self.list_pipelines(project, sha=sha)
        if not pipelines:
            return []
        return [ci_job(j) for j in self.list_pipeline_jobs(project, pipelines[0]["id"])]

    def ci_findings(self, project: str, job: CiJob) -> list[CiFinding]:
        """The job's Code Quality / SAST findings (else a report printed in its log)."""
        raw = self.get_job(project, job_id(job))
        return [ci_finding(v, job.name) for v in self.job_findings(project, raw)]

    def ci_job_report(self, project: str, job: CiJob) -> str:
        """The job's name, status and failure reason: GitLab keeps no report text beside the
        artifacts (which ``ci_findings`` reads)."""
        raw = self.get_job(project, job_id(job))
        parts = [f"{raw.get('name')}: {raw.get('status')}", str(raw.get("failure_reason") or "")]
        return "\n\n".join(p for p in parts if p)

    def ci_job_log_tail(self, project: str, job: CiJob) -> str | None:
        return self.job_log_tail(project, job_id(job))

    def get_job(self, project: str, job_id: int) -> dict[str, Any]:
        return self._object("GET", f"/projects/{project_ref(project)}/jobs/{int(job_id)}")

    # --- logs and reports ---------------------------------------------------------------------

    def job_log_tail(self, project: str, job_id: int, limit: int = LOG_TAIL_BYTES) -> str | None:
        """The last ``limit`` bytes of the job's log; ``None`` when the job has none."""
        url = f"{API}/projects/{project_ref(project)}/jobs/{int(job_id)}/trace"
        body = self._stream(url, limit, keep="tail")
        return None if body is None else body.decode("utf-8", errors="ignore")

    def job_artifact(self, project: str, job_id: int, path: str) -> bytes | None:
        """One artifact file, at most ``MAX_CI_REPORT_BYTES`` (gzip unpacked within the same
        bound); ``None`` when the job kept no such file."""
        if not path or path.startswith("/") or ".." in path.split("/"):
            raise InputError(f"gitlab: artifact path {path!r} is not relative")
        url = f"{API}/projects/{project_ref(project)}/jobs/{int(job_id)}/artifacts/{path}"
        body = self._stream(url, MAX_CI_REPORT_BYTES, keep="head")
        if body is not None and body[:2] == b"\x1f\x8b":
            inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
            try:
                body = inflater.decompress(body, MAX_CI_REPORT_BYTES + 1)
            except (zlib.error, gzip.BadGzipFile):
                raise InputError(f"gitlab: artifact {path} is not valid gzip") from None
            if len(body) > MAX_CI_REPORT_BYTES:
                raise InputError(f"gitlab: artifact {path} is over {MAX_CI_REPORT_BYTES} bytes")
        return body

    def job_findings(
        self, project: str, job: dict[str, Any], root: str | None = None
    ) -> list[Violation]:
        """Violations from the job's Code Quality / SAST report files, else from a report
        printed in its log tail; ``[]`` when it produced none."""
        names = list(REPORT_FILES)
        for artifact in job.get("artifacts") or []:
            name = str((artifact or {}).get("filename") or "")
            if artifact.get("file_type") in REPORT_TYPES and name and name not in names:
                names.append(name.removesuffix(".gz"))
        found: list[Violation] = []
        for name in dict.fromkeys(names):
            body = self.job_artifact(project, int(job["id"]), name)
            if body:
                found += parse_any_report(body.decode("utf-8", errors="replace"), root)
        if not found:
            log = self.job_log_tail(project, int(job["id"])) or ""
            found = parse_any_report(log, root)
        return found

    def _stream(self, url: str, limit: int, *, keep: Keep) -> bytes | None:
        """GET ``url`` keeping the first (``head``: more is an error) or last ``limit`` bytes.

        The one place a body is streamed, so a hostile 100 MB log never sits in memory; it
        goes through ``request``'s origin, auth and retry rules by asking for the status first.
        """
        self.check_origin(url)
        headers = self._auth_headers()
        deadline = time.monotonic() + self.deadline_s
        what = f"gitlab: {url}"
        try:
            with self._client.stream("GET", url, headers=headers, follow_redirects=False) as r:
                if r.status_code == 404:
                    return None
                if r.status_code >= 400 or r.is_redirect:
                    body = read_body(r, what=what, deadline=deadline)
                    self._raise_streamed(bounded(r, body, what), url)
                return read_body(r, what=what, limit=limit, deadline=deadline, keep=keep)
        except httpx.TransportError as exc:
            raise InputError(f"gitlab: reading {url} failed: {type(exc).__name__}") from None

    def _raise_streamed(self, response: httpx.Response, url: str) -> None:
        if response.is_redirect:
            raise GitLabNotFoundError("gitlab", response.status_code, f"{url} redirected")
        self.raise_for_status(response, "GET", url)
