"""The texts of a clone's files at one commit, read with one ``git cat-file --batch``.

Why one batch: the full-text ranking needs every source file, and one process reading them all
costs a fraction of a second where a ``git show`` per file would cost a process each. The same
texts then serve the windows, so a ranked file is never read twice.

Bounded: files over ``MAX_REPO_FILE_BYTES`` and binaries (a NUL byte in the first 8,000 bytes,
git's own rule) are left out, and past ``MAX_CORPUS_BYTES`` in all nothing is loaded (``None``),
so a monorepo is reported as too large to index instead of filling memory.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from veranda_dagster.domain.bounds import MAX_CORPUS_BYTES, MAX_REPO_FILE_BYTES
from veranda_dagster.domain.errors import InputError
from veranda_dagster.domain.git_command import git_argv, git_env

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
    out = _run(repo_dir, ["cat-file", "--batch"], feed)
    texts: dict[str, str] = {}
    cursor = 0
    for blob, path in wanted:
        header_end = out.index(b"\n", cursor)
        header = out[cursor:header_end].split()
        if len(header) != 3 or header[0].decode() != blob:
            raise InputError(f"git cat-file --batch answered out of order in {repo_dir}")
        size = int(header[2])
        data = out[header_end + 1 : header_end + 1 + size]
        cursor = header_end + 1 + size + 1
        if b"\0" not in data[:BINARY_PROBE_BYTES]:
            texts[path] = data.decode("utf-8", errors="replace")
    return texts


def _run(repo_dir: Path, args: list[str], feed: bytes | None = None) -> bytes:
    try:
        proc = subprocess.run(
            git_argv(*args, cwd=repo_dir),
            env=git_env(),
            input=feed,
            capture_output=True,
            timeout=CAT_FILE_TIMEOUT_S,
            check=False,
        )
    except FileNotFoundError:
        raise InputError("git is not installed") from None
    except subprocess.TimeoutExpired:
        raise InputError(f"git {args[0]} timed out in {repo_dir}") from None
    if proc.returncode != 0:
        detail = proc.stderr.decode(errors="replace").strip()[-300:]
        raise InputError(f"git {args[0]} failed in {repo_dir}: {detail}")
    return proc.stdout
