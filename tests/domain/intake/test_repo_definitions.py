"""The public-definitions index (``repo_definitions``): read breadth first from a package's
modules within its bounds, stored bounded in the catalog, and used by detection only for a
ticket that names no repository, only for a name written as code that one repository defines.
The forge fakes (GitHub and GitLab) are exercised in ``test_repo_vocabulary``."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from tests.domain.intake.repo_tree import Tree
from veranda_dagster.domain.core.bounds import (
    MAX_DEFINITION_FILE_BYTES,
    MAX_DEFINITION_FILE_READS,
    MAX_DEFINITION_TERMS,
)
from veranda_dagster.domain.core.models import Ticket
from veranda_dagster.domain.intake.catalog import Catalog, CatalogRepo, RepoVocabulary
from veranda_dagster.domain.intake.repo_definitions import read_definitions
from veranda_dagster.domain.intake.repo_detection import detect_repo


def _read(tree: Tree, packages: list[str]) -> tuple[list[str], list[str]]:
    notes: list[str] = []
    return read_definitions("acme/cache", tree.read, tree.listdir, packages, notes), notes


def test_public_top_level_names_are_read_breadth_first_skipping_private_and_tests():
    tree = Tree(
        {
            "pkg/__init__.py": "def from_init(): ...\n",
            "pkg/sub/deep.py": "class DeepStrategy:\n    pass\n",
            "pkg/api.py": "class AlphaClient:\n    def method_name(self): ...\n"
            "def run(): ...\ndef _hidden(): ...\nasync def fetch_many(): ...\n",
            "pkg/_internal/core.py": "class InternalThing: ...\n",
            "pkg/tests/test_api.py": "def test_alpha(): ...\n",
            "pkg/vendored/six.py": "def with_metaclass(): ...\n",
        }
    )
    names, notes = _read(tree, ["pkg"])
    # a folder's modules before the folders beneath it; methods, short and private names not
    assert names == ["AlphaClient", "fetch_many", "DeepStrategy"]
    assert notes == []


def test_reads_module_size_and_names_are_bounded():
    many = {f"pkg/m{i:03}.py": f"def name_{i:03}(): ...\n" for i in range(40)}
    tree = Tree(many)
    names, notes = _read(tree, ["pkg"])
    assert tree.reads == MAX_DEFINITION_FILE_READS  # one listing and the first modules
    assert names == [f"name_{i:03}" for i in range(MAX_DEFINITION_FILE_READS - 1)]
    assert notes == [
        f"acme/cache: stopped reading definitions after {MAX_DEFINITION_FILE_READS} files"
    ]
    huge = "def too_big(): ...\n" + "#" * MAX_DEFINITION_FILE_BYTES
    assert _read(Tree({"pkg/a.py": huge, "pkg/b.py": "def fits_here(): ...\n"}), ["pkg"])[0] == [
        "fits_here"
    ]
    crowded = "".join(f"def name_{i:04}(): ...\n" for i in range(MAX_DEFINITION_TERMS + 50))
    assert len(_read(Tree({"pkg/a.py": crowded}), ["pkg"])[0]) == MAX_DEFINITION_TERMS


def test_the_catalog_bounds_definitions_and_refuses_non_names():
    RepoVocabulary(definitions=[f"name_{i}" for i in range(MAX_DEFINITION_TERMS)])
    with pytest.raises(ValidationError):
        RepoVocabulary(definitions=[f"name_{i}" for i in range(MAX_DEFINITION_TERMS + 1)])
    with pytest.raises(ValidationError):
        RepoVocabulary(definitions=["rm -rf /"])
    assert not RepoVocabulary(definitions=["make_key"]).is_empty()


def _catalog(other_defines: str = "render_page") -> Catalog:
    """acme/cache defines two names only in its modules (not exported: no ``symbols``);
    acme/web defines ``other_defines``."""
    return Catalog(
        org="acme",
        repositories=[
            CatalogRepo(
                full_name="acme/cache",
                vocabulary=RepoVocabulary(
                    imports=["dogpile"],
                    definitions=["RegionInvalidationStrategy", "get_or_create_multi"],
                ),
            ),
            CatalogRepo(
                full_name="acme/web",
                vocabulary=RepoVocabulary(imports=["webapp"], definitions=[other_defines]),
            ),
        ],
    )


def _ticket(description: str) -> Ticket:
    return Ticket(
        id="E", source="linear", title="Invalidation ignores the key", description=description
    )


AS_CODE = (
    "I subclass `RegionInvalidationStrategy`, but `get_or_create_multi()` never passes the key."
)


def test_two_definitions_only_one_repository_has_written_as_code_place_an_unnamed_ticket():
    guess = detect_repo(_ticket(AS_CODE), _catalog())
    assert (guess.decision, guess.repo) == ("proceed", "acme/cache"), guess
    assert {i.kind for i in guess.evidence} == {"api"}


def test_definitions_in_prose_shared_or_beside_a_named_repository_do_not_place_it():
    """The adversarial twins: the same names as prose; one of them defined by two
    repositories (one term of its own is no proof); and a ticket that names a repository,
    where definitions are not read at all."""
    prose = AS_CODE.replace("`", "").replace("()", "")
    assert detect_repo(_ticket(prose), _catalog()).decision == "ask"
    shared = detect_repo(_ticket(AS_CODE), _catalog(other_defines="get_or_create_multi"))
    assert shared.decision == "ask"
    named = detect_repo(_ticket(AS_CODE + "\nIt shows in the acme/web dashboard."), _catalog())
    assert not [i for i in named.evidence if i.repo == "acme/cache"], named.evidence


def test_an_unnamed_ticket_builds_the_vocabulary_index_once(monkeypatch: pytest.MonkeyPatch):
    """Usage and definitions read the same index: the second reading must not build it again,
    nor leave its ``definitions`` kind in the index the usage reading was given."""
    from veranda_dagster.domain.intake import repo_evidence, repo_usage

    built: list[dict[str, dict[str, list[str]]]] = []
    build = repo_usage.vocabulary_index

    def counting(catalog: Catalog) -> dict[str, dict[str, list[str]]]:
        built.append(build(catalog))
        return built[-1]

    monkeypatch.setattr(repo_evidence, "vocabulary_index", counting)
    monkeypatch.setattr(repo_usage, "vocabulary_index", counting)
    guess = detect_repo(_ticket(AS_CODE), _catalog())
    assert guess.repo == "acme/cache"  # the definitions were read
    assert len(built) == 1
    assert "definitions" not in built[0]
