"""Facts read off a repository without running it: the commands the work loop will run.

The work loop validates a patch with the repository's *own* build, lint and test commands, so
every command here is an exact, runnable string (run from the repository root). A Makefile's
``test``/``lint``/``build`` targets win over what the ecosystem files suggest, because a
Makefile target is what the maintainers run and it already knows the flags. The rest is
evidence an agent cannot cheaply infer: lint config files, Go build tags, whether integration
tests need containers, and whether this is a frontend (which earns a browser tool).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from veranda_dagster.domain.clone.repo_files import RepoFiles
from veranda_dagster.domain.context.setup_facts import setup_declaration
from veranda_dagster.domain.core.bounds import MAX_FACT_SCAN_FILES
from veranda_dagster.domain.core.documents import json_or_none, toml_or_none
from veranda_dagster.domain.core.models import RepoFacts

FRONTEND_PACKAGES = frozenset(
    {
        "react", "react-dom", "vue", "svelte", "@sveltejs/kit", "next", "nuxt", "vite",
        "@angular/core", "solid-js", "preact", "astro", "@remix-run/react", "gatsby",
    }
)  # fmt: skip
LINT_CONFIG_FILES = (
    ".ruff.toml", "ruff.toml", ".flake8", "mypy.ini", ".mypy.ini", ".pylintrc", "pylintrc",
    ".pre-commit-config.yaml", ".eslintrc", ".eslintrc.js", ".eslintrc.cjs", ".eslintrc.json",
    ".eslintrc.yml", ".eslintrc.yaml", "eslint.config.js", "eslint.config.mjs",
    "eslint.config.cjs", "eslint.config.ts", ".prettierrc", ".prettierrc.json", ".prettierrc.js",
    "prettier.config.js", "biome.json", ".stylelintrc", ".golangci.yml", ".golangci.yaml",
    ".golangci.toml", "clippy.toml", ".clippy.toml", "rustfmt.toml", ".rustfmt.toml",
    ".rubocop.yml", ".editorconfig",
)  # fmt: skip
COMPOSE_FILES = (
    "docker-compose.yml", "docker-compose.yaml", "compose.yml", "compose.yaml",
    "docker-compose.test.yml", "docker-compose.test.yaml", "docker-compose.ci.yml",
)  # fmt: skip
_TESTCONTAINERS = re.compile(
    r"^[ \t]*(?:from[ \t]+testcontainers|import[ \t]+(?:org\.)?testcontainers)"
    r"|[\"'][\w.-]+/testcontainers/testcontainers-|require\([\"']testcontainers"
    r"|from[ \t]+[\"']testcontainers",
    re.MULTILINE,
)
"""A test suite that starts containers: a Python or Java import at the start of a line, a Go
module path, a Node ``require``/``import … from``. No run of "whitespace or anything" before
a literal: over a repository's file (hostile, up to ``MAX_REPO_FILE_BYTES``) one backtracked
from every position of a whitespace run (a megabyte of it would have taken hours); each branch
here fails at its first literal."""
_GO_BUILD = re.compile(r"^//go:build\s+(.+)$", re.MULTILINE)
_GO_PLATFORM_TEXT = (
    "linux darwin windows freebsd openbsd netbsd dragonfly solaris illumos aix plan9 android ios"
    " js wasip1 wasm amd64 arm64 arm 386 riscv64 ppc64 ppc64le s390x mips mipsle mips64 mips64le"
    " loong64 unix cgo gc gccgo ignore tools"
)
_GO_PLATFORM_TAGS = frozenset(_GO_PLATFORM_TEXT.split())
_SCAN_SUFFIXES = (".py", ".go", ".js", ".ts", ".mjs", ".cjs", ".java", ".kt")
_SKIP_DIRS = frozenset(
    {"node_modules", "venv", "vendor", "dist", "build", "fixtures", "testdata", "examples"}
)
"""Vendored, generated and sample trees: their package.json or imports are not this repo's."""
MAX_PACKAGE_JSON_DEPTH = 2
"""``web/package.json`` and ``apps/web/package.json`` count for frontend detection; deeper ones
are samples or fixtures."""
DEV_SCRIPTS = ("dev", "start", "serve")
"""``package.json`` scripts that run a dev server, preferred in this order."""
PAGE_DIRS = ("", "public", "src", "static", "app")
"""Where a plain HTML/JS app keeps its ``index.html`` (no framework dependency to go by)."""
_MAKE_TARGET = re.compile(r"^([A-Za-z0-9][\w.-]*)\s*:(?![=])", re.MULTILINE)


