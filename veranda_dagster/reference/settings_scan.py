"""Every ``VERANDA_*`` variable the package reads, found in its source, not in a list.

The settings are read where they are used (a resource's ``from_env``, the sandbox, the CLI),
each by name; a hand-kept table of them drifted (the README's said 8 concurrent ticket runs
while the config said 4). So the configuration page is made from the source itself: every
string literal that is a whole ``VERANDA_*`` name, the modules that name it, the default when
it is read through ``setting``/``env_number``/``listing`` with a literal default, and the
attribute docstring when the name is bound to a constant that has one.
"""

from __future__ import annotations

import ast
import importlib
import re
from dataclasses import dataclass, field
from pathlib import Path

NAME = re.compile(r"^VERANDA_[A-Z0-9_]+$")
READERS = {"setting", "env_number", "listing", "secret"}
"""The package's readers of one variable: ``(name, default, ...)``."""
MAX_SOURCE_BYTES = 1_000_000
"""A module larger than this is not a module of ours: skipped, not parsed."""


@dataclass
class Setting:
    name: str
    modules: set[str] = field(default_factory=set)
    """Every module that names it (reads it, or sets it for a process it starts)."""
    defaults: set[str] = field(default_factory=set)
    doc: str = ""
    read: bool = False
    """Read through a reader or ``os.environ``/``getenv``, bound to a ``*_ENV`` constant or
    passed as a ``*env`` keyword (a registration's): a name that only appears in text (a
    heredoc marker) is no setting."""


def _module_name(root: Path, path: Path) -> str:
    return ".".join(path.relative_to(root.parent).with_suffix("").parts)


def _literal(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str | int | float):
        return repr(node.value) if not isinstance(node.value, str) else node.value
    return None


def _default(node: ast.AST, module: str) -> str | None:
    """A reader's default as its value: a literal, or a module constant looked up by name."""
    literal = _literal(node)
    if literal is not None or not isinstance(node, ast.Name):
        return literal
    try:
        value = getattr(importlib.import_module(module), node.id)
    except (ImportError, AttributeError):
        return node.id
    return f"{value:g}" if isinstance(value, float) else str(value)


def _environ_read(node: ast.Call | ast.Subscript) -> bool:
    """``os.environ.get(..)``, ``os.getenv(..)``, ``environ.get(..)`` or ``os.environ[..]``."""
    target = node.func if isinstance(node, ast.Call) else node.value
    text = ast.unparse(target)
    return text.endswith(("environ.get", "getenv", "environ", "env.get"))


def _scan_module(tree: ast.Module, module: str, found: dict[str, Setting]) -> None:
    constants: dict[str, str] = {}
    body = list(tree.body)
    for i, stmt in enumerate(body):  # NAME_ENV = "VERANDA_X" followed by a docstring
        if (
            isinstance(stmt, ast.Assign)
            and isinstance(stmt.value, ast.Constant)
            and isinstance(stmt.value.value, str)
            and NAME.match(stmt.value.value)
        ):
            name = stmt.value.value
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    constants[target.id] = name
            following = body[i + 1] if i + 1 < len(body) else None
            if (
                isinstance(following, ast.Expr)
                and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)
            ):
                entry = found.setdefault(name, Setting(name))
                entry.doc = entry.doc or " ".join(following.value.value.split())
            if any(isinstance(t, ast.Name) and t.id.endswith("_ENV") for t in stmt.targets):
                found.setdefault(name, Setting(name)).read = True
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and (node.arg or "").endswith("env"):
            passed = _literal(node.value)
            if passed and NAME.match(passed):
                found.setdefault(passed, Setting(passed)).read = True
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and NAME.match(node.value)
        ):
            found.setdefault(node.value, Setting(node.value)).modules.add(module)
        if isinstance(node, ast.Subscript) and _environ_read(node):
            key = _literal(node.slice)
            if key and NAME.match(key):
                found.setdefault(key, Setting(key)).read = True
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            reader = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            first = node.args[0]
            named = _literal(first)
            if named is None and isinstance(first, ast.Name):
                named = constants.get(first.id)
            if not named or not NAME.match(named):
                continue
            name = named
            if reader in READERS or _environ_read(node):
                found.setdefault(name, Setting(name)).read = True
            if reader in READERS and len(node.args) > 1:
                default = _default(node.args[1], module)
                if default not in (None, "", "None"):
                    found.setdefault(name, Setting(name)).defaults.add(str(default))


def scan(package_dir: Path) -> list[Setting]:
    """Every ``VERANDA_*`` name in ``package_dir``'s modules, sorted by name."""
    found: dict[str, Setting] = {}
    for path in sorted(package_dir.rglob("*.py")):
        if path.stat().st_size > MAX_SOURCE_BYTES:
            continue
        tree = ast.parse(path.read_text(), filename=str(path))
        _scan_module(tree, _module_name(package_dir, path), found)
    return [found[name] for name in sorted(found) if found[name].read]
