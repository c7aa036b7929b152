"""Each forge declares everything about itself in its folder's ``plugin.py``; what is
derived from the rows (the forge resource's settings and secret, repository detection's link
readers, the scrubber's token shapes) follows a new row, and a row missing a piece is refused
loudly at registration, never half-working at the first ticket."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest

from tests.support.plugins import scratch
from veranda_dagster.domain.context.code_search import CodeSearch
from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.domain.core.redaction import TokenShape, scrub
from veranda_dagster.domain.intake.repo_evidence import RepoLink, link_readers
from veranda_dagster.forges.registry import (
    FORGES,
    ForgeClient,
    ForgeProvider,
    forge_provider,
    missing_pieces,
)
from veranda_dagster.registry import Registry
from veranda_dagster.resources.forge import ForgeResource
from veranda_dagster.resources.secrets import service_secrets

NAMES = sorted(FORGES)


def acme_link(url: str) -> RepoLink | None:
    match = re.match(r"^https://acme-forge\.test/(?P<owner>[^/]+)/(?P<name>[^/#?]+)", url)
    return RepoLink(match["owner"], match["name"], "url_ref") if match else None


ACME_TOKEN = TokenShape("acme_forge", r"acf_[A-Za-z0-9]{20,}", "acf_" + "a1B2" * 6, "made up here")
ACME = ForgeProvider(
    name="acme",
    default_api_url="https://api.acme-forge.test",
    default_git_base="https://acme-forge.test",
    git_username="token",
    pr_path=re.compile(r"^/(?P<repo>[^/]+/[^/]+)/changes/(?P<number>\d+)$"),
    make_client=FORGES["github"].make_client,  # an API the GitHub client speaks, for the test
    make_code_search=FORGES["github"].make_code_search,
    env_prefix="ACME_FORGE",
    search_per_minute=20,
    link_reader=acme_link,
    token_shapes=(ACME_TOKEN,),
)
"""A complete third forge, declared the way a new row would be."""


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> Registry[ForgeProvider]:
    """``FORGES`` for one test: forges registered here are gone afterwards."""
    return scratch(FORGES, monkeypatch)


@pytest.mark.parametrize("name", NAMES)
def test_every_registered_forge_declares_every_piece_and_each_piece_works(name: str) -> None:
    row = forge_provider(name)
    assert missing_pieces(row) == []
    assert isinstance(row.client("", "token"), ForgeClient)
    assert isinstance(row.code_search("", "token", "acme/app", sha="a" * 40), CodeSearch)
    assert row.link_reader in link_readers()  # repository detection reads its links
    for shape in row.token_shapes:
        assert shape.sample not in scrub(f"token={shape.sample}", environ={})
    assert set(row.secret_env) <= set(service_secrets()["forge"])  # so Helm and README


DROPPED: list[tuple[str, Any]] = [
    ("default_api_url", ""),
    ("default_git_base", "github.com"),
    ("git_username", ""),
    ("pr_path", re.compile(r"/changes/\d+")),
    ("make_client", None),
    ("make_code_search", None),
    ("env_prefix", "acme-forge"),
    ("search_per_minute", 0),
    ("link_reader", None),
    ("token_shapes", ()),
    ("token_shapes", (dataclasses.replace(ACME_TOKEN, sample="not-a-token"),)),
]


@pytest.mark.parametrize(("piece", "value"), DROPPED, ids=[f"{p}={v!r}"[:40] for p, v in DROPPED])
def test_a_forge_missing_a_piece_is_refused_at_registration(registry, piece, value) -> None:
    incomplete = dataclasses.replace(ACME, **{piece: value})
    with pytest.raises(ConfigError, match=rf"forge 'acme' is incomplete: .*\b{piece}\b"):
        FORGES.register(incomplete)
    assert "acme" not in registry


def test_a_third_forge_is_one_row_and_everything_derived_from_rows_follows(registry) -> None:
    FORGES.register(ACME)
    assert forge_provider(" Acme ") is ACME
    env = {
        "VERANDA_FORGE": "acme",
        "ACME_FORGE_TOKEN": ACME_TOKEN.sample,
        "ACME_FORGE_GIT_BASE": "https://acme-forge.test",
    }
    resource = ForgeResource.from_env(env)
    assert (resource.forge, resource.token_env, resource.git_username) == (
        "acme",
        "ACME_FORGE_TOKEN",
        "token",
    )
    assert resource.configured and resource.search_per_minute == 20
    assert resource.clone_url("team/app") == "https://acme-forge.test/team/app.git"
    assert resource.parse_pr_url("https://acme-forge.test/team/app/changes/4") == ("team/app", 4)
    assert resource.parse_pr_url("https://github.com/team/app/pull/4") is None
    assert acme_link in link_readers()
    assert ACME_TOKEN.sample not in scrub(f"pushed with {ACME_TOKEN.sample}", environ={})
    with pytest.raises(ConfigError, match="registered twice"):
        FORGES.register(ACME)
