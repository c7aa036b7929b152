"""The texts of a clone's files at one commit, read with ``git cat-file --batch``: held in
memory and searched there when they are few, streamed one file at a time when they are many.

Why not a ``git grep`` per search: at a pinned revision git inflates every blob again on each
call (a quarter to a full second on a 5,000-file tree), and one call with many case-insensitive
fixed strings is slower still; one batch read costs about half a second, after which a
fixed-string search over the lowercased texts costs tens of milliseconds. The same texts feed
the full-text ranking and the windows, so no file is read twice.

Bounded twice:

* ``MAX_HELD_TEXT_BYTES``: the text a pack may *hold* (the texts and their lowercased copy, as
  ``TextCorpus``). Holding a sympy-sized tree took the pack from 68 to 153 MiB. Past this cap
  nothing is held: ``list_texts`` says which files there are and ``stream_texts`` yields them
  one at a time (the full-text index keeps only each file's identifier counts), searches run
  as ``git grep`` over the clone, and a window reads its one file. The answers are the same
  (the same files, lines and ranking); only the time differs.
* ``MAX_CORPUS_BYTES``: past this, even streaming is not done (``load_texts`` returns
  ``None``): a monorepo is searched with ``git grep`` and the full-text ranking is reported
  unavailable.

Files over ``MAX_REPO_FILE_BYTES`` and binaries (a NUL byte in the first 8,000 bytes, git's
own rule) are left out on every path.
"""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
import threading
from collections.abc import Callable, Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from veranda_dagster.domain.clone.git_command import popen_git, run_git
from veranda_dagster.domain.core.bounds import (
    MAX_CORPUS_BYTES,
    MAX_HELD_TEXT_BYTES,
    MAX_REPO_FILE_BYTES,
)
from veranda_dagster.domain.core.errors import InputError

BINARY_PROBE_BYTES: Final = 8_000
"""git's ``buffer_is_binary`` looks this far for a NUL byte."""
CAT_FILE_TIMEOUT_S: Final = 120.0
"""One ``git cat-file --batch`` of a tree, or a listing: half a second on a 5,000-file tree,
some seconds on a monorepo's, so two minutes is a git hung on a stalled disk or a lock, not
a large tree; the timer kills it and the read is a typed error."""


@dataclass(frozen=True)
class TextListing:
    """The files whose texts a pack may read at one commit: ``(blob, path)`` in path order,
    and their total size."""

    files: list[tuple[str, str]]
    total_bytes: int

    @property
    def paths(self) -> frozenset[str]:
        return frozenset(path for _, path in self.files)


def list_texts(repo_dir: Path, sha: str, want: Callable[[str], bool]) -> TextListing | None:
    """Every tracked file at ``sha`` that ``want`` accepts (no links, no submodules, none over
    ``MAX_REPO_FILE_BYTES``), without reading one; ``None`` past ``MAX_CORPUS_BYTES``."""
    listing = _run(repo_dir, ["ls-tree", "-r", "-l", "-z", sha]).decode(errors="replace")
    wanted: list[tuple[str, str]] = []
    total = 0
    for entry in listing.split("\0"):
        meta, _, path = entry.partition("\t")
        fields = meta.split()
        if len(fields) != 4 or fields[1] != "blob" or fields[0] in ("120000", "160000"):
            continue
        if not fields[3].isdigit() or int(fields[3]) > MAX_REPO_FILE_BYTES or not want(path):
            continue
        total += int(fields[3])
        if total > MAX_CORPUS_BYTES:
            return None
        wanted.append((fields[2], path))
    return TextListing(wanted, total)


def fits_in_memory(listing: TextListing) -> bool:
    """Whether the pack may hold these texts (``MAX_HELD_TEXT_BYTES``) or must stream them."""
    return listing.total_bytes <= MAX_HELD_TEXT_BYTES


def stream_texts(
    repo_dir: Path, files: list[tuple[str, str]]
) -> Generator[tuple[str, str], None, None]:
    """``(path, text)`` of each of ``files`` that is text (no NUL in its first 8,000 bytes),
    in order, one at a time from one ``git cat-file --batch``: at most one file's text is
    alive here at once."""
    if not files:
        return
    feed = "".join(f"{blob}\n" for blob, _ in files).encode()
    with _BatchReader(repo_dir, feed) as reader:
        for blob, path in files:
            data = reader.next_blob(blob)
            if data is not None and b"\0" not in data[:BINARY_PROBE_BYTES]:
                yield path, data.decode("utf-8", errors="replace")


def load_texts(repo_dir: Path, sha: str, want: Callable[[str], bool]) -> dict[str, str] | None:
    """The decoded text of every file ``list_texts`` names, held; ``None`` past
    ``MAX_CORPUS_BYTES``."""
    listing = list_texts(repo_dir, sha, want)
    if listing is None:
        return None
    return dict(stream_texts(repo_dir, listing.files))


