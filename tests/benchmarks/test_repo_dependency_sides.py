"""``benchmarks/repo_dependency_sides.py``: a dependent/dependency pair is found among the
leaders, each side classed by what the ticket does with it, and the filed side counted."""

from __future__ import annotations

from tests.benchmarks.scripts import load_script
from tests.domain.intake.small_catalogs import catalog

sides = load_script("repo_dependency_sides")

CATALOG = catalog(
    "acme",
    {
        "widget": {"imports": ["widget"]},
        "gadget": {"imports": ["gadget"], "ships": ["widget"]},
        "other": {"imports": ["other"]},
    },
)


def _case(n: int, body: str, filed: str, label: str = "proceed") -> dict[str, str]:
    return {
        "id": f"acme/x#{n}",
        "org": "acme",
        "title": "crash",
        "body": body,
        "filed_in": f"acme/{filed}",
        "label": label,
    }


def test_the_used_dependent_and_the_named_dependency_are_counted_on_the_filed_side() -> None:
    cases = [_case(1, "```\nimport gadget\n```\nwith Widget 1.2", "gadget")]
    table = sides.sides(cases, {"acme": CATALOG})
    assert table == {("proceed", "used", "named", "dependent"): 1}


def test_the_twin_a_named_dependent_beside_a_used_dependency() -> None:
    cases = [_case(2, "```\nimport widget\n```\nwith Gadget 1.2", "widget", "ask")]
    table = sides.sides(cases, {"acme": CATALOG})
    assert table == {("ask", "named", "used", "dependency"): 1}


def test_unrelated_repositories_are_no_pair() -> None:
    cases = [_case(3, "```\nimport other\nimport widget\n```", "other")]
    assert sides.sides(cases, {"acme": CATALOG}) == {}
