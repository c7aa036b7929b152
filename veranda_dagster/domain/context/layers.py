"""The four instruction layers, written into the clone as the file each CLI reads.

Context is not prepended to a prompt: it goes into the clone as project instructions (CLAUDE.md,
AGENTS.md, GEMINI.md … whichever the configured vendors declare), so every CLI that may run the
ticket after a fallback reads the same thing. The layers stay separate and labelled because they
have different owners and go stale at different rates: (1) the generic prompt ships with Veranda,
(2) org runbooks live in an architecture repository, (3) per-repo hints in config or the repo,
(4) facts are read off the repository now. The retrieval pack, with its citation ids, is written
in the same delimited block.

A repository's own instruction file is preserved: only the ``<!-- veranda:begin -->`` …
``<!-- veranda:end -->`` block is appended or replaced, and files Veranda created are added to
``.git/info/exclude`` so the work loop cannot commit them.
"""

from __future__ import annotations

import os
import re
from importlib import resources
from pathlib import Path

from veranda_dagster.domain.clone.git_command import run_git
from veranda_dagster.domain.clone.repo_files import RepoFiles
from veranda_dagster.domain.context import runbooks as runbook_select
from veranda_dagster.domain.context.retrieval import RetrievalResult
from veranda_dagster.domain.core.bounds import MAX_HINTS_BYTES
from veranda_dagster.domain.core.mcp_config import PLAYWRIGHT_INSTRUCTIONS
from veranda_dagster.domain.core.models import ContextLayer, RepoFacts, Ticket

BEGIN = "<!-- veranda:begin -->"
END = "<!-- veranda:end -->"
_INNER = re.escape(BEGIN) + r".*?" + re.escape(END)
_BLOCK = re.compile(_INNER, re.DOTALL)
_BLOCK_WITH_SEPARATOR = re.compile(r"\n?" + _INNER + r"\n?", re.DOTALL)
GENERIC_SOURCE = "veranda_dagster/domain/context/prompts/generic.md"
HINTS_IN_REPO = ".veranda/hints.md"
LAYER_GIT_TIMEOUT_S = 60.0
"""A local ``ls-files``/``update-index`` in one clone; longer is a hung git."""


def generic_prompt() -> str:
    return (resources.files("veranda_dagster.domain.context") / "prompts" / "generic.md").read_text(
        encoding="utf-8"
    )


def _cut(text: str, limit: int, source: str) -> str:
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    kept = data[:limit].decode("utf-8", errors="ignore")
    return kept.rstrip() + f"\n\n[… cut at {limit} bytes; read {source} for the rest]\n"


def operator_hints(hints_dir: str | None, repo: str | None) -> str:
    """The operator's hints file for ``repo`` (``<org>__<name>.md``), or ``""``."""
    if not (hints_dir and repo and "/" in repo):
        return ""
    return RepoFiles(hints_dir).read_text(repo.replace("/", "__", 1) + ".md") or ""


def _hints(files: RepoFiles, hints_dir: str | None, repo: str | None) -> tuple[str, str]:
    """The operator's hints file for ``repo`` (config, trusted, still size-capped), then the
    repository's own ``.veranda/hints.md`` read as data (``RepoFiles``: no links out, no
    devices)."""
    parts: list[tuple[str, str]] = []
    if hints_dir and repo and "/" in repo:
        text = RepoFiles(hints_dir).read_text(repo.replace("/", "__", 1) + ".md")
        if text is not None:
            parts.append((str(Path(hints_dir) / (repo.replace("/", "__", 1) + ".md")), text))
    in_repo = files.read_text(HINTS_IN_REPO)
    if in_repo is not None:
        parts.append((HINTS_IN_REPO, in_repo))
    if not parts:
        return "none", "No hints are configured for this repository."
    text = "\n\n".join(f"From `{src}`:\n\n{body.strip()}" for src, body in parts)
    return ", ".join(src for src, _ in parts), _cut(text, MAX_HINTS_BYTES, parts[0][0])


