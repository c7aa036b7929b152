"""Issue 33, third round: what a mention does in an org whose repositories are one product's
family (the namesake repository, its plugins, charts, images, providers). Each rule beside its
adversarial twin, on small catalogs written here."""

from __future__ import annotations

import pytest

from tests.domain.intake.small_catalogs import catalog
from veranda_dagster.domain.core.models import Ticket
from veranda_dagster.domain.intake.catalog import Catalog
from veranda_dagster.domain.intake.repo_detection import detect_repo
from veranda_dagster.domain.intake.repo_evidence import gather_evidence, org_brand

ORBIT = catalog("orbit", {"orbit": {}, "comet": {"imports": ["comet"]}})
"""An org named like its namesake repository (``celery/celery``)."""
OPENTEL = catalog("opentel", {"opentel-js": {}, "opentel-python": {}})
"""An org whose name prefixes every package and names no repository (``open-telemetry``)."""
PRISM = catalog(
    "PrismHQ",
    {
        "prism": {"imports": ["prism"]},
        "prism-helm": {},
        "prism-cloud": {"commands": ["prism-cloud"]},
        "terraform-provider-prism": {},
        "flowctl": {"imports": ["flowctl"]},
        "marvel": {"imports": ["marvel"], "symbols": ["run_tasks"]},
    },
)
"""A product's family: the product, its chart, its cloud CLI, its provider, two libraries."""
IMAGES = catalog(
    "acme",
    {"web-nginx-docker": {"images": ["acme/web-nginx"]}, "web-docker": {}},
)
"""Two image repositories, one publishing a name its README shows, one by its own name."""


def ticket(title: str, description: str = "") -> Ticket:
    return Ticket(id="ENG-33", source="linear", title=title, description=description)


def kinds(t: Ticket, cat: Catalog) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for item in gather_evidence(t, cat).items():
        out.setdefault(item.repo.split("/")[1], set()).add(item.kind)
    return out


TRACE = 'File "/venv/lib/python3.11/site-packages/{}/worker.py", line 3, in stop'


def test_the_namesake_repository_is_imported_run_and_crashed_in_under_its_own_name():
    t = ticket(
        "Worker hangs on shutdown",
        "```python\nfrom orbit import App\n```\n" + TRACE.format("orbit"),
    )
    guess = detect_repo(t, ORBIT)
    assert (guess.decision, guess.repo) == ("proceed", "orbit/orbit")
    assert {"import", "trace"} <= kinds(t, ORBIT)["orbit"]


def test_twin_an_org_word_that_names_no_repository_is_still_no_package():
    t = ticket(
        "Worker hangs on shutdown", "```python\nimport opentel\n```\n" + TRACE.format("opentel")
    )
    assert kinds(t, OPENTEL) == {}
    assert detect_repo(t, OPENTEL).decision == "ask"


BRANDS = [("PrismHQ", "prism"), ("getsentry", "sentry"), ("tox-dev", "tox"), ("celery", "celery")]
BRANDS += [("python-poetry", "poetry"), ("pre-commit", "precommit")]
BRANDS += [("open-telemetry", "opentelemetry")]


@pytest.mark.parametrize(("org", "brand"), BRANDS)
def test_org_brand(org: str, brand: str):
    assert org_brand(org) == brand


def test_the_product_named_alone_is_the_family_word_and_asks():
    t = ticket("Prism deployment parameter change error", "Terraform v1.13.3 on linux_amd64")
    guess = detect_repo(t, PRISM)
    assert guess.decision == "ask"
    assert any("named like the org's product" in n for n in guess.notes)


def test_twin_the_product_used_proceeds():
    t = ticket("Prism flow retries ignored", "```python\nfrom prism import flow\n```")
    assert (detect_repo(t, PRISM).decision, detect_repo(t, PRISM).repo) == (
        "proceed",
        "PrismHQ/prism",
    )


def test_a_file_named_after_a_package_is_no_use_of_it():
    t = ticket(
        "Render fails", "```\nhelm template w --values values-prism.yaml\ncat prism.yaml\n```"
    )
    assert "usage" not in kinds(t, PRISM).get("prism", set())


def test_twin_the_package_called_through_its_name_is_a_use():
    t = ticket("Render fails", "```python\nprism.serve(flows)\n```")
    assert "usage" in kinds(t, PRISM)["prism"]


def test_an_import_alias_carries_usage_and_owns_the_names_reached_through_it():
    t = ticket(
        "`cf.run_tasks()` does not create a flow",
        "```python\nimport flowctl as cf\n\nt = cf.Task('x')\nresults = cf.run_tasks([t])\n```",
    )
    found = kinds(t, PRISM)
    assert {"import", "usage"} <= found["flowctl"] and "marvel" not in found
    assert detect_repo(t, PRISM).repo == "PrismHQ/flowctl"


def test_twin_the_name_imported_from_its_own_package_is_that_package_api():
    t = ticket("`run_tasks()` drops results", "```python\nfrom marvel import run_tasks\n```")
    guess = detect_repo(t, PRISM)
    assert (guess.decision, guess.repo) == ("proceed", "PrismHQ/marvel")