def make_targets(files: RepoFiles) -> set[str]:
    for name in ("Makefile", "makefile", "GNUmakefile"):
        text = files.read_text(name)
        if text is not None:
            return set(_MAKE_TARGET.findall(text))
    return set()


def _package_manager(repo: Path) -> str:
    if (repo / "pnpm-lock.yaml").exists():
        return "pnpm"
    if (repo / "yarn.lock").exists():
        return "yarn"
    if (repo / "bun.lockb").exists() or (repo / "bun.lock").exists():
        return "bun"
    return "npm"


def _load_json(files: RepoFiles, path: str | Path) -> dict[str, Any]:
    text = files.read_text(path)
    data = json_or_none(text) if text else {}
    return data if isinstance(data, dict) else {}


def _load_toml(files: RepoFiles, path: str | Path) -> dict[str, Any]:
    text = files.read_text(path)
    return (toml_or_none(text) or {}) if text else {}


def _node_facts(repo: Path, files: RepoFiles, out: dict[str, list[str]]) -> None:
    pkg = _load_json(files, "package.json")
    declared = pkg.get("scripts")
    scripts: dict[str, Any] = declared if isinstance(declared, dict) else {}
    if not pkg:
        return
    out["languages"].append("javascript")
    pm = _package_manager(repo)
    for category, names in (
        ("build", ("build",)),
        ("lint", ("lint", "typecheck", "type-check")),
        ("test", ("test",)),
        ("coverage", ("coverage", "test:coverage", "test:cov")),
    ):
        for name in names:
            if name in scripts:
                out[category].append(f"{pm} run {name}")


def dev_server_command(repo: Path, pkg: dict[str, Any]) -> str | None:
    """How the repository serves its app locally: its ``dev`` (else ``start``, ``serve``)
    script run by its package manager, or None."""
    raw = pkg.get("scripts")
    scripts: dict[str, Any] = raw if isinstance(raw, dict) else {}
    name = next((n for n in DEV_SCRIPTS if isinstance(scripts.get(n), str)), None)
    return f"{_package_manager(repo)} run {name}" if name else None


def _serves_a_page(repo: Path, dev_server: str | None) -> bool:
    """A plain HTML/JS app: a dev server script and an ``index.html`` it can serve."""
    return dev_server is not None and any((repo / d / "index.html").is_file() for d in PAGE_DIRS)


def _python_facts(repo: Path, files: RepoFiles, out: dict[str, list[str]]) -> None:
    pyproject = _load_toml(files, "pyproject.toml")
    tool = pyproject.get("tool", {}) if isinstance(pyproject.get("tool"), dict) else {}
    setup_cfg = files.read_text("setup.cfg") or ""
    tox_ini = files.read_text("tox.ini") or ""
    has_python = bool(pyproject) or (repo / "setup.py").exists() or bool(setup_cfg)
    if not has_python:
        return
    out["languages"].append("python")
    deps_text = json.dumps(pyproject) + setup_cfg + (files.read_text("requirements-dev.txt") or "")
    uses_pytest = (
        "pytest" in tool
        or "[tool:pytest]" in setup_cfg
        or "[pytest]" in tox_ini
        or (repo / "pytest.ini").exists()
        or (repo / "conftest.py").exists()
        or "pytest" in deps_text
    )
    if "ruff" in tool or (repo / "ruff.toml").exists() or (repo / ".ruff.toml").exists():
        out["lint"].append("ruff check .")
        out["lint_config"].append("pyproject.toml [tool.ruff]" if "ruff" in tool else "ruff.toml")
    elif (repo / ".flake8").exists() or "[flake8]" in setup_cfg or "[flake8]" in tox_ini:
        out["lint"].append("flake8")
    if "mypy" in tool:
        out["lint_config"].append("pyproject.toml [tool.mypy]")
    if uses_pytest:
        out["test"].append("python -m pytest")
    elif (repo / "noxfile.py").exists():
        out["test"].append("nox")
    elif tox_ini or "tox" in tool:
        out["test"].append("tox")
    has_cov = "pytest-cov" in deps_text or "coverage" in tool or (repo / ".coveragerc").exists()
    if uses_pytest and has_cov:
        out["coverage"].append("python -m pytest --cov --cov-report=term")


