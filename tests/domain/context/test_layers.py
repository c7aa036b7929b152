"""The four layers, and writing them into a real clone without clobbering its own files."""

from pathlib import Path

import pytest

from tests.fixtures.context.gitrepo import git, make_repo
from veranda_dagster.domain.context.layers import (
    BEGIN,
    END,
    build_layers,
    render_facts,
    strip_instruction_files,
    write_instruction_files,
)
from veranda_dagster.domain.context.retrieval import RetrievalResult
from veranda_dagster.domain.context.runbooks import MAX_RUNBOOK_FILES, select_runbooks
from veranda_dagster.domain.core.bounds import MAX_HINTS_BYTES, MAX_RUNBOOK_BYTES, MAX_RUNBOOKS
from veranda_dagster.domain.core.models import Citation, PackFile, RepoFacts, Ticket, Window

FIXTURES = Path(__file__).parents[2] / "fixtures" / "context"
RUNBOOKS = str(FIXTURES / "runbooks")
HINTS = str(FIXTURES / "hints")
OWN_CLAUDE = "# House rules\n\nUse tabs. Run `make check` before pushing.\n"

TICKET = Ticket(
    id="ENG-7",
    source="linear",
    title="Add an alembic migration for the users.email index",
    description="The schema needs an index; see `UserRepo.find_by_email`.",
)
PACK = RetrievalResult(
    files=[PackFile(path="src/users.py", windows=[Window(start=3, end=4, text="def f():\n  x\n")])],
    citations=[Citation(id="R1", path="src/users.py", start=3, end=4, sha="b" * 40)],
    searches=2,
    bytes=13,
)


@pytest.fixture
def repo(tmp_path):
    return make_repo(
        tmp_path / "clone",
        {
            "CLAUDE.md": OWN_CLAUDE,
            "src/users.py": "a\nb\ndef f():\n  x\n",
            ".veranda/hints.md": "Regenerate the queries after a schema change.\n",
        },
    )


def _layers(repo, **kw):
    return build_layers(
        TICKET,
        repo,
        RepoFacts(test=["make test"], lint=["make lint"]),
        runbooks_dir=kw.get("runbooks_dir", RUNBOOKS),
        hints_dir=kw.get("hints_dir", HINTS),
        pack=PACK,
        repo=kw.get("repo_name", "acme/api"),
    )


def test_four_layers_each_sourced_and_labelled(repo):
    layers = _layers(repo)
    assert [layer.name for layer in layers] == [
        "generic",
        "org_runbooks",
        "repo_hints",
        "repo_facts",
    ]
    generic = " ".join(layers[0].text.split())
    assert layers[0].source == "veranda_dagster/domain/context/prompts/generic.md"
    assert "untrusted data" in generic and "environment variables" in generic
    assert "Sub-agents" in layers[0].text and "Commits" in layers[0].text
    assert layers[1].source == "security.md, data/migrations.md"
    assert "Alembic revision" in layers[1].text and "integer cents" not in layers[1].text
    assert layers[2].source.endswith("acme__api.md, .veranda/hints.md")
    assert "need Docker" in layers[2].text and "Regenerate the queries" in layers[2].text
    assert "`make test`" in layers[3].text


def test_runbooks_are_narrowed_by_ticket_words_repo_scope_and_capped():
    chosen = select_runbooks(RUNBOOKS, "alembic migration", [], "acme/payments")
    assert [rb.source for rb in chosen] == ["security.md", "payments.md", "data/migrations.md"]
    assert (
        len(select_runbooks(RUNBOOKS, "migration storybook story alembic", [], "acme/payments"))
        == MAX_RUNBOOKS
    )
    unrelated = select_runbooks(RUNBOOKS, "fix the login page typo", [], "acme/api")
    assert [rb.source for rb in unrelated] == ["security.md"]
    assert select_runbooks(None, "anything", [], None) == []


def test_missing_runbooks_and_hints_are_named_not_silent(tmp_path):
    layers = build_layers(
        TICKET,
        tmp_path,
        RepoFacts(),
        runbooks_dir=None,
        hints_dir=None,
        pack=RetrievalResult(),
    )
    assert layers[1].source == "none" and "No organisation runbook" in layers[1].text
    assert layers[2].source == "none" and "No hints" in layers[2].text


def test_facts_render_containers_tags_and_the_frontend_browser_boundary():
    text = render_facts(
        RepoFacts(
            test=["npm run test"], build_tags=["integration"], needs_containers=True, frontend=True
        )
    )
    assert "`npm run test`" in text and "`integration`" in text and "need containers" in text
    assert "NOT available" in text
    assert "NOT available" not in render_facts(RepoFacts(test=["go test ./..."]))


