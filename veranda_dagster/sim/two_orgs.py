"""A second org for the simulation, configured per org the way a deployment serving two
differently-run orgs is: ``acme`` on the GitHub fake taking Linear and Slack tickets, and
``acme-data`` on the GitLab fake taking Jira tickets, through one orgs file (``VERANDA_ORGS``)
in place of ``VERANDA_FORGE``/``VERANDA_CATALOG``.

``acme-data/billing`` is a copy of the sample billing service, so the scripted seats fix it the
same way; which org a run ends up in is decided by the ticket's source and text alone.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from veranda_dagster.sim.sample_org import billing_files, create_bare_repo

if TYPE_CHECKING:
    from veranda_dagster.sim.world import SimWorld

DATA_ORG = "acme-data"
DATA_BILLING = f"{DATA_ORG}/billing"
DATA_SOURCES = ("jira",)
ACME_SOURCES = ("linear", "slack")


def add_data_org(world: SimWorld) -> dict[str, str]:
    """Create ``acme-data/billing`` beside the sample org, write both orgs' settings, and
    return the environment that configures the product with them."""
    scratch = world.root / "data-org-scratch"
    scratch.mkdir()
    create_bare_repo(world.org.git_base, DATA_BILLING, billing_files(), scratch)
    catalog = world.root / "acme-data-catalog.json"
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
                "api_url": world.github.base_url,
                "git_base": str(world.org.git_base),
                "sources": list(ACME_SOURCES),
                "catalog": str(world.org.catalog_path),
            },
            {
                "name": DATA_ORG,
                "forge": "gitlab",
                "api_url": world.gitlab.base_url,
                "git_base": world.gitlab.base_url,
                "token_env": "GITLAB_TOKEN",
                "sources": list(DATA_SOURCES),
                "catalog": str(catalog),
            },
        ]
    }
    path = world.root / "orgs.json"
    path.write_text(json.dumps(orgs, indent=2))
    return {"VERANDA_ORGS": str(path), "VERANDA_FORGE": "github", "VERANDA_CATALOG": ""}
