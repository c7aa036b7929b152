"""What a CLI turn must not see of the repository, and the product's own files it sees instead.

A vendor CLI reads project-level configuration from its working directory (Claude Code's
``.claude/settings.json`` hooks and ``.mcp.json`` servers, Codex's ``.codex/config.toml``,
Gemini's ``.gemini/settings.json``, ...). In a ticket's clone that configuration is written by
the repository, i.e. by whoever can push to it, and a hook or stdio MCP server runs with the
CLI's key. So a turn runs with each path its vendor declares (``CliVendor.repo_agent_config``)
masked for the turn (empty and read-only; the clone's own files stay untouched and unchanged in
the PR), and the product's own configuration (the browser MCP server for frontend tickets) is
written to a product-owned folder outside the clone and bound read-only over the project path
the CLI reads, so it is the only one the CLI sees and never lands in the clone.

Only the top-level component of a shown path is bound (``.codex`` for ``.codex/config.toml``):
a bind needs an existing mount point, and the masked folder is read-only. Where the clone has
no such path, bubblewrap creates an empty mount point in it; ``remove_stubs`` deletes exactly
those after the turn, so nothing of the product's is left for a commit.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from veranda_dagster.domain.core.errors import InputError


@dataclass(frozen=True)
class TurnIsolation:
    """One turn's view of its working directory's agent configuration."""

    hidden: tuple[str, ...] = ()
    """Paths relative to the working directory masked for the turn (the vendor's
    ``repo_agent_config``)."""
    shown: Mapping[str, str] = field(default_factory=dict)
    """Relative path -> content of the product's own configuration, shown read-only there."""


@dataclass(frozen=True)
class TurnBinds:
    """The sandbox arguments one isolation becomes, and the mount points to remove after."""

    hidden: list[str]
    ro_binds: dict[str, str]
    stubs: list[Path]


def _relative(rel: str) -> PurePosixPath:
    """A path the isolation names, refused unless it stays inside the working directory."""
    pure = PurePosixPath(rel)
    if pure.is_absolute() or not pure.parts or ".." in pure.parts:
        raise InputError(f"agent configuration path {rel!r} must be relative, without '..'")
    return pure


@contextlib.contextmanager
def turn_binds(cwd: str, isolation: TurnIsolation | None) -> Iterator[TurnBinds]:
    """The hidden paths and read-only binds for ``isolation`` in ``cwd``; the product's files
    live in a 0700 folder outside the clone for the turn, and the empty mount points bubblewrap
    creates for them in the clone are removed afterwards."""
    if isolation is None or (not isolation.hidden and not isolation.shown):
        yield TurnBinds([], {}, [])
        return
    root = Path(cwd)
    hidden = [str(root / _relative(rel)) for rel in isolation.hidden]
    if not isolation.shown:  # nothing of the product's to show: no folder to make
        yield TurnBinds(hidden, {}, [])
        return
    with tempfile.TemporaryDirectory(prefix="veranda-agentcfg-") as scratch:
        os.chmod(scratch, 0o700)
        tops: dict[str, str] = {}
        for rel, content in isolation.shown.items():
            pure = _relative(rel)
            target = Path(scratch) / pure
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content)
            tops[str(Path(scratch) / pure.parts[0])] = str(root / pure.parts[0])
        stubs = [Path(dest) for dest in tops.values() if not os.path.lexists(dest)]
        try:
            yield TurnBinds(hidden, tops, stubs)
        finally:
            remove_stubs(stubs)


def remove_stubs(stubs: list[Path]) -> None:
    """Delete the empty files and folders bubblewrap created as mount points; anything with
    content is left alone (it is not a stub, and deleting it is not ours to do)."""
    for stub in stubs:
        if stub.is_symlink():
            continue
        if stub.is_dir():
            with contextlib.suppress(OSError):  # not empty: not a stub of ours
                stub.rmdir()
        elif stub.is_file() and stub.stat().st_size == 0:
            stub.unlink(missing_ok=True)
