"""The code-search port, and its local search index over the clone (``git grep -n -F``).

Retrieval only needs three things from a search index: the hits for one seed, a 12-line window
around a hit, and the commit the hits belong to (so a citation names a sha). A forge's hosted
index (each forge's code-search client) and this local one answer the same Protocol, so the
pack is built the same way against the forge's index in production and a plain clone in tests and
benchmarks. Fixed-string grep on purpose: a seed is an identifier, not a pattern.
"""

from __future__ import annotations

import contextlib
import heapq
import re
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from veranda_dagster.domain.clone.git_command import run_git
from veranda_dagster.domain.clone.repo_corpus import (
    TextCorpus,
    TextListing,
    fits_in_memory,
    is_probably_text,
    lines_holding,
    list_texts,
    stream_texts,
)
from veranda_dagster.domain.core.bounds import (
    MAX_HITS_PER_FILE,
    MAX_HITS_PER_SEARCH,
    SEARCH_WINDOW_LINES,
)
from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.domain.core.models import Window

if TYPE_CHECKING:
    from veranda_dagster.domain.context.full_text import FullTextIndex

GREP_TIMEOUT_S = 60.0
"""One ``git grep`` over a large monorepo; slower is a hung disk, not a search."""
MAX_PREFETCHED_QUERIES = 48
"""Queries one streamed pass answers (``LocalGitGrep.prefetch``): a pack searches at most
``MAX_SEARCHES`` times, chosen from its ranked candidates, their relaxed variants, the ticket's
words and its error messages; past this a query is searched with ``git grep`` when asked."""
MAX_KEPT_HIT_TEXT_BYTES = 8_000_000
"""Text the streamed pass keeps of the files its queries hit, for the windows and the ranking
that read them next (a quarter of ``MAX_HELD_TEXT_BYTES``); a file past it is read again."""


@dataclass(frozen=True)
class Hit:
    """One matching line. ``kind="path"`` means the seed matched the file's path, not a line."""

    path: str
    line: int
    text: str = ""
    kind: Literal["content", "path"] = "content"


@runtime_checkable
class CodeSearch(Protocol):
    @property
    def sha(self) -> str:
        """The commit every hit and window belongs to."""
        ...

    def search(self, seed: str) -> list[Hit]: ...

    def read_window(self, path: str, line: int) -> Window: ...