def _go_facts(repo: Path, files: RepoFiles, out: dict[str, list[str]]) -> None:
    if not (repo / "go.mod").exists():
        return
    out["languages"].append("go")
    out["build"].append("go build ./...")
    out["lint"].append("go vet ./...")
    if any((repo / n).exists() for n in (".golangci.yml", ".golangci.yaml", ".golangci.toml")):
        out["lint"].append("golangci-lint run")
    out["test"].append("go test ./...")
    out["coverage"].append("go test -coverprofile=coverage.out ./...")


def _rust_facts(repo: Path, files: RepoFiles, out: dict[str, list[str]]) -> None:
    if not (repo / "Cargo.toml").exists():
        return
    out["languages"].append("rust")
    out["build"].append("cargo build")
    out["lint"].append("cargo clippy")
    out["test"].append("cargo test")


def _walk(repo: Path) -> list[Path]:
    """Source files to scan, bounded by ``MAX_FACT_SCAN_FILES``, skipping vendored trees."""
    found: list[Path] = []
    for root, dirs, files in os.walk(repo):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
        depth = len(Path(root).relative_to(repo).parts)
        for name in sorted(files):
            if name == "package.json" and depth > MAX_PACKAGE_JSON_DEPTH:
                continue
            if name.endswith(_SCAN_SUFFIXES) or name == "package.json":
                found.append(Path(root) / name)
                if len(found) >= MAX_FACT_SCAN_FILES:
                    return found
    return found


def _go_tags(expr: str) -> set[str]:
    return {t for t in re.findall(r"[A-Za-z_][\w.]*", expr) if t not in _GO_PLATFORM_TAGS}


def _is_frontend(pkg: dict[str, Any]) -> bool:
    deps: set[str] = set()
    for key in ("dependencies", "devDependencies", "peerDependencies"):
        if isinstance(pkg.get(key), dict):
            deps |= set(pkg[key])
    return bool(deps & FRONTEND_PACKAGES)


def read_repo_facts(repo_dir: str | Path, hints_text: str = "") -> RepoFacts:
    """Everything above, read from the working tree at ``repo_dir``; ``hints_text`` (the
    operator's hints file for the repository) may name its setup script."""
    repo = Path(repo_dir)
    files = RepoFiles(repo)
    setup, setup_source = setup_declaration(files, hints_text)
    out: dict[str, list[str]] = {
        k: [] for k in ("build", "lint", "test", "coverage", "lint_config", "languages")
    }
    for reader in (_node_facts, _python_facts, _go_facts, _rust_facts):
        reader(repo, files, out)
    targets = make_targets(files)
    for category, names in (
        ("build", ("build",)),
        ("lint", ("lint",)),
        ("test", ("test",)),
        ("coverage", ("coverage", "cover", "cov")),
    ):
        chosen = next((n for n in names if n in targets), None)
        if chosen:
            out[category] = [f"make {chosen}"]
    out["lint_config"] += [n for n in LINT_CONFIG_FILES if (repo / n).is_file()]
    tags: set[str] = set()
    needs_containers = any((repo / n).is_file() for n in COMPOSE_FILES)
    root_pkg = _load_json(files, "package.json")
    dev_server = dev_server_command(repo, root_pkg)
    frontend = _is_frontend(root_pkg) or _serves_a_page(repo, dev_server)
    for path in _walk(repo):
        if path.name == "package.json":
            frontend = frontend or _is_frontend(_load_json(files, path))
            continue
        text = files.read_text(path) or ""
        if path.suffix == ".go":
            for expr in _GO_BUILD.findall(text):
                tags |= _go_tags(expr)
        if not needs_containers and "testcontainers" in text and _TESTCONTAINERS.search(text):
            needs_containers = True
    return RepoFacts(
        build=_dedupe(out["build"]),
        lint=_dedupe(out["lint"]),
        test=_dedupe(out["test"]),
        coverage=_dedupe(out["coverage"]),
        lint_config=_dedupe(out["lint_config"]),
        build_tags=sorted(tags),
        languages=_dedupe(out["languages"]),
        needs_containers=needs_containers,
        frontend=frontend,
        dev_server=dev_server if frontend else None,
        refused_files=files.refused,
        setup=setup,
        setup_source=setup_source,
    )


def _dedupe(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))
