"""The texts of a clone's files at one commit, read once with ``git cat-file --batch`` and
searched in memory.

Why not a ``git grep`` per search: at a pinned revision git inflates every blob again on each
call (a quarter to a full second on a 5,000-file tree), and one call with many case-insensitive
fixed strings is slower still; one batch read costs about half a second, after which a
fixed-string search over the lowercased texts costs tens of milliseconds. The same texts feed
the full-text ranking and the windows, so no file is read twice.

Bounded: files over ``MAX_REPO_FILE_BYTES`` and binaries (a NUL byte in the first 8,000 bytes,
git's own rule) are left out, and past ``MAX_CORPUS_BYTES`` in all nothing is loaded (``None``),
so a monorepo is reported as too large to index instead of filling memory.
"""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from veranda_dagster.domain.clone.git_command import popen_git, run_git
from veranda_dagster.domain.core.bounds import MAX_CORPUS_BYTES, MAX_REPO_FILE_BYTES
from veranda_dagster.domain.core.errors import InputError

BINARY_PROBE_BYTES = 8_000
"""git's ``buffer_is_binary`` looks this far for a NUL byte."""
CAT_FILE_TIMEOUT_S = 120.0


def load_texts(repo_dir: Path, sha: str, want: Callable[[str], bool]) -> dict[str, str] | None:
    """The decoded text of every tracked file at ``sha`` that ``want`` accepts (no links, no
    submodules, no binaries, none over ``MAX_REPO_FILE_BYTES``), read with one ``git cat-file
    --batch``; ``None`` when together they exceed ``MAX_CORPUS_BYTES``."""
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
    if not wanted:
        return {}
    feed = "".join(f"{blob}\n" for blob, _ in wanted).encode()
    texts: dict[str, str] = {}
    with _BatchReader(repo_dir, feed) as reader:
        for blob, path in wanted:
            data = reader.next_blob(blob)
            if data is not None and b"\0" not in data[:BINARY_PROBE_BYTES]:
                texts[path] = data.decode("utf-8", errors="replace")
    return texts


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
            at = text.find(low)
            line, counted, found = 1, 0, 0
            while at >= 0 and found < per_file:
                line += text.count("\n", counted, at)
                hits.append((path, line))
                found += 1
                if len(hits) >= total:
                    return hits
                counted = text.find("\n", at)
                if counted < 0:
                    break
                at = text.find(low, counted)
        return hits


def _run(repo_dir: Path, args: list[str], feed: bytes | None = None) -> bytes:
    return run_git(repo_dir, args, timeout=CAT_FILE_TIMEOUT_S, feed=feed).stdout
