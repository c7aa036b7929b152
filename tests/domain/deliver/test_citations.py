"""Citations scraped from a draft and resolved against the default branch of a real repository."""

import pytest

from tests.fixtures.context.gitrepo import commit, git, make_repo, numbered
from veranda_dagster.domain.core.models import Citation
from veranda_dagster.domain.deliver.citations import (
    UNRESOLVED_MARK,
    annotate,
    count_lines,
    git_file_lines,
    resolve,
    scrape_references,
)


@pytest.fixture
def repo(tmp_path):
    """``main`` has a 10-line app.py; a work branch grows it to 50 lines and adds new.py, so a
    reference that is real on the branch but not on the default branch must be flagged."""
    repo = make_repo(
        tmp_path / "repo",
        {"src/app.py": numbered(10), "README.md": "hello\nworld"},
    )
    git(repo, "checkout", "-q", "-b", "work")
    commit(repo, {"src/app.py": numbered(50), "src/new.py": numbered(5)})
    return repo


def _citations(repo):
    sha = git(repo, "rev-parse", "main")
    return [Citation(id="R1", path="src/app.py", start=1, end=10, sha=sha)]


def test_scrapes_every_reference_form():
    text = (
        "Per [R3] and [R12], see src/app.py:12, src/a/b.py:L10-L20, pkg/x.go#L5-L9, "
        "./web/App.tsx:4-6 and https://github.com/acme/api/blob/abc123/src/y.py#L3-L4."
    )
    refs = [(r.raw, r.kind, r.id, r.path, r.start, r.end) for r in scrape_references(text)]
    assert refs == [
        ("[R3]", "id", "R3", None, None, None),
        ("[R12]", "id", "R12", None, None, None),
        ("src/app.py:12", "path", None, "src/app.py", 12, 12),
        ("src/a/b.py:L10-L20", "path", None, "src/a/b.py", 10, 20),
        ("pkg/x.go#L5-L9", "path", None, "pkg/x.go", 5, 9),
        ("./web/App.tsx:4-6", "path", None, "web/App.tsx", 4, 6),
        (
            "https://github.com/acme/api/blob/abc123/src/y.py#L3-L4",
            "path",
            None,
            "src/y.py",
            3,
            4,
        ),
    ]


def test_urls_hosts_and_times_are_not_references():
    text = "Served on http://localhost:8080/app.py:3, 127.0.0.1:80, at 12:30 or example.com:443"
    assert [r.raw for r in scrape_references(text)] == []


def test_real_fabricated_and_past_the_end_references_on_the_default_branch(repo):
    draft = (
        "The bug is in src/app.py:3-5 [R1]. The fix touches src/app.py#L10 and README.md:2.\n"
        "Invented: src/ghost.py:7, a line past the end src/app.py:40, src/app.py#L11, "
        "a branch-only file src/new.py:1 and a made-up id [R9]."
    )
    report = resolve(draft, _citations(repo), git_file_lines(repo, "main"))
    assert report.resolved == ["src/app.py:3-5", "[R1]", "src/app.py#L10", "README.md:2"]
    assert report.flagged == [
        "src/ghost.py:7",
        "src/app.py:40",
        "src/app.py#L11",
        "src/new.py:1",
        "[R9]",
    ]
    assert "does not exist" in report.reasons["src/ghost.py:7"]
    assert "10 lines" in report.reasons["src/app.py:40"]
    assert "not in the retrieval pack" in report.reasons["[R9]"]


def test_the_same_draft_resolves_differently_on_the_branch(repo):
    report = resolve("src/app.py:40 and src/new.py:1", [], git_file_lines(repo, "work"))
    assert report.flagged == []


def test_inverted_and_zero_ranges_are_flagged(repo):
    report = resolve("src/app.py:5-3 and src/app.py:0", [], git_file_lines(repo, "main"))
    assert report.flagged == ["src/app.py:5-3", "src/app.py:0"]


def test_annotate_marks_only_flagged_references_and_is_idempotent(repo):
    draft = "Real src/app.py:3, fake src/app.py:99 and src/app.py:999, id [R9], ok [R1]."
    report = resolve(draft, _citations(repo), git_file_lines(repo, "main"))
    marked = annotate(draft, report)
    assert marked == (
        f"Real src/app.py:3, fake {UNRESOLVED_MARK}src/app.py:99 and "
        f"{UNRESOLVED_MARK}src/app.py:999, id {UNRESOLVED_MARK}[R9], ok [R1]."
    )
    assert annotate(marked, resolve(marked, _citations(repo), git_file_lines(repo, "main"))) == (
        marked
    )


def test_git_file_lines_counts_a_final_line_without_newline(repo):
    lines = git_file_lines(repo, "main")
    assert lines("README.md") == 2
    assert lines("src/app.py") == 10
    assert lines("src") is None
    assert lines("missing.txt") is None
    assert count_lines(b"") == 0


def test_a_blob_link_with_a_group_path_and_the_dash_separator_is_a_reference_too():
    text = "see https://gitlab.example/acme/payments/api/-/blob/abc123/src/y.py#L3-9 please"
    refs = [(r.kind, r.path, r.start, r.end) for r in scrape_references(text)]
    assert refs == [("path", "src/y.py", 3, 9)]
