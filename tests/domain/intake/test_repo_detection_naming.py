"""Issue 33, fourth round: whether the ticket *names* the repository it is placed in, and what
context may not contest. Each rule beside its adversarial twin, on small catalogs written here.

- a leader the ticket never names (only vocabulary it defines: public names, hook ids) needs
  ``VOCABULARY_MIN_TERMS`` distinct terms only it defines to proceed without a model;
- the org's product word written down does not contest a leader with strong evidence, but
  still contests a passing mention;
- an umbrella beside its sibling does not contest the sibling's image, chart or title;
- a host named after a package (``quokka.io``) is no use of the package.
"""

from __future__ import annotations

from tests.domain.intake.small_catalogs import catalog
from veranda_dagster.domain.core.models import Ticket
from veranda_dagster.domain.intake.catalog import Catalog
from veranda_dagster.domain.intake.repo_detection import (
    NAMING_KINDS,
    VOCABULARY_ONLY_KINDS,
    detect_repo,
    names_repo,
)
from veranda_dagster.domain.intake.repo_evidence import gather_evidence


def ticket(title: str, description: str = "") -> Ticket:
    return Ticket(id="ENG-33", source="linear", title=title, description=description)


def decided(t: Ticket, cat: Catalog, *, model: bool = False) -> tuple[str, str | None]:
    guess = detect_repo(t, cat, model=model)
    return guess.decision, guess.repo


TOOLS = catalog(
    "acme",
    {
        "widgets": {"symbols": ["make_widget", "WidgetPool"], "hooks": ["trim-space", "fix-eol"]},
        "gears": {"symbols": ["GearBox"], "hooks": ["sort-keys"]},
        "lint-hooks": {"hooks": ["sort-keys"]},
    },
)
"""Repositories the tickets below never name: only their public names and hook ids appear."""

ONE_TERM = ticket(
    "Pool leaks connections",
    "`make_widget()` leaks. Calling `make_widget()` again leaks more; "
    "`make_widget()` never closes.",
)
TWO_TERMS = ticket(
    "Pool leaks connections",
    "`make_widget()` leaks. `WidgetPool()` never closes what `make_widget()` opened.",
)


def test_naming_and_vocabulary_kinds_are_disjoint():
    assert not NAMING_KINDS & VOCABULARY_ONLY_KINDS


def test_a_leader_named_by_nothing_but_one_of_its_public_names_asks():
    # three uses of one name weigh 0.45 (enough strong evidence) but are one piece of it
    guess = detect_repo(ONE_TERM, TOOLS)
    assert guess.decision == "ask"
    assert guess.candidates == ["acme/widgets"]
    assert guess.question is not None and "never names acme/widgets" in guess.question
    assert "`make_widget`" in guess.question


def test_twin_two_public_names_only_it_defines_proceed():
    assert decided(TWO_TERMS, TOOLS) == ("proceed", "acme/widgets")


def test_twin_with_a_model_one_public_name_proceeds_at_medium_for_the_cheap_pass():
    guess = detect_repo(ONE_TERM, TOOLS, model=True)
    assert (guess.decision, guess.repo, guess.confidence) == ("proceed", "acme/widgets", "medium")


def test_twin_the_same_ticket_naming_the_repository_proceeds():
    named = ticket(ONE_TERM.title, ONE_TERM.description + "\n```\npip install widgets\n```")
    assert names_repo(gather_evidence(named, TOOLS), "acme/widgets")
    assert decided(named, TOOLS) == ("proceed", "acme/widgets")


def test_a_lone_hook_id_asks():
    t = ticket("Hook rewrites files", "```yaml\nhooks:\n  - id: trim-space\n```")
    assert not names_repo(gather_evidence(t, TOOLS), "acme/widgets")
    assert decided(t, TOOLS) == ("ask", "acme/widgets")


def test_twin_two_hook_ids_of_one_repository_proceed():
    t = ticket("Hooks rewrite files", "```yaml\nhooks:\n  - id: trim-space\n  - id: fix-eol\n```")
    assert decided(t, TOOLS) == ("proceed", "acme/widgets")