class _BatchReader:
    """``git cat-file --batch`` read as it answers: each blob is decoded while git inflates the
    next ones, so on two cores the read costs about the larger of git's and Python's time
    rather than their sum, and the whole output is never held twice. The blob list is written
    from a thread (git stops reading it while its output is unread), and a timer kills a git
    that hangs past ``CAT_FILE_TIMEOUT_S``."""

    def __init__(self, repo_dir: Path, feed: bytes) -> None:
        self.repo_dir = repo_dir
        self._errors = tempfile.TemporaryFile()  # noqa: SIM115 (lives as long as git; closed on exit)
        try:
            self._proc = popen_git(
                repo_dir,
                ["cat-file", "--batch"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._errors,
            )
        except InputError:
            self._errors.close()
            raise
        self._timer = threading.Timer(CAT_FILE_TIMEOUT_S, self._proc.kill)
        self._writer = threading.Thread(target=self._write, args=(feed,), daemon=True)

    def __enter__(self) -> _BatchReader:
        self._timer.start()
        self._writer.start()
        return self

    def _write(self, feed: bytes) -> None:
        stdin = self._proc.stdin
        assert stdin is not None
        with contextlib.suppress(BrokenPipeError, ValueError):  # git died: reported on exit
            stdin.write(feed)
            stdin.close()

    def next_blob(self, blob: str) -> bytes | None:
        """The next answer's content, which must be ``blob``'s; ``None`` when the clone lacks
        it (``<sha> missing``: a partial clone)."""
        stdout = self._proc.stdout
        assert stdout is not None
        header = stdout.readline().split()
        if header[:1] != [blob.encode()]:
            raise InputError(self._failure("answered out of order"))
        if len(header) != 3:
            return None
        size = int(header[2])
        data = stdout.read(size)
        if len(data) != size or stdout.read(1) != b"\n":
            raise InputError(self._failure("answered short"))
        return data

    def _failure(self, what: str) -> str:
        self._proc.kill()
        self._proc.wait()
        if not self._timer.is_alive() and self._proc.returncode != 0:
            return f"git cat-file timed out in {self.repo_dir}"
        self._errors.seek(0)
        detail = self._errors.read().decode(errors="replace").strip()[-300:]
        return f"git cat-file --batch {what} in {self.repo_dir}: {detail}".rstrip(": ")

    def __exit__(self, *exc: object) -> None:
        stdout = self._proc.stdout
        assert stdout is not None
        stdout.close()
        self._proc.wait()
        self._timer.cancel()
        self._writer.join()
        self._errors.close()


_BINARY_SUFFIXES_TEXT = (
    "png jpg jpeg gif ico bmp tif tiff webp avif psd pdf woff woff2 ttf otf eot zip gz tgz bz2 xz"
    " 7z whl egg jar war so dylib dll exe o a pyc pyo class mp3 mp4 mov webm wav ogg db sqlite"
    " pickle pkl npy npz parquet"
)
BINARY_SUFFIXES = frozenset(_BINARY_SUFFIXES_TEXT.split())
"""Not read at all: the NUL probe would drop them anyway, after paying to inflate them."""


def is_probably_text(path: str) -> bool:
    return path.rsplit(".", 1)[-1].lower() not in BINARY_SUFFIXES if "." in path else True


class TextCorpus:
    """Texts by path, searched as fixed strings, case-insensitive, like ``git grep -F -i``."""

    def __init__(self, texts: dict[str, str]) -> None:
        self.texts = texts
        self._lower: dict[str, str] | None = None

    def grep(self, needle: str, per_file: int, total: int) -> list[tuple[str, int]]:
        """``(path, line)`` of lines holding ``needle``, in path order, at most ``per_file``
        lines per file and ``total`` in all."""
        if self._lower is None:
            self._lower = {path: self.texts[path].lower() for path in sorted(self.texts)}
        low = needle.lower()
        hits: list[tuple[str, int]] = []
        if not low or "\n" in low:
            return hits
        for path, text in self._lower.items():
            hits.extend(
                (path, line) for line in lines_holding(text, low, per_file, total - len(hits))
            )
            if len(hits) >= total:
                return hits
        return hits


def lines_holding(lowered: str, needle: str, per_file: int, at_most: int) -> list[int]:
    """The first line numbers of ``lowered`` (a file's text, lowercased) holding ``needle``
    (lowercased, no newline), at most ``min(per_file, at_most)``: the one search rule of the
    held corpus and of the streamed pass (``LocalGitGrep.prefetch``), so both answer alike."""
    found: list[int] = []
    at = lowered.find(needle)
    line, counted = 1, 0
    while at >= 0 and len(found) < per_file and len(found) < at_most:
        line += lowered.count("\n", counted, at)
        found.append(line)
        counted = lowered.find("\n", at)
        if counted < 0:
            break
        at = lowered.find(needle, counted)
    return found


def _run(repo_dir: Path, args: list[str], feed: bytes | None = None) -> bytes:
    return run_git(repo_dir, args, timeout=CAT_FILE_TIMEOUT_S, feed=feed).stdout
