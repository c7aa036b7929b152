"""One forge client over several orgs' forges, each call routed by the repository it names.

Every operation of the forge port names its repository first, so a deployment whose orgs live
on different forges (or different instances of one) still hands the phases and the PR-feedback
sensor a single ``Forge``: the call for ``acme-data/platform/pipeline`` goes to the client of
org ``acme-data``, anything outside the listed orgs to the deployment's default forge, by
``domain.core.orgs.org_of``, the rule ``ForgeResource.for_repo`` picks the clone's token by.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from veranda_dagster.domain.core.forge_port import CiFinding, CiJob, Comment, ForgePR
from veranda_dagster.domain.core.orgs import org_of
from veranda_dagster.domain.intake.repo_vocabulary import RepositoryFiles
from veranda_dagster.forges.registry import ForgeClient


class RoutedForge:
    def __init__(self, default: ForgeClient, by_org: Mapping[str, ForgeClient]) -> None:
        self.default = default
        self.by_org = {org.lower(): client for org, client in by_org.items()}

    def for_owner(self, owner: str) -> ForgeClient:
        """The client of the org ``owner`` (``acme-data`` or ``acme-data/platform``) is in."""
        return self.by_org.get(org_of(owner), self.default)

    def _for(self, repo: str) -> ForgeClient:
        return self.for_owner(repo)

    def find_pull_request(self, repo: str, head_branch: str) -> ForgePR | None:
        return self._for(repo).find_pull_request(repo, head_branch)

    def create_pull_request(
        self, repo: str, head: str, base: str, title: str, body: str
    ) -> tuple[int, str]:
        return self._for(repo).create_pull_request(repo, head, base, title, body)

    def update_pull_request_body(self, repo: str, number: int, body: str) -> None:
        self._for(repo).update_pull_request_body(repo, number, body)

    def list_ci_jobs(self, repo: str, sha: str) -> list[CiJob]:
        return self._for(repo).list_ci_jobs(repo, sha)

    def ci_findings(self, repo: str, job: CiJob) -> list[CiFinding]:
        return self._for(repo).ci_findings(repo, job)

    def ci_job_report(self, repo: str, job: CiJob) -> str:
        return self._for(repo).ci_job_report(repo, job)

    def ci_job_log_tail(self, repo: str, job: CiJob) -> str | None:
        return self._for(repo).ci_job_log_tail(repo, job)

    def list_comments(self, repo: str, number: int) -> list[Comment]:
        return self._for(repo).list_comments(repo, number)

    def comment(self, repo: str, number: int, body: str) -> str:
        return self._for(repo).comment(repo, number, body)

    def reply(self, repo: str, number: int, to: Comment, body: str) -> str:
        return self._for(repo).reply(repo, number, to, body)

    def list_org_repositories(self, org: str) -> list[dict[str, Any]]:
        return self.for_owner(org).list_org_repositories(org)

    def get_repository(self, owner: str, name: str) -> dict[str, Any] | None:
        return self.for_owner(owner).get_repository(owner, name)

    def read_repository_file(self, full_name: str, path: str) -> str | None:
        client = self.for_owner(full_name)
        if not isinstance(client, RepositoryFiles):
            return None
        return client.read_repository_file(full_name, path)

    def list_repository_dir(self, full_name: str, path: str) -> list[str] | None:
        client = self.for_owner(full_name)
        if not isinstance(client, RepositoryFiles):
            return None
        return client.list_repository_dir(full_name, path)

    def close(self) -> None:
        for client in {id(c): c for c in [self.default, *self.by_org.values()]}.values():
            client.close()
