"""What kind of file a path is, and how much that discounts its evidence in the pack's ranking.

Non-test source outranks tests, docs, vendored, generated and data files at equal evidence: the
fix goes to the source a person wrote. A source file in another language than the tree's main
one is discounted too (a Rust core under a Python package, a C# module utility among Python
modules): the report is about the main language's code far more often. Kept apart from the
ranking because the full-text index uses the same judgement to decide what it holds.
"""

from __future__ import annotations

import re

from veranda_dagster.domain.context.source_language import language_of

TEST_FACTOR = 0.35
DOCS_FACTOR = 0.3
VENDORED_FACTOR = 0.2
DATA_FACTOR = 0.3
"""Config, CI and data files: worth a window when nothing else matches, rarely the fix."""
GENERATED_FACTOR = 0.2
"""Database migrations, protobuf stubs, UI stories, snapshots: written by a tool, their words
echo the models they were generated from, and a fix goes to the source, not to them."""
TOOLING_FACTOR = 0.4
"""The project's own tooling at the top of the tree (release, CI, issue-template and
benchmark scripts, ``setup.py``, ``noxfile.py``): it names the package and its versions in
every other line, so an interpreter banner or a version string ranks it first, but a bug report
about the library's behaviour is fixed in the library."""
OTHER_LANGUAGE_FACTOR = 0.6
"""A source file in another language than the tree's main one (``source_language.py``)."""

_TEST_PATH = re.compile(
    r"(^|/)(tests?|__tests__|spec|specs|testing|testdata|fixtures)/|(^|/)test_[^/]*$"
    r"|_test\.\w+$|\.(test|spec)\.\w+$|(^|/)conftest\.py$"
)
_VENDORED_PATH = re.compile(
    r"(^|/)(vendor|vendored|_vendor|third_party|thirdparty|external|externals|node_modules|dist"
    r"|build|site-packages)/|\.min\.(js|css)$|(^|/)(package-lock\.json|yarn\.lock|pnpm-lock\.yaml"
    r"|poetry\.lock|Cargo\.lock|go\.sum|uv\.lock)$"
)
_GENERATED_PATH = re.compile(
    r"(^|/)(migrations|_migrations|alembic)/|_pb2(_grpc)?\.pyi?$|\.stories\.\w+$"
    r"|(^|/)__snapshots__/|\.snap$|\.generated\.\w+$"
)
_TOOLING_PATH = re.compile(
    r"^(scripts?|devscripts|dev|tools|hacking|packaging|extra|ci|\.ci|benchmarks?|bench"
    r"|asv_bench)/|^(setup|noxfile|tasks|fabfile|release|make)\.py$"
)
"""Top-level folders and files only: ``qiskit/circuit/tools/`` is library code."""
_DATA_PATH = re.compile(
    r"\.(toml|ya?ml|json|ini|cfg|in|lock|svg|png|jpe?g|gif|ico|csv|xml|html?|css|txt)$"
    r"|(^|/)(\.github|\.gitlab|\.circleci)/",
    re.IGNORECASE,
)
_DOCS_PATH = re.compile(
    r"(^|/)(docs?|documentation|examples?|changelog\.d|news)/|\.(md|rst|txt|adoc)$"
    r"|(^|/)(CHANGELOG|CHANGES|HISTORY|NEWS|AUTHORS)[^/]*$",
    re.IGNORECASE,
)


def path_factor(path: str) -> float:
    """Non-test source outranks tests, docs and vendored code at equal evidence."""
    if _VENDORED_PATH.search(path):
        return VENDORED_FACTOR
    if _GENERATED_PATH.search(path):
        return GENERATED_FACTOR
    if _TEST_PATH.search(path):
        return TEST_FACTOR
    if _DOCS_PATH.search(path):
        return DOCS_FACTOR
    if _DATA_PATH.search(path):
        return DATA_FACTOR
    return 1.0


def tooling_factor(path: str) -> float:
    """``TOOLING_FACTOR`` for the project's own tooling at the top of the tree, 1.0 otherwise.
    Apart from ``path_factor`` because the full-text index keeps these files: they are source
    in the tree's language, and its term rarities are measured over them too."""
    return TOOLING_FACTOR if _TOOLING_PATH.search(path) else 1.0


def language_factor(path: str, main_language: str | None) -> float:
    """``OTHER_LANGUAGE_FACTOR`` for a source file in another language than ``main_language``;
    1.0 for the main language, for non-source files and when the main language is unknown."""
    language = language_of(path)
    if main_language is None or language is None or language == main_language:
        return 1.0
    return OTHER_LANGUAGE_FACTOR
