"""A streamed tree (past ``MAX_HELD_TEXT_BYTES``) answers a pack's searches from one read.

Before, each search of a streamed tree was a ``git grep`` of the pinned commit, inflating every
blob again, and each window a ``git cat-file`` of its own (on a 2,000-file repository: 7.2
CPU-seconds a pack, most of it in sandboxed git). ``LocalGitGrep.prefetch`` names the queries a
pack may search; one pass over the tree answers them, builds the full-text index and keeps the
files they hit. The answers are the held corpus's (``test_streamed_corpus.py`` compares whole
packs on a real tree); these tests pin the single read, the fallback and the bounds.
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.context.gitrepo import make_repo
from veranda_dagster.domain.clone import repo_corpus
from veranda_dagster.domain.context import code_search
from veranda_dagster.domain.context.code_search import (
    MAX_KEPT_HIT_TEXT_BYTES,
    MAX_PREFETCHED_QUERIES,
    HitTexts,
    LocalGitGrep,
)
from veranda_dagster.domain.context.pack import _pack
from veranda_dagster.domain.core.bounds import MAX_REPO_FILE_BYTES
from veranda_dagster.domain.core.models import Ticket

FILES = {
    "src/app/retry.py": "def parse_retry_after(header):\n    return int(header)\n",
    "src/app/client.py": "from app.retry import parse_retry_after\n\nparse_retry_after('1')\n",
    "src/app/other.py": "def unrelated():\n    return 'retry'\n",
    "docs/retry.md": "Use parse_retry_after for the Retry-After header.\n",
}
TICKET = Ticket(
    id="E-1",
    source="linear",
    title="`parse_retry_after` fails on dates",
    description="A Retry-After date breaks `parse_retry_after` in src/app/retry.py",
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", FILES)


class Recorder:
    """Counts the tree reads and the git commands a ``LocalGitGrep`` runs."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.reads = 0
        self.git: list[tuple[str, ...]] = []
        real_stream, real_git = repo_corpus.stream_texts, LocalGitGrep._git

        def stream(*args: Any) -> Generator[tuple[str, str], None, None]:
            self.reads += 1
            yield from real_stream(*args)

        def git(search: LocalGitGrep, *args: str, check: bool = True) -> Any:
            self.git.append(args)
            return real_git(search, *args, check=check)

        monkeypatch.setattr(code_search, "stream_texts", stream)
        monkeypatch.setattr(LocalGitGrep, "_git", git)

    def verbs(self) -> list[str]:
        return [args[0] for args in self.git]