def test_twin_a_hook_id_two_repositories_define_is_no_term_of_either():
    t = ticket(
        "Hooks rewrite files",
        "```yaml\nhooks:\n  - id: sort-keys\n```\n`GearBox()` fails; `GearBox()` retried; "
        "`GearBox()` again.",
    )
    # gears leads lint-hooks 0.9 to 0.45, but sort-keys is both's: one term of its own
    assert decided(t, TOOLS) == ("ask", None)
    assert decided(t, TOOLS, model=True) == ("proceed", "acme/gears")


ORBIT = catalog("orbit", {"orbit": {}, "comet": {}})
"""An org named like its namesake repository (``celery/celery``)."""


def test_the_product_word_does_not_contest_a_leader_with_strong_evidence():
    t = ticket(
        "Orbit: comet drops messages in Orbit",
        "Using Orbit beat with the Orbit scheduler and Orbit workers.",
    )
    # orbit's name alone, discounted as the family word, was 0.31 against comet's title 0.6
    assert decided(t, ORBIT) == ("proceed", "orbit/comet")


def test_twin_the_product_word_still_contests_a_passing_mention():
    t = ticket(
        "Orbit drops messages in Orbit",
        "Using Orbit beat with the comet transport and Orbit workers.",
    )
    assert decided(t, ORBIT)[0] == "ask"


IMAGES = catalog(
    "acme",
    {"quokka": {"imports": ["quokka"]}, "quokka-server-docker": {}, "lynx": {}},
)
"""A framework, the image repository built around it (its sibling), and an unrelated library."""


def test_the_umbrella_beside_its_sibling_does_not_contest_the_sibling_image():
    t = ticket(
        "Image ships an old Quokka",
        "`docker run acme/quokka-server:py3.8` prints the Quokka version, which is old.",
    )
    assert decided(t, IMAGES) == ("proceed", "acme/quokka-server-docker")


def test_twin_another_repository_with_as_much_evidence_still_contests_the_image():
    t = ticket(
        "Image ships an old version",
        "`docker run acme/quokka-server:py3.8` has lynx 0.29, which is old.",
    )
    assert decided(t, IMAGES)[0] == "ask"


HOSTS = catalog("acme", {"quokka": {"imports": ["quokka"]}})


def _kinds(t: Ticket) -> set[str]:
    return {i.kind for i in gather_evidence(t, HOSTS).items() if i.repo == "acme/quokka"}


def test_a_host_named_after_a_package_is_no_use_of_it():
    t = ticket("Uploads time out", "We use the hosted Quokka (quokka.io) since May.")
    assert "usage" not in _kinds(t)


def test_twin_the_package_attribute_called_is_a_use():
    t = ticket("Uploads time out", "`quokka.io(path)` opens a stream that never closes.")
    assert "usage" in _kinds(t)


SDKS = catalog("acme", {"quokka": {"imports": ["quokka"]}, "quokka-js": {}})
"""A product's package and its JavaScript SDK, whose name contains it (its sibling)."""
SDK_TICKET = (
    "Spans dropped after enabling Quokka with OTEL",
    "Form acme/quokka-js#12. We initialise Quokka with `quokka.init(dsn)` and the "
    "Quokka dashboard shows no spans.",
)


def test_the_umbrella_beside_its_pointed_at_sibling_contests_no_lead():
    # quokka: title, prose and a use, all context beside its sibling (0.35 against 0.6)
    assert decided(ticket(*SDK_TICKET), SDKS) == ("proceed", "acme/quokka-js")


def test_twin_the_umbrella_where_the_failure_is_still_contests():
    frame = '\n  File "/venv/lib/python3.12/site-packages/quokka/spans.py", line 9, in flush'
    t = ticket(SDK_TICKET[0], SDK_TICKET[1] + "\nTraceback (most recent call last):" + frame)
    assert decided(t, SDKS)[0] == "ask"


def test_twin_a_module_path_through_a_host_like_name_is_a_use():
    t = ticket("Uploads time out", "The logger `quokka.io.streams` warns, then `quokka.app` stops.")
    assert "usage" in _kinds(t)