def window_bounds(line: int, total: int, size: int = SEARCH_WINDOW_LINES) -> tuple[int, int]:
    """The ``size``-line window around ``line``: the hit sits just above the middle, and the
    window slides inward at either end of the file so it keeps its size when the file allows."""
    total = max(total, 1)
    start = max(1, line - (size // 2 - 1))
    end = min(total, start + size - 1)
    start = max(1, end - size + 1)
    return start, end


def window_in(lines: list[str] | None, line: int, missing: str) -> Window:
    """The window around ``line`` of a file's ``lines`` (``split_lines``); a file that is not
    there (``None``) is an ``InputError`` saying ``missing``."""
    if lines is None:
        raise InputError(missing)
    start, end = window_bounds(line, len(lines))
    return Window(start=start, end=end, text="".join(lines[start - 1 : end]))


def split_lines(text: str) -> list[str]:
    """Lines split on ``\n`` only (as git numbers them), endings kept, so joining them gives the
    exact text back."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


_DOTTED_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_FILE_SUFFIXES_TEXT = "py pyi js jsx ts tsx go rs rb java md rst txt toml yaml yml json cfg"
_FILE_SUFFIXES = frozenset(_FILE_SUFFIXES_TEXT.split())
"""``utils.py`` is a file name, already searched as a path; not a dotted module name."""


def module_path_levels(seed: str, suffix_ok: bool = False) -> list[list[str]]:
    """The files a dotted Python name can live in, most specific level first: ``rich.panel`` ->
    ``rich/panel.py`` (or a package's ``__init__.py``), then one level up for an attribute,
    ``attrs.validators.in_`` -> ``attrs/validators.py``, but never a top-level
    ``pkg/__init__.py`` for ``pkg.name``: it re-exports every public name, so it would top every
    pack that mentions ``click.command``. A module rarely contains its own dotted name, so
    without these path hits ``rich.panel`` finds every importer of ``rich/panel.py`` but not the
    file itself. ``suffix_ok`` reads a name ending like a file type (``pkg.rst``) as a module
    too, for a caller that checks the files exist (``pkg/rst.py``) before taking it as a file
    name."""
    if not _DOTTED_NAME.fullmatch(seed):
        return []
    file_like = seed.rsplit(".", 1)[-1].lower() in _FILE_SUFFIXES
    if file_like and not suffix_ok:
        return []
    parts = seed.split(".")
    levels: list[list[str]] = []
    for n in (len(parts),) if file_like else (len(parts), len(parts) - 1):
        stem = "/".join(parts[:n])
        level = [f"{stem}.py"]
        if n >= 2:  # a top-level package's __init__ re-exports everything: not a hit
            level.append(f"{stem}/__init__.py")
        levels.append(level)
    return levels


def module_paths(seed: str) -> list[str]:
    """Every file ``module_path_levels`` names, most specific first."""
    return [path for level in module_path_levels(seed) for path in level]


def looks_like_path(seed: str) -> bool:
    return "/" in seed or bool(re.fullmatch(r"[\w.-]+\.[A-Za-z][A-Za-z0-9]{0,9}", seed))


_CONVERTING_ATTRIBUTES = re.compile(rb"\b(eol|text|crlf|filter|ident|working-tree-encoding)\b")
"""``.gitattributes`` that make a checked-out file differ from its blob (line endings,
smudge filters, keyword expansion, re-encoding): the work tree then is not the commit."""


class LocalGitGrep:
    """Search a clone at one revision with ``git grep -n -F`` (tracked files, no binaries).

    Case-insensitive like a forge's hosted index, so both search indexes find
    ``workspace.ensure`` for the seed ``Workspace.ensure``.

    Where ``git grep`` (the path for a tree too large to hold in memory) reads from: the work
    tree when it *is* the pinned commit (HEAD at the sha,
    no tracked change, no sparse checkout, no converting attributes), else the object store.
    Both give the same hits, but ``git grep <sha>`` inflates every blob again on each of a
    pack's searches, and on a large repository reading the checked-out files is several times
    faster. ``prefer_worktree=False`` forces the object store."""

    def __init__(self, repo_dir: str | Path, rev: str = "HEAD", prefer_worktree: bool = True):
        self.repo_dir = Path(repo_dir)
        self.rev = rev
        self.prefer_worktree = prefer_worktree
        self._source: str | None = None
        self._sha: str | None = None
        self._texts: dict[str, list[str] | None] = {}
        self._paths: list[str] | None = None
        self._links: set[str] = set()
        self._corpus: TextCorpus | Literal[False] | None = None
        self._listing: TextListing | None = None
        self._readable: frozenset[str] | None = None
        self._index: FullTextIndex | None = None
        self._queries: list[str] = []
        self._answers: dict[str, list[Hit]] | None = None
        self._kept: dict[str, str] = {}
        self.calls: list[str] = []
        """Every seed searched, in order: what a test or benchmark counts."""

    def at(self, rev: str) -> LocalGitGrep:
        """The same clone pinned to another revision (e.g. the default branch's base sha)."""
        return LocalGitGrep(self.repo_dir, rev, self.prefer_worktree)

    @property
    def source(self) -> Literal["worktree", "objects"]:
        """Where this search's greps read (decided once, on the first search)."""
        if self._source is None:
            self._source = "worktree" if self._worktree_is_the_commit() else "objects"
        return self._source  # type: ignore[return-value]

    def _worktree_is_the_commit(self) -> bool:
        if not self.prefer_worktree:
            return False
        head = self._git("rev-parse", "--verify", "-q", "HEAD^{commit}", check=False)
        if head.returncode != 0 or head.stdout.decode().strip() != self.sha:
            return False
        sparse = self._git("config", "--bool", "core.sparseCheckout", check=False)
        if sparse.stdout.decode().strip() == "true":
            return False
        status = self._git(
            "status", "--porcelain", "-z", "--untracked-files=no", "--ignore-submodules=all",
            check=False,
        )  # fmt: skip
        if status.returncode != 0 or status.stdout.strip():
            return False
        for path in self.paths():
            if path == ".gitattributes" or path.endswith("/.gitattributes"):
                blob = self._git("cat-file", "blob", f"{self.sha}:{path}", check=False).stdout
                if _CONVERTING_ATTRIBUTES.search(blob):
                    return False
        return True

    def _git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
        return run_git(self.repo_dir, args, timeout=GREP_TIMEOUT_S, check=check)

    @property
    def sha(self) -> str:
        if self._sha is None:
            out = self._git("rev-parse", "--verify", f"{self.rev}^{{commit}}").stdout
            self._sha = out.decode().strip()
        return self._sha

    def paths(self) -> list[str]:
        """Every tracked regular file at the revision. Symbolic links (mode 120000, whose blob
        is the link's target path, possibly a host path) and submodules are not files of the
        repository to read; they are remembered so no hit or window comes from one."""
        if self._paths is None:
            out = self._git("ls-tree", "-r", "-z", self.sha).stdout
            self._paths = []
            for entry in out.decode(errors="replace").split("\0"):
                meta, _, path = entry.partition("\t")
                if not path:
                    continue
                if meta.startswith(("120000 ", "160000 ")):
                    self._links.add(path)
                else:
                    self._paths.append(path)
        return self._paths

    def search(self, seed: str) -> list[Hit]:
        """Content hits (at most ``MAX_HITS_PER_FILE`` per file, ``MAX_HITS_PER_SEARCH`` in all),
        plus a path hit at line 1 for every file whose path ends with a path-like seed or with a
        dotted name's module file (``module_paths``). Searched in memory over the tree's texts
        (``repo_corpus.py``), or with ``git grep`` when the tree is too large to hold."""
        self.calls.append(seed)
        if not seed.strip():
            return []
        hits = self._path_hits(seed)
        corpus = self.corpus()
        if corpus is None:
            content = self._streamed(seed)
        else:
            found = corpus.grep(seed, MAX_HITS_PER_FILE, MAX_HITS_PER_SEARCH)
            content = [Hit(p, n, self._line(p, n)) for p, n in found]
        for hit in content:
            if len(hits) >= MAX_HITS_PER_SEARCH:
                break
            hits.append(hit)
        return hits + self._capped_definitions(seed, content)

    def _capped_definitions(self, seed: str, content: list[Hit]) -> list[Hit]:
        """The line defining ``seed`` (``def``/``class`` of its last name) in each file whose
        hits the per-file cap cut, when the cap dropped it: a name used eight times before its
        definition (imports, docstrings, calls) must not lose the one line the pack most wants.
        At most one extra hit per capped file, and only files the search already hit."""
        names = re.findall(r"[A-Za-z_]\w*", seed)
        if not names:
            return []
        pattern = re.compile(rf"^\s*(?:async\s+)?(?:def|class)\s+{re.escape(names[-1])}\b", re.I)
        per_file: dict[str, list[int]] = {}
        for hit in content:
            per_file.setdefault(hit.path, []).append(hit.line)
        extra: list[Hit] = []
        for path, numbers in per_file.items():
            if len(numbers) < MAX_HITS_PER_FILE:
                continue
            for number, text in enumerate(self.file_text(path) or [], 1):
                if number not in numbers and pattern.match(text):
                    extra.append(Hit(path, number, text.rstrip("\n")))
                    break
        return extra

    def prefetch(self, queries: Iterable[str]) -> None:
        """The queries this pack is likely to search (at most ``MAX_PREFETCHED_QUERIES``).

        Only a streamed tree (past ``MAX_HELD_TEXT_BYTES``) uses them: instead of one
        ``git grep`` per search, each inflating every blob of the commit again, one pass over the
        tree's texts answers all of them, builds the full-text index and keeps the texts of the
        files they hit (``MAX_KEPT_HIT_TEXT_BYTES``). Same hits as the held corpus
        (``lines_holding``); a query not named here is still searched with ``git grep``."""
        if self._answers is not None:
            return
        for query in queries:
            if len(self._queries) >= MAX_PREFETCHED_QUERIES:
                break
            if query.strip() and query not in self._queries:
                self._queries.append(query)

    def _streamed(self, seed: str) -> list[Hit]:
        """Content hits on a streamed tree: from the one pass when ``seed`` was prefetched."""
        if seed in self._queries and self._pass_pending():
            self._stream_pass()
        if self._answers is not None and seed in self._answers:
            return self._answers[seed]
        return self._git_grep(seed)

    def _pass_pending(self) -> bool:
        """Whether a streamed tree has prefetched queries and no pass has answered them."""
        return self._answers is None and bool(self._queries) and self._listing is not None

    def _stream_pass(self) -> None:
        """One read of every text file, in path order: the prefetched queries' hits (capped
        as ``search`` caps them), the full-text index when none is built yet, and the texts
        of the files hit, kept within ``MAX_KEPT_HIT_TEXT_BYTES`` (``HitTexts``)."""
        from veranda_dagster.domain.context.full_text import FullTextIndex

        assert self._listing is not None
        needles = [(q, q.lower()) for q in self._queries]
        found: dict[str, list[Hit]] = {q: [] for q in self._queries}
        index = FullTextIndex(()) if self._index is None else None
        indexed = self._indexed()
        kept = HitTexts(MAX_KEPT_HIT_TEXT_BYTES)
        files = sorted(self._listing.files, key=_by_path)
        with contextlib.closing(stream_texts(self.repo_dir, files)) as texts:
            for path, text in texts:
                if index is not None and indexed(path):
                    index.add(path, text)
                lowered, lines, first = text.lower(), None, None
                for rank, (query, needle) in enumerate(needles):
                    got = found[query]
                    if not needle or "\n" in needle or len(got) >= MAX_HITS_PER_SEARCH:
                        continue
                    at_most = MAX_HITS_PER_SEARCH - len(got)
                    numbers = lines_holding(lowered, needle, MAX_HITS_PER_FILE, at_most)
                    if not numbers:
                        continue
                    lines = lines if lines is not None else split_lines(text)
                    got.extend(Hit(path, n, _line_of(lines, n)) for n in numbers)
                    first = rank if first is None else first
                if first is not None:
                    kept.offer(path, text, first)
        if index is not None:
            self._index = index
        self._kept = kept.texts()
        self._answers = found

    def _indexed(self) -> Callable[[str], bool]:
        """Which files the full-text index holds: the tree's main language, no tests, docs,
        vendored or generated files (they would set the scale every score is normalised by)."""
        from veranda_dagster.domain.context.path_kinds import path_factor
        from veranda_dagster.domain.context.source_language import dominant_language, language_of

        main_language = dominant_language(self.paths())

        def indexed(path: str) -> bool:
            return language_of(path) == main_language and path_factor(path) == 1.0

        return indexed

    def corpus(self) -> TextCorpus | None:
        """The tree's text files held in memory, read on first use; ``None`` when they are
        streamed instead (past ``MAX_HELD_TEXT_BYTES``) or too many to read at all (past
        ``MAX_CORPUS_BYTES``): see ``text_mode``."""
        if self._corpus is None:
            self.paths()
            self._listing = list_texts(self.repo_dir, self.sha, is_probably_text)
            if self._listing is None or not fits_in_memory(self._listing):
                self._corpus = False
            else:
                self._corpus = TextCorpus(dict(stream_texts(self.repo_dir, self._listing.files)))
        return self._corpus if isinstance(self._corpus, TextCorpus) else None

    @property
    def text_mode(self) -> Literal["held", "streamed", "unread"]:
        """How the tree's texts are read: held in memory, streamed one file at a time (the same
        answers in bounded memory), or not read at all (past ``MAX_CORPUS_BYTES``)."""
        if self.corpus() is not None:
            return "held"
        return "streamed" if self._listing is not None else "unread"

    def _line(self, path: str, line: int) -> str:
        lines = self.file_text(path) or []
        return lines[line - 1].rstrip("\n") if 0 < line <= len(lines) else ""

    def _path_hits(self, seed: str) -> list[Hit]:
        """Path hits for a path-like seed, and for a dotted name the files of its most specific
        level that exists (``module_path_levels``): ``pkg.sub.models`` names
        ``pkg/sub/models.py`` when there is one, and then not also ``pkg/sub/__init__.py``, so
        the module's bonus is not split with the package that merely contains it. The module
        reading comes before the file-name one: ``docutils.rst`` is the module
        ``docutils/rst.py`` when that exists, a file named ``docutils.rst`` only otherwise."""
        paths = self.paths()

        def matching(suffixes: list[str]) -> list[str]:
            return [p for p in paths if any(p == s or p.endswith("/" + s) for s in suffixes)]

        found: list[str] = []
        for level in module_path_levels(seed, suffix_ok=True):
            if matched := matching(level):
                found = matched
                break
        if not found and looks_like_path(seed):
            found = matching([seed.strip("/")])
        return [Hit(path, 1, kind="path") for path in found]

    def _git_grep(self, seed: str) -> list[Hit]:
        self.paths()
        worktree = self.source == "worktree"
        proc = self._git(
            "grep", "-n", "-z", "-F", "-I", "-i", f"--max-count={MAX_HITS_PER_FILE}",
            "-e", seed, *([] if worktree else [self.sha]), "--",
            check=False,
        )  # fmt: skip
        if proc.returncode not in (0, 1):
            detail = proc.stderr.decode(errors="replace").strip()[-300:]
            raise InputError(f"git grep failed in {self.repo_dir}: {detail}")
        hits: list[Hit] = []
        prefix = "" if worktree else f"{self.sha}:"
        for raw in proc.stdout.decode("utf-8", errors="replace").splitlines():
            if len(hits) >= MAX_HITS_PER_SEARCH:
                break
            parts = raw.split("\0", 2)
            if len(parts) != 3 or not parts[0].startswith(prefix) or not parts[1].isdigit():
                continue
            path = parts[0][len(prefix) :]
            if path not in self._links and self._is_readable(path):
                hits.append(Hit(path, int(parts[1]), parts[2]))
        return hits

    def _is_readable(self, path: str) -> bool:
        """Whether ``path`` is one of the texts the in-memory search would have held (the
        streamed path's ``git grep`` must not find more: no file over
        ``MAX_REPO_FILE_BYTES``, none with a binary suffix); any path when nothing was listed."""
        if self._listing is None:
            return True
        if self._readable is None:
            self._readable = self._listing.paths
        return path in self._readable

    def full_text_rank(self, query: str) -> list[tuple[str, float]] | None:
        """The source files of the tree's main language ranked by BM25 against ``query``
        (``full_text.py``); ``None`` when the tree is too large to hold (``MAX_CORPUS_BYTES``).
        Tests, docs, vendored and generated files, and files in another language are left
        out: they would set the scale every other file's score is normalised by."""
        from veranda_dagster.domain.context.full_text import FullTextIndex, query_terms

        corpus = self.corpus()
        if self._index is None and corpus is None and self._pass_pending():
            self._stream_pass()  # one read of the tree for the index and the searches
        if self._index is None:
            indexed = self._indexed()
            if corpus is not None:
                self._index = FullTextIndex(
                    (path, text) for path, text in sorted(corpus.texts.items()) if indexed(path)
                )
            elif self._listing is not None:  # too many to hold: one file at a time
                files = sorted((f for f in self._listing.files if indexed(f[1])), key=_by_path)
                with contextlib.closing(stream_texts(self.repo_dir, files)) as documents:
                    self._index = FullTextIndex(documents)
            else:
                return None
        return self._index.rank(query_terms(query))

    def term_weights(self) -> dict[str, float]:
        """The idf of each term of the last full-text query (empty before one ran)."""
        return dict(self._index.term_idf) if self._index is not None else {}

    def file_text(self, path: str) -> list[str] | None:
        """The file's lines at the revision, cached; ``None`` when it does not exist there.
        With queries prefetched and not yet answered, the one pass comes first (a frame's file
        is read before any search): it keeps the files the pack reads next."""
        pending = path not in self._texts and bool(self._queries) and self._answers is None
        if pending and self.corpus() is None and self._pass_pending():
            self._stream_pass()
        corpus = self._corpus if isinstance(self._corpus, TextCorpus) else None
        if path not in self._texts and corpus is not None and path in corpus.texts:
            self._texts[path] = split_lines(corpus.texts[path])
        if path not in self._texts and path in self._kept:
            self._texts[path] = split_lines(self._kept.pop(path))
        if path not in self._texts:
            self.paths()
            proc = self._git("cat-file", "blob", f"{self.sha}:{path}", check=False)
            if proc.returncode != 0 or path in self._links:
                self._texts[path] = None
            else:
                self._texts[path] = split_lines(proc.stdout.decode("utf-8", errors="replace"))
        return self._texts[path]

    def read_window(self, path: str, line: int) -> Window:
        return window_in(self.file_text(path), line, f"{path} does not exist at {self.sha[:12]}")


class HitTexts:
    """The texts of the files a streamed pass hit, within ``limit`` characters, the files hit
    by the earliest queries first: a seed candidate's files are read next (windows, docstrings,
    capped definitions), a plain ticket word's many files only if the budget reaches it."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._held: dict[str, tuple[int, str]] = {}
        self._queue: list[tuple[int, int, str]] = []  # (-rank, -order, path): worst on top
        self._size = 0

    def offer(self, path: str, text: str, rank: int) -> None:
        """Keep ``text`` unless every held file ranks at least as well and there is no room."""
        if len(text) > self.limit:
            return
        self._held[path] = (rank, text)
        heapq.heappush(self._queue, (-rank, -len(self._queue), path))
        self._size += len(text)
        while self._size > self.limit:
            _, _, worst = heapq.heappop(self._queue)
            self._size -= len(self._held.pop(worst)[1])

    def texts(self) -> dict[str, str]:
        return {path: text for path, (_, text) in self._held.items()}


def _by_path(file: tuple[str, str]) -> str:
    return file[1]


def _line_of(lines: list[str], number: int) -> str:
    """Line ``number`` (1-based) without its newline, as ``git grep`` prints it."""
    return lines[number - 1].rstrip("\n") if 0 < number <= len(lines) else ""