def test_project_pages_name_their_repository():
    t = ticket("Values table wrong", "See https://prismhq.github.io/prism-helm/#values")
    assert kinds(t, PRISM)["prism-helm"] == {"docs_link"}


def test_twin_the_owner_pages_name_none():
    assert kinds(ticket("Values table wrong", "See https://prismhq.github.io/"), PRISM) == {}


def test_a_link_written_as_a_pointer_is_a_citation():
    t = ticket(
        "Fail fast",
        "Once [this issue](https://github.com/PrismHQ/marvel/issues/90) is done, check flowctl.",
    )
    items = [i for i in gather_evidence(t, PRISM).items() if i.repo == "PrismHQ/marvel"]
    assert [(i.kind, i.weight) for i in items] == [("url_comment", 0.15)]


def test_twin_a_link_to_the_failing_issue_is_a_reference():
    t = ticket("Fail fast", "Broken since https://github.com/PrismHQ/marvel/issues/90")
    assert kinds(t, PRISM)["marvel"] == {"url_ref"}


def test_a_name_given_to_an_option_is_no_mention():
    t = ticket("Upgrade fails", "```\nhelm upgrade w chart --namespace marvel\n```")
    assert "marvel" not in kinds(t, PRISM)


def test_twin_the_name_in_a_sentence_is_one():
    assert "prose" in kinds(ticket("Upgrade fails", "marvel drops the results"), PRISM)["marvel"]


def test_a_multi_word_name_written_as_words_is_no_mention():
    guess = detect_repo(ticket("Prism Cloud rejects the token"), PRISM)
    assert guess.decision == "ask" and "prism-cloud" not in str(
        kinds(ticket("Prism Cloud rejects the token"), PRISM)
    )


def test_twin_the_name_written_as_a_name_is_one():
    guess = detect_repo(ticket("prism-cloud login rejects the token"), PRISM)
    assert (guess.decision, guess.repo) == ("proceed", "PrismHQ/prism-cloud")


def test_an_image_built_from_places_the_repository_that_publishes_it():
    t = ticket(
        "Container runs Python 2", "```\nFROM acme/web-nginx:python3.6\nRUN pip install x\n```"
    )
    guess = detect_repo(t, IMAGES)
    assert (guess.decision, guess.repo, guess.signal) == (
        "proceed",
        "acme/web-nginx-docker",
        "vocabulary",
    )


def test_twin_an_image_named_after_a_repository_without_its_docker_affix():
    t = ticket("Tag out of date", "`docker run -it acme/web:python3.8 python --version`")
    assert (detect_repo(t, IMAGES).decision, detect_repo(t, IMAGES).repo) == (
        "proceed",
        "acme/web-docker",
    )


def test_twin_an_image_of_no_catalog_repository_places_nothing():
    t = ticket("Container runs Python 2", "```\nFROM python:3.8-slim\nFROM library/web:1\n```")
    assert detect_repo(t, IMAGES).decision == "ask"


PROVIDER = catalog(
    "PrismHQ",
    {
        "prism": {"imports": ["prism"]},
        "terraform-provider-prism": {"symbols": ["prism_deployment", "prism_flow"]},
    },
)


def test_a_provider_resource_in_a_configuration_places_the_provider():
    t = ticket(
        "Prism deployment parameter change error",
        '```tf\nresource "prism_flow" "f" {}\nresource "prism_deployment" "d" {\n'
        "  flow_id = prism_flow.f.id\n}\n```",
    )
    guess = detect_repo(t, PROVIDER)
    assert (guess.decision, guess.repo) == ("proceed", "PrismHQ/terraform-provider-prism")


def test_twin_the_resource_word_in_a_sentence_is_no_configuration():
    t = ticket("Prism deployment parameter change error", "the prism_deployment page is unclear")
    assert detect_repo(t, PROVIDER).decision == "ask"


HASHI = catalog("hashi", {"terraform": {}, "terraform-provider-cloud": {}, "hcl": {}})


def test_a_configuration_using_a_provider_places_the_provider_however_many_types_it_has():
    t = ticket(
        "Inconsistent result after apply",
        'Terraform v1.5\n\n```hcl\nresource "cloud_bucket" "b" {}\n```\n'
        'provider "registry.terraform.io/hashi/cloud" produced an unexpected new value',
    )
    guess = detect_repo(t, HASHI)
    assert (guess.decision, guess.repo) == ("proceed", "hashi/terraform-provider-cloud")
    assert "hcl" not in kinds(t, HASHI)  # the fence's language is a syntax, no mention


def test_twin_a_provider_the_catalog_does_not_have_places_nothing():
    t = ticket("Inconsistent result after apply", '```\nresource "other_bucket" "b" {}\n```')
    assert kinds(t, HASHI) == {}


def test_twin_another_owner_pages_name_nothing_of_the_org():
    assert (
        kinds(ticket("Values table wrong", "See https://someone.github.io/prism-helm/"), PRISM)
        == {}
    )