def test_a_streamed_pack_reads_the_tree_once_and_runs_no_grep(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = [TICKET.title, TICKET.description]
    held = LocalGitGrep(repo)
    expected, _ = _pack(texts, held, TICKET)
    assert held.text_mode == "held"

    monkeypatch.setattr(repo_corpus, "MAX_HELD_TEXT_BYTES", 1)
    recorder = Recorder(monkeypatch)
    streamed = LocalGitGrep(repo)
    got, _ = _pack(texts, streamed, TICKET)
    assert streamed.text_mode == "streamed"
    assert got == expected and got.files
    assert recorder.reads == 1  # the searches, the full-text index and the windows
    assert "grep" not in recorder.verbs()
    hit = {h.path for query in list(streamed.calls) for h in streamed.search(query)}
    read_alone = [args[-1].split(":", 1)[1] for args in recorder.git if args[0] == "cat-file"]
    assert read_alone == ["src/app/other.py"]  # full-text only: no query hit it, read once
    assert not hit & set(read_alone)


def test_a_query_not_prefetched_falls_back_to_git_grep(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = LocalGitGrep(repo)
    expected = {q: held.search(q) for q in ("parse_retry_after", "Retry-After")}
    monkeypatch.setattr(repo_corpus, "MAX_HELD_TEXT_BYTES", 1)
    recorder = Recorder(monkeypatch)
    streamed = LocalGitGrep(repo)
    streamed.prefetch(["parse_retry_after"])
    assert streamed.search("parse_retry_after") == expected["parse_retry_after"]
    assert "grep" not in recorder.verbs()
    assert streamed.search("Retry-After") == expected["Retry-After"]
    assert recorder.verbs().count("grep") == 1


def test_prefetch_holds_at_most_its_bound_of_queries(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = LocalGitGrep(repo).search("parse_retry_after")
    monkeypatch.setattr(repo_corpus, "MAX_HELD_TEXT_BYTES", 1)
    recorder = Recorder(monkeypatch)
    streamed = LocalGitGrep(repo)
    queries = [f"name_{i}" for i in range(MAX_PREFETCHED_QUERIES)] + ["parse_retry_after"]
    streamed.prefetch(queries)
    streamed.prefetch(["unrelated"])  # still room? no: the bound is reached
    assert streamed.search("name_0") == []
    assert recorder.reads == 1 and "grep" not in recorder.verbs()
    assert streamed.search("parse_retry_after") == expected
    assert recorder.verbs().count("grep") == 1  # past the bound: asked of git, same answer


def test_kept_hit_texts_stay_within_their_bound_earliest_queries_first() -> None:
    kept = HitTexts(limit=10)
    kept.offer("a.py", "aaaa", rank=3)
    kept.offer("b.py", "bbbb", rank=0)
    kept.offer("c.py", "cccc", rank=1)  # 12 > 10: the rank-3 file goes
    assert kept.texts() == {"b.py": "bbbb", "c.py": "cccc"}
    kept.offer("d.py", "dddd", rank=5)  # the worst itself: not kept
    assert kept.texts() == {"b.py": "bbbb", "c.py": "cccc"}
    kept.offer("e.py", "e" * 11, rank=0)  # larger than the whole bound
    assert "e.py" not in kept.texts()


def _sized(head: str, size: int) -> str:
    """``head`` then comment lines, ``size`` characters in all."""
    rest = size - len(head)
    lines, tail = divmod(rest, 100)
    return head + ("#" * 99 + "\n") * lines + "#" * tail


@pytest.mark.parametrize(
    ("case", "over", "read_again"),
    [
        ("at the bound: every hit file kept", 0, []),
        ("one character past: the last file hit is read again", 1, ["src/z_last.py"]),
    ],
)
def test_the_pass_keeps_hit_texts_up_to_their_bound_and_rereads_past_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str, over: int, read_again: list[str]
) -> None:
    """``MAX_KEPT_HIT_TEXT_BYTES`` on a real streamed tree: files the prefetched query hits,
    together exactly the bound, are all kept by the one pass (reading them costs no ``git``);
    one character more and the last one hit (rank ties go latest first) is read again alone."""
    size = MAX_REPO_FILE_BYTES  # the largest file a search reads
    count, rest = divmod(MAX_KEPT_HIT_TEXT_BYTES - 100, size)
    files = {f"src/f{i}.py": _sized(f"parse_retry_after = {i}\n", size) for i in range(count)}
    files["src/g_rest.py"] = _sized("parse_retry_after = 0\n", rest)
    files["src/z_last.py"] = _sized("parse_retry_after()\n", 100 + over)
    assert sum(len(t) for t in files.values()) == MAX_KEPT_HIT_TEXT_BYTES + over
    repo = make_repo(tmp_path / "repo", files)
    monkeypatch.setattr(repo_corpus, "MAX_HELD_TEXT_BYTES", 1)
    recorder = Recorder(monkeypatch)
    streamed = LocalGitGrep(repo)
    streamed.prefetch(["parse_retry_after"])
    assert {h.path for h in streamed.search("parse_retry_after")} == set(files)
    for path in files:
        assert "".join(streamed.file_text(path) or []) == files[path]
    read = [args[-1].split(":", 1)[1] for args in recorder.git if args[0] == "cat-file"]
    assert read == read_again, case
    assert recorder.reads == 1
