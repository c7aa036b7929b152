"""A second org for the simulation, configured per org the way a deployment serving two
differently-run orgs is: ``acme`` on the GitHub fake taking Linear and Slack tickets, and
``acme-data`` on the GitLab fake taking Jira tickets, through one orgs file (``VERANDA_ORGS``)
in place of ``VERANDA_FORGE``/``VERANDA_CATALOG``.

``acme-data/billing`` is a copy of the sample billing service, so the scripted seats fix it the
same way; which org a run ends up in is decided by the ticket's source and text alone.
"""

from __future__ import annotations

import json
from pathlib import Path

from veranda_dagster.sim.sample_org import SampleOrg, billing_files, create_bare_repo

DATA_ORG = "acme-data"
DATA_BILLING = f"{DATA_ORG}/billing"
DATA_SOURCES = ("jira",)
ACME_SOURCES = ("linear", "slack")


def add_data_org(root: Path, org: SampleOrg, github_url: str, gitlab_url: str) -> dict[str, str]:
    """Create ``acme-data/billing`` beside the sample ``org`` (the world's, under ``root``, its
    GitHub fake at ``github_url`` and GitLab fake at ``gitlab_url``), write both orgs' settings,
    and return the environment that configures the product with them. Takes the world's parts,
    not the world, so this module does not import ``world`` back."""
    scratch = root / "data-org-scratch"
    scratch.mkdir()
    create_bare_repo(org.git_base, DATA_BILLING, billing_files(), scratch)
    catalog = root / "acme-data-catalog.json"
    catalog.write_text(
        json.dumps(
            {
                "org": DATA_ORG,
                "repositories": [
                    {"full_name": DATA_BILLING, "description": "Invoices (the data team's copy)"}
                ],
            }
        )
    )
    orgs = {
        "orgs": [
            {
                "name": "acme",
                "forge": "github",
                "api_url": github_url,
                "git_base": str(org.git_base),
                "sources": list(ACME_SOURCES),
                "catalog": str(org.catalog_path),
            },
            {
                "name": DATA_ORG,
                "forge": "gitlab",
                "api_url": gitlab_url,
                "git_base": gitlab_url,
                "token_env": "GITLAB_TOKEN",
                "sources": list(DATA_SOURCES),
                "catalog": str(catalog),
            },
        ]
    }
    path = root / "orgs.json"
    path.write_text(json.dumps(orgs, indent=2))
    return {"VERANDA_ORGS": str(path), "VERANDA_FORGE": "github", "VERANDA_CATALOG": ""}