def render_facts(facts: RepoFacts) -> str:
    def commands(items: list[str]) -> str:
        return ", ".join(f"`{c}`" for c in items) if items else "none found"

    lines = [
        f"- Languages: {', '.join(facts.languages) or 'unknown'}",
        f"- Build: {commands(facts.build)}",
        f"- Lint: {commands(facts.lint)}",
        f"- Test: {commands(facts.test)}",
        f"- Coverage: {commands(facts.coverage)}",
        f"- Lint config files: {', '.join(f'`{c}`' for c in facts.lint_config) or 'none'}",
    ]
    if facts.build_tags:
        lines.append(
            "- Go build tags in use: "
            + ", ".join(f"`{t}`" for t in facts.build_tags)
            + " (files behind a tag build and test only with `-tags <tag>`)"
        )
    if facts.needs_containers:
        lines.append(
            "- Integration tests need containers (docker compose files or testcontainers "
            "imports found); they may be unavailable here, so say so rather than skip silently."
        )
    text = "\n".join(lines) + "\n"
    if facts.frontend:
        text += "\nThis is a frontend repository.\n\n" + PLAYWRIGHT_INSTRUCTIONS
        if facts.dev_server:
            text += (
                f"\nDev server: `{facts.dev_server}` serves the app on loopback. Start it in "
                "the background from your shell, open the URL it prints with the browser tools, "
                "and look (snapshot, console) before and after your change.\n"
            )
    return text


def build_layers(
    ticket: Ticket,
    repo_dir: str | Path,
    facts: RepoFacts,
    *,
    runbooks_dir: str | None,
    hints_dir: str | None,
    pack: RetrievalResult,
    repo: str | None = None,
    seeds: list[str] | None = None,
    files: RepoFiles | None = None,
) -> list[ContextLayer]:
    """The four layers, narrowest last; ``repo`` (``org/name``) finds the hints file; ``files``
    collects what the clone's reader refused."""
    repo = repo or ticket.repo
    chosen = runbook_select.select_runbooks(
        runbooks_dir,
        " ".join([ticket.title, ticket.description, *ticket.labels]),
        [*(seeds or []), *(f.path for f in pack.files)],
        repo,
    )
    hints_source, hints_text = _hints(files or RepoFiles(repo_dir), hints_dir, repo)
    return [
        ContextLayer(name="generic", source=GENERIC_SOURCE, text=generic_prompt()),
        ContextLayer(
            name="org_runbooks",
            source=", ".join(r.source for r in chosen) or "none",
            text=runbook_select.render(chosen),
        ),
        ContextLayer(name="repo_hints", source=hints_source, text=hints_text),
        ContextLayer(name="repo_facts", source="read off the clone", text=render_facts(facts)),
    ]


_TITLES = {
    "generic": "1. Generic rules (any repository)",
    "org_runbooks": "2. Organisation runbooks (narrowed to this ticket)",
    "repo_hints": "3. Repository hints",
    "repo_facts": "4. Repository facts (read off the code)",
}


def _fence(text: str) -> str:
    fence = "````" if "```" in text else "```"
    return f"{fence}\n{text}{'' if text.endswith(chr(10)) else chr(10)}{fence}"


def render_pack(pack: RetrievalResult) -> str:
    if not pack.citations:
        return "No code was retrieved for this ticket's identifiers.\n"
    sha = pack.citations[0].sha
    out = [
        f"Retrieved at commit `{sha}` ({pack.bytes} bytes from {pack.searches} searches). "
        "Cite these as `[R1]`, `[R2]` …; anything else you cite must be a real `path:line` on "
        "the default branch.\n"
    ]
    if pack.unavailable:
        missing = ", ".join(pack.unavailable)
        out.append(f"Ranked without these ticket signals (the code index lacks them): {missing}.\n")
    ids = iter(pack.citations)
    for f in pack.files:
        for w in f.windows:
            c = next(ids)
            out.append(f"### [{c.id}] `{f.path}` lines {w.start}-{w.end}\n\n{_fence(w.text)}\n")
    return "\n".join(out)


def render_block(layers: list[ContextLayer], pack: RetrievalResult) -> str:
    parts = [
        BEGIN,
        "# Veranda context (generated for this run; not part of the repository)",
        "",
    ]
    for layer in layers:
        parts += [f"## {_TITLES[layer.name]}", f"_Source: {layer.source}_", "", layer.text.strip()]
        parts.append("")
    parts += ["## Retrieval pack", "", render_pack(pack).strip(), "", END]
    return "\n".join(parts)