def test_instruction_files_preserve_the_repos_own_and_stay_out_of_commits(repo):
    layers = _layers(repo)
    written = write_instruction_files(repo, layers, PACK, ["CLAUDE.md", "AGENTS.md", "GEMINI.md"])
    assert written == ["CLAUDE.md", "AGENTS.md", "GEMINI.md"]
    claude = (repo / "CLAUDE.md").read_text()
    assert claude.startswith(OWN_CLAUDE)
    assert claude.count(BEGIN) == 1 and claude.count(END) == 1
    for heading in (
        "1. Generic rules",
        "2. Organisation runbooks",
        "3. Repository hints",
        "4. Repository facts",
    ):
        assert heading in claude
    assert "### [R1] `src/users.py` lines 3-4" in claude and "def f():" in claude
    agents = (repo / "AGENTS.md").read_text()
    assert agents.startswith(BEGIN) and agents == (repo / "GEMINI.md").read_text()
    exclude = (repo / ".git" / "info" / "exclude").read_text().splitlines()
    assert "/AGENTS.md" in exclude and "/GEMINI.md" in exclude and "/CLAUDE.md" not in exclude
    git(repo, "add", "--all")
    assert git(repo, "status", "--porcelain") == ""

    # a second write (a re-run) replaces the block instead of stacking another one
    write_instruction_files(repo, layers, RetrievalResult(), ["CLAUDE.md", "AGENTS.md"])
    claude = (repo / "CLAUDE.md").read_text()
    assert claude.startswith(OWN_CLAUDE) and claude.count(BEGIN) == 1
    assert "No code was retrieved" in claude and "### [R1]" not in claude
    assert exclude == (repo / ".git" / "info" / "exclude").read_text().splitlines()


def test_stripping_restores_the_repos_file_and_removes_generated_ones(repo):
    write_instruction_files(repo, _layers(repo), PACK, ["CLAUDE.md", "AGENTS.md"])
    assert strip_instruction_files(repo, ["CLAUDE.md", "AGENTS.md", "GEMINI.md"]) == [
        "CLAUDE.md",
        "AGENTS.md",
    ]
    assert (repo / "CLAUDE.md").read_text() == OWN_CLAUDE
    assert not (repo / "AGENTS.md").exists()


@pytest.mark.parametrize(
    ("case", "before", "read"),
    [
        ("the runbook is the last file read", MAX_RUNBOOK_FILES - 1, True),
        ("the runbook is one file past the bound", MAX_RUNBOOK_FILES, False),
    ],
)
def test_runbooks_are_read_from_at_most_their_bound_of_files(tmp_path, case, before, read):
    """``MAX_RUNBOOK_FILES``: markdown files are read in path order up to the bound; a matching
    runbook at the bound is chosen, one file later it is never read."""
    for i in range(before):
        (tmp_path / f"a{i:04d}.md").write_text("# Notes\n")
    (tmp_path / "zz.md").write_text("---\nkeywords: [alembic]\n---\n# Migrations\n")
    chosen = select_runbooks(str(tmp_path), "alembic migration", [], "acme/api")
    assert [rb.source for rb in chosen] == (["zz.md"] if read else []), case


def _body(size: int) -> str:
    """``size`` bytes of prose ending in a full stop (a layer strips trailing blanks)."""
    return ("Every deploy goes through the pipeline. " * (size // 40 + 1))[: size - 1] + "."


@pytest.mark.parametrize(
    ("case", "size"),
    [("at the bound: whole", MAX_RUNBOOK_BYTES), ("one byte past: cut", MAX_RUNBOOK_BYTES + 1)],
)
def test_a_runbook_in_the_layer_is_cut_at_its_bound_and_says_so(tmp_path, case, size):
    """``MAX_RUNBOOK_BYTES``: a runbook of one byte more than the bound is in the layer cut at
    it with a note saying where; exactly the bound is whole, with no note."""
    body = _body(size)
    (tmp_path / "deploys.md").write_text(f"---\nalways: true\n---\n{body}")
    layers = _layers(tmp_path, runbooks_dir=str(tmp_path))
    text = layers[1].text
    cut = f"[… cut at {MAX_RUNBOOK_BYTES} bytes]"
    if size <= MAX_RUNBOOK_BYTES:
        assert body in text and cut not in text, case
    else:
        assert body not in text and cut in text, case
        assert body[:MAX_RUNBOOK_BYTES].rstrip() + "\n\n" + cut in text


@pytest.mark.parametrize("over", [0, 1])
def test_the_hints_layer_is_cut_at_its_bound_and_names_the_file_to_read(repo, over):
    """``MAX_HINTS_BYTES``: the repository's hints file making the layer one byte more than the
    bound is cut at it and names the file for the rest; exactly at the bound it is whole."""
    head = "From `.veranda/hints.md`:\n\n"
    body = _body(MAX_HINTS_BYTES - len(head) + over)
    (repo / ".veranda" / "hints.md").write_text(body)
    layers = _layers(repo, hints_dir=None)
    assert layers[2].source == ".veranda/hints.md"
    note = f"[… cut at {MAX_HINTS_BYTES} bytes; read .veranda/hints.md for the rest]"
    if over:
        kept = (head + body)[:MAX_HINTS_BYTES].rstrip()
        assert layers[2].text == f"{kept}\n\n{note}\n"
    else:
        assert layers[2].text == head + body
