"""Small catalogs written in a test: an org and its repositories' vocabularies, nothing else."""

from __future__ import annotations

from veranda_dagster.domain.intake.catalog import Catalog


def catalog(org: str, repos: dict[str, dict[str, list[str]]]) -> Catalog:
    """``org``'s catalog of ``repos`` (name -> vocabulary fields), validated as a stored one."""
    return Catalog.model_validate(
        {
            "org": org,
            "repositories": [
                {"full_name": f"{org}/{name}", "vocabulary": vocabulary}
                for name, vocabulary in repos.items()
            ],
        }
    )
