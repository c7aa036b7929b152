"""Issue 33's causes of wrong proceeds and unneeded asks, each beside its adversarial twin, on a
catalog with vocabulary. Rows: tests/fixtures/repo_detection/causes.yaml."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from veranda_dagster.domain.core.models import Ticket
from veranda_dagster.domain.intake.catalog import (
    Catalog,
    CatalogRepo,
    RepoVocabulary,
    load_catalog,
)
from veranda_dagster.domain.intake.repo_detection import detect_repo
from veranda_dagster.domain.intake.repo_evidence import template_spans
from veranda_dagster.domain.intake.repo_usage import MAX_MODULE_DEPTH, gather_usage, most_specific

FIX = Path(__file__).resolve().parents[2] / "fixtures/repo_detection"
CATALOG = load_catalog(FIX / "catalog_vocabulary.json")
ROWS = yaml.safe_load((FIX / "causes.yaml").read_text())


def ticket(row: dict) -> Ticket:
    return Ticket(
        id="ENG-33", source="linear", title=row["title"], description=row.get("description", "")
    )


@pytest.mark.parametrize("row", ROWS, ids=[r["name"] for r in ROWS])
def test_cause(row):
    guess = detect_repo(ticket(row), CATALOG)
    for key, want in row["expect"].items():
        have = getattr(guess, key)
        assert (set(have) == set(want)) if key == "candidates" else have == want, (key, guess)
    if "no_notes_with" in row:
        assert not [n for n in guess.notes if row["no_notes_with"] in n], guess.notes
    if guess.decision == "ask":
        assert guess.question and all(c in guess.question for c in guess.candidates)


def test_every_cause_has_a_twin():
    names = [r["name"] for r in ROWS]
    twins = [n for n in names if n.startswith("twin_")]
    assert len(twins) >= 9 and len(names) - len(twins) >= 10


def test_a_question_names_the_candidates_and_the_deciding_evidence():
    guess = detect_repo(
        Ticket(
            id="E",
            source="linear",
            title="Reconnect drops keys",
            description="We use gadget and wire; keys vanish on reconnect.",
        ),
        CATALOG,
    )
    assert guess.decision == "ask"
    assert "acme/gadget" in (guess.question or "") and "acme/wire" in (guess.question or "")
    assert "its name in the description (0.35)" in (guess.question or "")


def test_with_a_model_a_leader_on_mentions_proceeds_for_the_cheap_pass_to_confirm():
    single = Ticket(
        id="E", source="linear", title="Keys vanish", description="gadget 2.1 loses keys"
    )
    assert detect_repo(single, CATALOG).decision == "ask"  # a version line alone is too little
    with_model = detect_repo(single, CATALOG, model=True)
    assert (with_model.decision, with_model.repo, with_model.confidence) == (
        "proceed",
        "acme/gadget",
        "medium",
    )


def test_one_uncontested_mention_proceeds_and_a_version_line_alone_asks():
    """``UNCONTESTED_MIN``: one full mention and nothing else in the ticket names a repository."""
    once = Ticket(id="E", source="linear", title="Keys vanish", description="gadget loses keys")
    guess = detect_repo(once, CATALOG)
    assert (guess.decision, guess.repo, guess.confidence) == ("proceed", "acme/gadget", "medium")
    pinned = Ticket(id="E", source="linear", title="Keys vanish", description="gadget 2.1.0 here")
    assert detect_repo(pinned, CATALOG).decision == "ask"


def test_a_title_alone_beside_another_repository_asks_naming_both():
    """``TITLE_ALONE_KINDS``: the title may name a tool the filed repository ships; with another
    repository in the ticket, the title alone does not choose without a model."""
    contested = Ticket(
        id="E", source="linear", title="gadget loses keys", description="seen with wire 1.2.0"
    )
    guess = detect_repo(contested, CATALOG)
    assert guess.decision == "ask" and set(guess.candidates) == {"acme/gadget", "acme/wire"}
    assert "only strong evidence" in (guess.question or "")
    with_model = detect_repo(contested, CATALOG, model=True)
    assert (with_model.decision, with_model.repo) == ("proceed", "acme/gadget")
    # the twins: the title beside nothing else, or beside a stray path through another
    # repository (below PROCEED_MIN), proceeds
    for description in ("", "the log is in /srv/wire/log.txt"):
        alone = Ticket(id="E", source="linear", title="gadget loses keys", description=description)
        guess = detect_repo(alone, CATALOG)
        assert (guess.decision, guess.repo) == ("proceed", "acme/gadget"), guess.evidence


def _with_shipper(*ships: str) -> Catalog:
    """The causes catalog plus ``acme/images``, whose image bundles ``ships``."""
    images = CatalogRepo(full_name="acme/images", vocabulary=RepoVocabulary(ships=list(ships)))
    return CATALOG.model_copy(update={"repositories": [*CATALOG.repositories, images]})


def test_a_title_naming_a_tool_another_repository_ships_asks_naming_both():
    """``RepoVocabulary.ships``: a title naming ``gadget-cli`` (acme/gadget's command), which
    acme/images bundles, with nothing else in the ticket is the images' as often as the tool's
    (auditwheel in manylinux); without a model it asks, naming both."""
    alone = Ticket(id="E", source="linear", title="gadget loses keys", description="")
    guess = detect_repo(alone, _with_shipper("gadget-cli"))
    assert guess.decision == "ask" and guess.candidates == ["acme/gadget", "acme/images"]
    assert "ships or wraps" in (guess.question or "")
    # a second signal for the shipper (a path through it): it goes there
    backed = alone.model_copy(update={"description": "the log is in /srv/images/build.log"})
    guess = detect_repo(backed, _with_shipper("gadget-cli"))
    assert (guess.decision, guess.repo) == ("proceed", "acme/images"), guess.evidence
    # with a model the title proceeds for the cheap pass to confirm
    assert detect_repo(alone, _with_shipper("gadget-cli"), model=True).repo == "acme/gadget"


def test_a_title_naming_a_tool_no_repository_ships_still_proceeds():
    """The adversarial twin: a shipped list that does not hold the tool (``gadgets`` is not
    ``gadget-cli``), or a title backed by more than the title (its command run), proceeds."""
    alone = Ticket(id="E", source="linear", title="gadget loses keys", description="")
    guess = detect_repo(alone, _with_shipper("gadgets", "wire"))
    assert (guess.decision, guess.repo) == ("proceed", "acme/gadget")
    used = alone.model_copy(update={"description": "`gadget-cli sync` loses keys"})
    guess = detect_repo(used, _with_shipper("gadget-cli"))
    assert (guess.decision, guess.repo) == ("proceed", "acme/gadget"), guess.evidence


def _with_bridge(*ships: str) -> Catalog:
    """The causes catalog plus ``acme/bridge`` (command ``bridge-run``), depending on ``ships``."""
    bridge = CatalogRepo(
        full_name="acme/bridge",
        vocabulary=RepoVocabulary(commands=["bridge-run"], ships=list(ships)),
    )
    return CATALOG.model_copy(update={"repositories": [*CATALOG.repositories, bridge]})


_USES_GADGET_THROUGH_BRIDGE = (
    "```python\nfrom gadget import AsyncGadgetClient\nclient = gadget.AsyncGadgetClient()\n```\n"
    "Then `bridge-run sync` loses keys."
)


def test_a_leader_a_named_dependent_builds_on_asks_naming_both():
    """``_dependents_in_ticket``: acme/bridge depends on acme/gadget (``ships``) and the ticket
    runs bridge's command too; gadget's imports are what bridge's users write, so the clear
    lead on gadget's usage does not choose without a model (tox in a tox plugin's ticket)."""
    ticket = Ticket(
        id="E", source="linear", title="Keys vanish", description=_USES_GADGET_THROUGH_BRIDGE
    )
    guess = detect_repo(ticket, _with_bridge("gadget"))
    assert guess.decision == "ask" and guess.candidates[:2] == ["acme/gadget", "acme/bridge"]
    assert "acme/bridge depends on acme/gadget" in (guess.question or "")
    assert "its command run (0.45)" in (guess.question or "")  # the deciding evidence is shown
    assert detect_repo(ticket, _with_bridge("gadget"), model=True).repo == "acme/gadget"


def test_a_leader_nothing_named_builds_on_still_proceeds():
    """The adversarial twins: bridge depends on something else; depends on gadget but the
    two depend on each other (a pair, not a plugin: flake8 and pyflakes); or a link points at
    gadget itself. Each proceeds to gadget."""
    ticket = Ticket(
        id="E", source="linear", title="Keys vanish", description=_USES_GADGET_THROUGH_BRIDGE
    )
    assert detect_repo(ticket, _with_bridge("wire")).repo == "acme/gadget"
    mutual = _with_bridge("gadget")
    mutual.repositories[[r.full_name for r in mutual.repositories].index("acme/gadget")] = (
        CatalogRepo(
            full_name="acme/gadget",
            vocabulary=RepoVocabulary(
                imports=["gadget"], commands=["gadget-cli"], ships=["bridge"]
            ),
        )
    )
    guess = detect_repo(ticket, mutual)
    assert (guess.decision, guess.repo) == ("proceed", "acme/gadget"), guess.evidence
    linked = ticket.model_copy(
        update={"description": ticket.description + "\nhttps://github.com/acme/gadget/issues/3"}
    )
    guess = detect_repo(linked, _with_bridge("gadget"))
    assert (guess.decision, guess.repo) == ("proceed", "acme/gadget"), guess.evidence


def _with_plugin(*ships: str) -> Catalog:
    """A three-letter tool (``acme/tox``) and its plugin ``acme/tox-uv`` depending on ``ships``:
    a plugin is named after its host however short the host's name (``tox-uv``, ``pytest-x``,
    ``flake8-x``), which is shorter than ``umbrella_of`` reads as an umbrella."""
    return Catalog(
        org="acme",
        repositories=[
            CatalogRepo(
                full_name="acme/tox", vocabulary=RepoVocabulary(imports=["tox"], commands=["tox"])
            ),
            CatalogRepo(
                full_name="acme/tox-uv",
                vocabulary=RepoVocabulary(
                    distributions=["tox-uv"], imports=["tox_uv"], ships=list(ships)
                ),
            ),
            CatalogRepo(full_name="acme/wire", vocabulary=RepoVocabulary(imports=["wire"])),
        ],
    )


_USES_TOX_WITH_PLUGIN = Ticket(
    id="E",
    source="linear",
    title="Env not recreated",
    description=(
        "```python\nfrom tox.config import Config\nsession = tox.session.Session()\n```\n"
        "Then `pip install tox-uv` and the env is not recreated."
    ),
)


def test_a_short_named_host_whose_plugin_is_installed_asks():
    """``_dependents_in_ticket`` covers the plugins it was written for whatever their host's
    name: tox-uv depends on tox and is installed in the ticket, so tox's imports do not choose
    tox (a restriction to dependents ``umbrella_of`` the leader, proposed in round five, would
    drop it: ``umbrella_of`` needs four characters)."""
    guess = detect_repo(_USES_TOX_WITH_PLUGIN, _with_plugin("tox"))
    assert guess.decision == "ask" and guess.candidates[:2] == ["acme/tox", "acme/tox-uv"]
    assert "acme/tox-uv depends on acme/tox" in (guess.question or "")


def test_a_short_named_host_beside_an_unrelated_install_proceeds():
    """The adversarial twin: the same ticket when tox-uv does not depend on tox proceeds to
    tox (an install of something else is no plugin's ticket)."""
    guess = detect_repo(_USES_TOX_WITH_PLUGIN, _with_plugin("wire"))
    assert (guess.decision, guess.repo) == ("proceed", "acme/tox"), guess.evidence


def test_what_the_leader_depends_on_named_in_passing_is_context_not_a_rival():
    """``_dependencies_in_passing``: bridge's command is run and gadget, which bridge depends
    on, is only mentioned ("autoflake uses pyflakes"): bridge proceeds, with a note."""
    ticket = Ticket(
        id="E",
        source="linear",
        title="Sync loses keys",
        description="`bridge-run sync` loses keys; it uses gadget underneath.",
    )
    guess = detect_repo(ticket, _with_bridge("gadget"))
    assert (guess.decision, guess.repo) == ("proceed", "acme/bridge"), guess.evidence
    assert any("what acme/bridge depends on" in n for n in guess.notes)


def test_a_mention_of_what_the_leader_does_not_depend_on_or_uses_stays_a_rival():
    """The adversarial twins: the same mention of a repository bridge does not depend on, or of
    its dependency used (imported) rather than mentioned, still asks."""
    ticket = Ticket(
        id="E",
        source="linear",
        title="Sync loses keys",
        description="`bridge-run sync` loses keys; it uses gadget underneath.",
    )
    guess = detect_repo(ticket, _with_bridge("wire"))
    assert guess.decision == "ask" and set(guess.candidates) == {"acme/bridge", "acme/gadget"}
    used = ticket.model_copy(
        update={"description": ticket.description + "\n```\nimport gadget\n```"}
    )
    assert detect_repo(used, _with_bridge("gadget")).decision == "ask"
    # a leader named only in prose beside its dependency is not uncontested: no proceed on
    # the one mention (UNCONTESTED_MIN is for a ticket naming nothing else)
    mentioned = ticket.model_copy(update={"description": "bridge loses keys; gadget is fine."})
    assert detect_repo(mentioned, _with_bridge("gadget")).decision == "ask"
    alone = ticket.model_copy(update={"description": "bridge loses keys."})
    assert detect_repo(alone, _with_bridge("gadget")).repo == "acme/bridge"


def test_a_chart_alone_beside_another_repository_asks_and_alone_proceeds():
    """``ONE_ORG_KINDS``: an image, chart or title alone is evidence proven in one organisation
    each; beside another repository with evidence that could proceed (a version line reaches
    ``PROCEED_MIN``) it asks naming both, and alone it proceeds (the twin)."""
    title = "helm upgrade of the gadget-worker chart fails"
    contested = Ticket(
        id="E", source="linear", title=title, description="The pod crashes; wire 1.2.0 beside it."
    )
    guess = detect_repo(contested, CATALOG)
    assert guess.decision == "ask" and set(guess.candidates) == {"acme/helm-charts", "acme/wire"}
    assert "its Helm chart (0.45)" in (guess.question or "")
    alone = contested.model_copy(update={"description": "The pod crashes."})
    guess = detect_repo(alone, CATALOG)
    assert (guess.decision, guess.repo) == ("proceed", "acme/helm-charts"), guess.evidence
    assert detect_repo(contested, CATALOG, model=True).repo == "acme/helm-charts"


def test_a_key_and_value_line_in_a_code_block_is_not_a_command_run():
    """``repo_usage._KEY_VALUE``: ``Tool: 1.2`` in pasted output or ``tool:`` in a values file
    is a key, not acme/tool's command (``Server type: hosted`` is not ``server``); the twin,
    ``tool sync --all`` on a line of the same block, is its command run."""
    output = Ticket(
        id="E",
        source="linear",
        title="Sync loses keys",
        description="```\nTool: 1.2\ntool:\n  replicas: 2\n```",
    )
    assert "command" not in {i.kind for i in detect_repo(output, CATALOG).evidence}
    run = output.model_copy(update={"description": "```\ntool sync --all\nTool: 1.2\n```"})
    evidence = detect_repo(run, CATALOG).evidence
    assert [(i.repo, i.kind) for i in evidence if i.kind == "command"] == [("acme/tool", "command")]


def test_template_spans_end_where_the_reporter_starts_writing():
    text = "- [x] I read the\n  contribution guide\nMy own words\n<!-- hint -->\nmore"
    spans = template_spans(text)
    blanked = "".join(" " if any(a <= i < b for a, b in spans) else c for i, c in enumerate(text))
    assert "My own words" in blanked and "more" in blanked
    assert "contribution" not in blanked and "hint" not in blanked


def _with_namesake() -> Catalog:
    """The causes catalog plus ``acme/acme``, the repository named like the org's product."""
    namesake = CatalogRepo(
        full_name="acme/acme", vocabulary=RepoVocabulary(commands=["acme"], imports=["acme"])
    )
    return CATALOG.model_copy(update={"repositories": [*CATALOG.repositories, namesake]})


def test_the_org_product_name_written_down_does_not_contest_one_mention():
    """``Evidence.family_word``: "we run Acme" is said in every ticket of the org, whichever
    repository it is for; beside it one full mention of acme/gadget is uncontested and
    proceeds, as it does alone (loki named beside the word "grafana", issue 33 round two)."""
    text = "We run Acme in production; gadget drops keys after a failover."
    guess = detect_repo(
        Ticket(id="E", source="linear", title="Keys vanish", description=text), _with_namesake()
    )
    assert (guess.decision, guess.repo) == ("proceed", "acme/gadget"), guess.evidence


def test_the_org_product_used_still_contests_one_mention():
    """The twin: the product's command run (``acme serve``) is a use, not its word; beside it one
    mention of acme/gadget is contested and asks naming both."""
    text = "We run `acme serve --prod`; gadget drops keys after a failover."
    guess = detect_repo(
        Ticket(id="E", source="linear", title="Keys vanish", description=text), _with_namesake()
    )
    assert guess.decision == "ask" and "acme/gadget" in guess.candidates, guess.evidence
    assert "acme/acme" in guess.candidates


NAMESPACE = Catalog(
    org="acme",
    repositories=[
        CatalogRepo(
            full_name="acme/poetry",
            vocabulary=RepoVocabulary(imports=["poetry.console", "poetry.utils"]),
        ),
        CatalogRepo(
            full_name="acme/poetry-core", vocabulary=RepoVocabulary(imports=["poetry.core"])
        ),
    ],
)
"""Two repositories sharing the namespace package ``poetry``: what each defines is a path."""
SITE = 'File "/venv/lib/python3.12/site-packages/poetry/{}.py", line 3, in f'


@pytest.mark.parametrize(
    ("text", "kind", "repo"),
    [
        ("from poetry.core.masonry.builders import WheelBuilder", "import", "acme/poetry-core"),
        ("import poetry.core.version", "import", "acme/poetry-core"),
        (SITE.format("core/masonry/api"), "trace", "acme/poetry-core"),
        ("`poetry.core.constraints(...)` fails", "usage", "acme/poetry-core"),
        # twins: the sibling's own member, and the bare namespace (the repository named so)
        ("from poetry.console.application import main", "import", "acme/poetry"),
        ("import poetry", "import", "acme/poetry"),
        (SITE.format("console/application"), "trace", "acme/poetry"),
        ("`poetry.utils(...)` fails", "usage", "acme/poetry"),
    ],
)
def test_an_import_or_frame_names_the_most_specific_definer(text, kind, repo):
    """An umbrella beside its sibling by module path: ``poetry.core`` is poetry-core's."""
    found: list[tuple[str, str]] = []
    gather_usage(text, NAMESPACE, lambda r, k, _excerpt, _term: found.append((r, k)))
    assert {r for r, k in found if k == kind} == {repo}


def test_a_module_path_is_looked_up_at_most_the_bound_deep():
    """``MAX_MODULE_DEPTH``: the most specific definer is sought among a path's first parts
    only; a catalog module deeper than the bound is never matched, the one at the bound is."""
    at_bound = ".".join(f"p{i}" for i in range(MAX_MODULE_DEPTH))
    deeper = f"{at_bound}.deep"
    imports = {at_bound: ["acme/shallow"], deeper: ["acme/deep"]}
    assert most_specific(f"{deeper}.leaf", imports) == at_bound
    assert most_specific(f"{deeper}.leaf", {deeper: ["acme/deep"]}) == ""