def upsert_block(existing: str | None, block: str) -> str:
    """``existing`` with its Veranda block replaced, or the block appended after one blank line."""
    if not existing:
        return block + "\n"
    if BEGIN in existing and END in existing:
        return _BLOCK.sub(lambda _m: block, existing, count=1)
    sep = "\n" if existing.endswith("\n") else "\n\n"
    return existing + sep + block + "\n"


def strip_block(text: str) -> str:
    """The file as it was before Veranda wrote into it (modulo a final newline)."""
    return _BLOCK_WITH_SEPARATOR.sub("", text, count=1)


def _tracked(repo_dir: Path, rel: str) -> bool:
    proc = run_git(
        repo_dir,
        ["ls-files", "--error-unmatch", "--", rel],
        timeout=LAYER_GIT_TIMEOUT_S,
        check=False,
    )
    return proc.returncode == 0


def exclude_from_git(repo_dir: str | Path, rels: list[str]) -> list[str]:
    """Keep generated files out of every commit the work loop makes: an untracked one goes into
    ``.git/info/exclude``; a tracked one (the repo's own CLAUDE.md) is marked skip-worktree, so
    ``git add --all`` does not stage Veranda's block. Returns the paths handled."""
    repo = Path(repo_dir)
    proc = run_git(
        repo, ["rev-parse", "--git-path", "info/exclude"], timeout=LAYER_GIT_TIMEOUT_S, check=False
    )
    if proc.returncode != 0:
        return []
    exclude = Path(proc.stdout.decode(errors="replace").strip())
    exclude = exclude if exclude.is_absolute() else repo / exclude
    # git's answer comes from a config the repository's code may have written: the file this
    # process writes is the clone's own exclude file or none
    own = os.path.join(os.path.realpath(repo), ".git", "info", "exclude")
    if os.path.realpath(exclude) != own:
        return []
    current = exclude.read_text(encoding="utf-8").splitlines() if exclude.is_file() else []
    tracked = [rel for rel in rels if _tracked(repo, rel)]
    if tracked:
        run_git(
            repo,
            ["update-index", "--skip-worktree", "--", *tracked],
            timeout=LAYER_GIT_TIMEOUT_S,
            check=False,
        )
    added = [f"/{rel}" for rel in rels if rel not in tracked and f"/{rel}" not in current]
    if added:
        exclude.parent.mkdir(parents=True, exist_ok=True)
        body = "\n".join([*current, "# written by veranda for this run", *added]) + "\n"
        exclude.write_text(body, encoding="utf-8")
    return list(rels)


def write_instruction_files(
    repo_dir: str | Path,
    layers: list[ContextLayer],
    pack: RetrievalResult,
    filenames: list[str],
    files: RepoFiles | None = None,
) -> list[str]:
    """Write the block into each instruction file (preserving the repo's own text); returns the
    relative paths written, each kept out of commits by ``exclude_from_git``. A file that is a
    link inside the clone is written at its target; one that leaves the clone, or is not a
    regular file, is refused and noted in ``files.refused`` (the CLI then reads no block)."""
    files = files or RepoFiles(repo_dir)
    block = render_block(layers, pack)
    written: list[str] = []
    for rel in dict.fromkeys(filenames):
        existing = files.read_text(rel)
        target = files.write_text(rel, upsert_block(existing, block))
        if target is not None and target not in written:
            written.append(target)
    exclude_from_git(repo_dir, written)
    return written


def strip_instruction_files(repo_dir: str | Path, filenames: list[str]) -> list[str]:
    """Remove the Veranda block from each file (deleting files that held only the block), so
    the work loop commits none of it; returns the files changed."""
    files = RepoFiles(repo_dir)
    changed: list[str] = []
    for rel in dict.fromkeys(filenames):
        text = files.read_text(rel)
        if text is None or BEGIN not in text:
            continue
        rest = strip_block(text)
        if rest.strip():
            files.write_text(rel, rest)
        else:
            (files.root / rel).unlink()
        changed.append(rel)
    return changed
