"""The local search index over a real clone: ``git grep -n -F`` at a pinned revision."""

import pytest

from tests.fixtures.context.gitrepo import commit, git, make_repo, numbered
from veranda_dagster.domain.clone import repo_corpus
from veranda_dagster.domain.context.code_search import LocalGitGrep, module_paths, window_bounds
from veranda_dagster.domain.context.retrieval import build_pack
from veranda_dagster.domain.core.bounds import MAX_HITS_PER_FILE, MAX_HITS_PER_SEARCH
from veranda_dagster.domain.core.errors import InputError


@pytest.fixture
def repo(tmp_path):
    return make_repo(
        tmp_path / "repo",
        {
            "src/http/retry.py": numbered(30) + "def retry_after(x):  # a.b(c)\n" + numbered(5),
            "src/app.py": "from http.retry import retry_after\nretry_after(1)\n",
            "docs/notes.md": "retry_after is documented here\n",
            "img.bin": "\0\0retry_after\0",
        },
    )


def test_hits_are_fixed_string_case_insensitive_and_skip_binaries(repo):
    search = LocalGitGrep(repo)
    hits = search.search("RETRY_AFTER(")
    assert {(h.path, h.line) for h in hits} == {("src/http/retry.py", 31), ("src/app.py", 2)}
    assert search.search("a.b(c)")[0].line == 31
    assert search.calls == ["RETRY_AFTER(", "a.b(c)"]


def test_path_seeds_hit_the_file_itself(repo):
    hits = LocalGitGrep(repo).search("http/retry.py")
    assert [(h.path, h.line, h.kind) for h in hits] == [("src/http/retry.py", 1, "path")]


def test_windows_are_twelve_lines_and_slide_inward_at_the_ends(repo):
    search = LocalGitGrep(repo)
    window = search.read_window("src/http/retry.py", 31)
    assert (window.start, window.end) == (25, 36)  # 36-line file: slid up from 26-37
    assert window.text.count("\n") == 12
    assert window_bounds(1, 100) == (1, 12)
    assert window_bounds(100, 100) == (89, 100)
    assert window_bounds(3, 5) == (1, 5)
    with pytest.raises(InputError, match="does not exist"):
        search.read_window("nope.py", 1)


def test_search_is_pinned_to_a_revision_not_the_working_tree(repo):
    base = git(repo, "rev-parse", "HEAD")
    commit(repo, {"src/new.py": "retry_after()\n"})
    (repo / "untracked.py").write_text("retry_after\n")
    pinned = LocalGitGrep(repo).at(base)
    assert pinned.sha == base
    assert "src/new.py" not in {h.path for h in pinned.search("retry_after")}
    assert "src/new.py" in {h.path for h in LocalGitGrep(repo).search("retry_after")}
    assert "untracked.py" not in {h.path for h in LocalGitGrep(repo).search("retry_after")}


def test_pack_over_a_clone_cites_its_commit_and_ranks_the_definition_first(repo):
    search = LocalGitGrep(repo)
    pack = build_pack(["retry_after"], search)
    assert pack.files[0].path == "src/http/retry.py"
    assert [f.path for f in pack.files][-1] == "docs/notes.md"
    assert {c.sha for c in pack.citations} == {git(repo, "rev-parse", "HEAD")}


def test_a_missing_revision_is_a_clear_error(tmp_path, repo):
    with pytest.raises(InputError, match="rev-parse"):
        _ = LocalGitGrep(repo, rev="no-such-branch").sha


def test_a_dotted_module_name_hits_its_module_file(repo):
    search = LocalGitGrep(repo)
    assert [(h.path, h.kind) for h in search.search("http.retry")] == [
        ("src/http/retry.py", "path"),
        ("src/app.py", "content"),
    ]
    attribute = search.search("http.retry.retry_after")  # one level up: the attribute's module
    assert [(h.path, h.kind) for h in attribute] == [("src/http/retry.py", "path")]
    assert search.search("os.environ") == []


def test_a_top_level_package_init_is_no_module_hit_for_its_attributes(tmp_path):
    files = {
        "pkg/__init__.py": "from .core import command\n",
        "pkg/core.py": "def command(): ...\n",
    }
    search = LocalGitGrep(make_repo(tmp_path / "r", files))
    assert search.search("pkg.command") == []  # pkg/__init__.py re-exports; it is not named
    assert [(h.path, h.kind) for h in search.search("pkg.core")] == [("pkg/core.py", "path")]


