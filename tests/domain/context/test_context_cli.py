"""``veranda pack``: the JSON contract and exit 2 with one line on bad input."""

import json

import pytest

from tests.fixtures.context.gitrepo import git, make_repo
from veranda_dagster.cli import main

TICKET: dict[str, object] = {
    "id": "ENG-9",
    "source": "slack",
    "title": "retry_after ignores the header",
    "description": "See `parse_retry_after` in lib/http.py",
    "labels": [],
    "attachments": [],
    "url": None,
}


@pytest.fixture
def repo(tmp_path):
    return make_repo(
        tmp_path / "repo",
        {
            "lib/http.py": "def parse_retry_after(h):\n    return retry_after(h)\n",
            "README.md": "x\n",
        },
    )


def _write(tmp_path, name, content):
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return str(path)


def test_prints_exactly_the_contract(tmp_path, repo, capsys):
    ticket = _write(tmp_path, "t.json", TICKET)
    dossier = _write(tmp_path, "d.md", "Owners say `retry_after` is shared.")
    rc = main(
        ["pack", "--repo-dir", str(repo), "--ticket", ticket, "--dossier", dossier, "--no-model"]
    )
    out = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert list(out) == ["seeds", "searches", "bytes", "files", "citations"]
    assert out["seeds"] == ["retry_after", "parse_retry_after", "lib/http.py"]  # 2 mentions first
    assert out["searches"] == 9  # full-text ranking, 3 seeds, the basename, 4 ticket words
    assert out["files"] == [
        {
            "path": "lib/http.py",
            "windows": [
                {
                    "start": 1,
                    "end": 2,
                    "text": "def parse_retry_after(h):\n    return retry_after(h)\n",
                }
            ],
        }
    ]
    assert out["bytes"] == 52
    sha = git(repo, "rev-parse", "HEAD")
    assert out["citations"] == [
        {"id": "R1", "path": "lib/http.py", "start": 1, "end": 2, "sha": sha}
    ]


@pytest.mark.parametrize(
    ("ticket", "needle"),
    [
        ("{not json", "not valid JSON"),
        ({"id": "ENG-9", "source": "email", "title": "x"}, "field 'source'"),
        ({"source": "linear", "title": "x"}, "field 'id'"),
    ],
)
def test_bad_ticket_files_exit_2_with_one_line(tmp_path, repo, capsys, ticket, needle):
    path = _write(tmp_path, "t.json", ticket)
    assert main(["pack", "--repo-dir", str(repo), "--ticket", path]) == 2
    err = capsys.readouterr()
    assert err.out == ""
    assert err.err.count("\n") == 1 and needle in err.err


def test_missing_files_and_non_repositories_exit_2(tmp_path, repo, capsys):
    ticket = _write(tmp_path, "t.json", TICKET)
    assert main(["pack", "--repo-dir", str(repo), "--ticket", str(tmp_path / "nope.json")]) == 2
    assert "--ticket" in (err := capsys.readouterr().err) and "cannot read" in err
    assert main(["pack", "--repo-dir", str(tmp_path), "--ticket", ticket]) == 2
    assert "is not a git repository" in capsys.readouterr().err
    args = ["pack", "--repo-dir", str(repo), "--ticket", ticket, "--dossier", str(tmp_path / "x")]
    assert main(args) == 2
    assert "--dossier" in (err := capsys.readouterr().err) and "cannot read" in err
