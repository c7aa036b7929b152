"""The project files one source file imports, read from its import lines.

Why: a fix that touches two files usually touches a module and one it imports (the parser and
its exceptions, a command and its options). The ticket's words rarely name the second file, but
the first file's imports do, so the pack uses them to order files the ticket already gave some
evidence for (``pack_promotion.promote_imported``). Resolution is lexical and cheap, no interpreter:

- Python: ``from .x import y`` / ``from ..pkg import y`` relative to the file's package, and
  ``from pkg.mod import name`` / ``import pkg.mod`` matched against the tree's paths by suffix,
  so a ``src/`` or ``lib/`` layout resolves too; ``name`` is tried as a submodule first;
- JavaScript and TypeScript: relative specifiers (``import … from './x'``, ``require('../y')``)
  with the usual extensions and ``index`` files. Bare package names are third-party.

A Python module may also reach another one through its package: ``import networkx as nx`` and
then ``nx.utils.is_list_of_ints(...)``, the package's ``__init__`` re-exporting the function.
``package_calls`` gives the names called that way, and ``defines`` says whether a file defines
one of them at its top level, so the promotion can follow the call to the module behind it.

Only the first ``MAX_IMPORT_SCAN_LINES`` lines are read: imports sit at the top.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable

MAX_IMPORT_SCAN_LINES = 400
"""Lines of a file scanned for imports; a module's imports are at its top."""

_PY_FROM = re.compile(r"^\s*from\s+(\.*)([\w.]*)\s+import\s+\(?\s*([\w\s,]*)")
_PY_IMPORT = re.compile(r"^\s*import\s+([\w.]+(?:\s*,\s*[\w.]+)*)")
_JS_SPEC = re.compile(
    r"""(?:^\s*import\s[^'"]*?from\s*|^\s*import\s*|^\s*export\s[^'"]*?from\s*|\brequire\(\s*)"""
    r"""['"](\.{1,2}/[^'"]+)['"]"""
)
_PY_IMPORT_AS = re.compile(r"^\s*import\s+([\w.]+)(?:\s+as\s+(\w+))?\s*$")
_PY_FROM_AS = re.compile(r"^\s*from\s+([\w.]+)\s+import\s+(\w+)(?:\s+as\s+(\w+))?\s*$")
_PY_TOP_DEF = re.compile(r"^(?:async\s+def|def|class)\s+(\w+)")
_JS_SUFFIXES = ("", ".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", "/index.ts", "/index.js")


class PathIndex:
    """The tree's paths, and every path suffix of them (``pkg/mod.py`` -> ``src/pkg/mod.py``),
    built once per tree so each lookup is a dict read."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.paths = set(paths)
        self._by_suffix: dict[str, str] = {}
        for path in sorted(self.paths):
            parts = path.split("/")
            for i in range(len(parts)):
                self._by_suffix.setdefault("/".join(parts[i:]), path)

    def exact(self, path: str) -> str | None:
        return path if path in self.paths else None

    def by_suffix(self, suffix: str) -> str | None:
        return self._by_suffix.get(suffix)


def _python_targets(path: str, text: str, index: PathIndex) -> list[str]:
    package = posixpath.dirname(path)
    found: list[str] = []
    from_match = _PY_FROM.match(text)
    if from_match:
        dots, module, names = from_match.groups()
        members = [n.strip() for n in names.split(",") if n.strip()]
        if dots:
            base = package.split("/") if package else []
            base = base[: len(base) - (len(dots) - 1)] if len(dots) > 1 else base
            root = "/".join(base + ([*module.split(".")] if module else []))
            lookup: Callable[[str], str | None] = index.exact
        else:
            root, lookup = module.replace(".", "/"), index.by_suffix
        candidates = [f"{root}/{m}.py" for m in members] + [f"{root}.py", f"{root}/__init__.py"]
        for candidate in candidates:
            if (hit := lookup(candidate.lstrip("/"))) is not None:
                found.append(hit)
                break
        return found
    import_match = _PY_IMPORT.match(text)
    if import_match:
        for module in import_match.group(1).split(","):
            root = module.strip().replace(".", "/")
            for candidate in (f"{root}.py", f"{root}/__init__.py"):
                if (hit := index.by_suffix(candidate)) is not None:
                    found.append(hit)
                    break
    return found


def _script_targets(path: str, text: str, index: PathIndex) -> list[str]:
    found: list[str] = []
    for spec in _JS_SPEC.findall(text):
        root = posixpath.normpath(posixpath.join(posixpath.dirname(path), spec))
        for suffix in _JS_SUFFIXES:
            if (hit := index.exact(root + suffix)) is not None:
                found.append(hit)
                break
    return found


def imported_paths(path: str, lines: list[str], index: PathIndex) -> list[str]:
    """The tree's files that ``path`` imports, in the order its import lines name them, each
    once, never ``path`` itself. Python and JavaScript/TypeScript; other languages give none."""
    suffix = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    if suffix in ("py", "pyi"):
        reader = _python_targets
    elif suffix in ("js", "jsx", "ts", "tsx", "mjs", "cjs", "vue", "svelte"):
        reader = _script_targets
    else:
        return []
    found: list[str] = []
    for text in lines[:MAX_IMPORT_SCAN_LINES]:
        found += reader(path, text, index)
    return [p for p in dict.fromkeys(found) if p != path]


def _package_aliases(lines: list[str], index: PathIndex) -> list[str]:
    """Names bound to a package of the tree (its ``__init__.py``): ``import pkg as p``,
    ``import pkg``, ``from pkg import sub`` when ``sub`` is a package. A name bound to a module
    is left to ``imported_paths``, which already resolves it."""
    aliases: list[str] = []
    for text in lines[:MAX_IMPORT_SCAN_LINES]:
        if match := _PY_IMPORT_AS.match(text):
            module, alias = match.group(1), match.group(2) or match.group(1)
        elif match := _PY_FROM_AS.match(text):
            module = f"{match.group(1)}.{match.group(2)}"
            alias = match.group(3) or match.group(2)
        else:
            continue
        if index.by_suffix(module.replace(".", "/") + "/__init__.py") is not None:
            aliases.append(alias)
    return aliases


def package_calls(path: str, lines: list[str], index: PathIndex) -> set[str]:
    """Names a Python file calls through an alias of one of the tree's packages: ``nx.f(`` and
    ``nx.utils.g(`` give ``f`` and ``g``. Doctest lines (``>>>``, ``...``) and comments are
    examples, not calls the module makes."""
    if not path.endswith(".py"):
        return set()
    aliases = _package_aliases(lines, index)
    if not aliases:
        return set()
    alternation = "|".join(re.escape(a) for a in dict.fromkeys(aliases))
    call = re.compile(rf"(?<![\w.])(?:{alternation})(?:\.\w+)*\.(\w+)\s*\(")
    names: set[str] = set()
    for text in lines:
        stripped = text.lstrip()
        if stripped.startswith(("#", ">>>", "...")):
            continue
        names.update(call.findall(text))
    return names


def defines(lines: list[str], names: set[str]) -> bool:
    """Whether the file defines one of ``names`` at its top level (``def``, ``class``)."""
    return any((m := _PY_TOP_DEF.match(text)) and m.group(1) in names for text in lines)