def _promotions_repo(tmp_path):
    """A package whose ``__init__`` and its ``models`` module both exist, as in
    ``wagtail.contrib.search_promotions``; eight other modules mention the ticket's words."""
    files = {
        "site/promos/__init__.py": "".join(f"LEVEL_{i} = {i}\n" for i in range(40)),
        "site/promos/models.py": "class Query:\n    def get(self, text):\n        return text\n",
    }
    files |= {
        f"site/promos/v{i}.py": f"def query_{i}():\n    return 'search query'\n" for i in range(8)
    }
    return make_repo(tmp_path / "r", files)


def test_a_dotted_name_credits_only_its_most_specific_existing_level(tmp_path):
    search = LocalGitGrep(_promotions_repo(tmp_path))
    hits = search.search("site.promos.models")
    assert [(h.path, h.kind) for h in hits] == [("site/promos/models.py", "path")]
    # no ``site/promos/models/attr.py``: one level up, the module the attribute lives in
    hits = search.search("site.promos.models.Query")
    assert [(h.path, h.kind) for h in hits] == [("site/promos/models.py", "path")]
    # the package itself, named as such, is its __init__
    assert [h.path for h in search.search("site.promos")] == ["site/promos/__init__.py"]


def test_a_module_named_by_its_dotted_path_leads_the_pack_alone(tmp_path):
    search = LocalGitGrep(_promotions_repo(tmp_path))
    text = "Search query fails in site.promos.models after saving a search query"
    paths = [f.path for f in build_pack(["site.promos.models"], search, ticket_text=text).files]
    assert paths[0] == "site/promos/models.py"
    assert "site/promos/__init__.py" not in paths  # no evidence of its own once not named


@pytest.mark.parametrize(
    "seed, paths",
    [
        ("rich.panel", ["rich/panel.py", "rich/panel/__init__.py", "rich.py"]),
        ("click.command", ["click/command.py", "click/command/__init__.py", "click.py"]),
        (
            "attrs.validators.in_",
            [
                "attrs/validators/in_.py",
                "attrs/validators/in_/__init__.py",
                "attrs/validators.py",
                "attrs/validators/__init__.py",
            ],
        ),
        ("utils.py", []),
        ("client.get(url)", []),
        ("src/http/retry.py", []),
        ("retry_after", []),
    ],
)
def test_module_paths(seed, paths):
    assert module_paths(seed) == paths


@pytest.mark.parametrize("mode", ["held", "streamed", "git grep"])
def test_a_search_reads_back_at_most_its_bound_of_hits_in_every_mode(tmp_path, monkeypatch, mode):
    """``MAX_HITS_PER_SEARCH``: a seed on every line of enough files for one file more than the
    bound (each file at ``MAX_HITS_PER_FILE``) gives exactly the bound, the last file in path
    order left out, whether the tree is held, streamed with the seed prefetched, or asked of
    ``git grep``; its twin, files for exactly the bound, gives every hit."""
    files_at_bound = MAX_HITS_PER_SEARCH // MAX_HITS_PER_FILE
    assert files_at_bound * MAX_HITS_PER_FILE == MAX_HITS_PER_SEARCH
    line = "total = use_token_budget(total)\n"
    files = {f"pkg/m{i:03d}.py": line * MAX_HITS_PER_FILE for i in range(files_at_bound + 1)}
    last = f"pkg/m{files_at_bound:03d}.py"
    if mode != "held":
        monkeypatch.setattr(repo_corpus, "MAX_HELD_TEXT_BYTES", 1)
    for name, tree in (("past", files), ("at", {p: t for p, t in files.items() if p != last})):
        search = LocalGitGrep(make_repo(tmp_path / name, tree))
        if mode == "streamed":
            search.prefetch(["use_token_budget"])
        hits = search.search("use_token_budget")
        assert search.text_mode == ("held" if mode == "held" else "streamed")
        assert len(hits) == MAX_HITS_PER_SEARCH, (mode, name)
        assert {h.path for h in hits} == set(tree) - {last}
