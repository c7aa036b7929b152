"""The configuration keys a repository documents (``broker_connection_retry``,
``worker_prefetch_multiplier``, ``allowlist_externals``, ``OTEL_EXPORTER_OTLP_ENDPOINT``).

A ticket that sets ``worker_prefetch_multiplier = 1`` or exports ``OTEL_SDK_DISABLED`` places
itself by the key as a colleague would: the project that documents the setting reads it. The keys
are read from what the repository itself declares, the same way in every ecosystem:

- its configuration pages (a file under ``docs/`` or a guide folder of it whose name says
  config, settings, options or environment): Sphinx ``.. setting::`` / ``.. confval::`` /
  ``.. conf::`` (with ``:keys:``) / ``.. envvar::`` / ``.. data::`` directives, a settings
  table's first cell or a heading that is one key in backticks, an environment variable
  (``UPPER_SNAKE``) in backticks;
- a settings module of its package (``settings.py``, ``config.py``, ``conf.py``,
  ``defaults.py``, ``environment_variables``): its top-level ``UPPER_SNAKE`` assignments;
- a JSON schema it ships (``*.schema.json``): its property names.

Text is only matched and parsed as data, never run. At most ``MAX_CONFIG_FILE_READS`` forge
reads (listings and files, each within ``MAX_VOCABULARY_FILE_BYTES``) and ``MAX_CONFIG_KEYS``
keys.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterable
from typing import Any, Final

from veranda_dagster.domain.core.bounds import (
    MAX_CONFIG_FILE_READS,
    MAX_CONFIG_KEYS,
    MAX_VOCABULARY_FILE_BYTES,
)
from veranda_dagster.domain.core.documents import json_or_none
from veranda_dagster.domain.intake.read_budget import Lister, ReadBudget, Reader

DOC_ROOTS: Final = ("docs", "doc", "documentation")
"""Where a repository keeps its documentation."""
GUIDE_FOLDER: Final = re.compile(r"(?i)source|reference|guide|usage|config|setting|content")
"""Folders of the docs that hold the reference pages (Sphinx's ``source``, celery's
``userguide``, tox's ``reference``, black's ``usage_and_configuration``)."""
CONFIG_PAGE: Final = re.compile(r"(?i)^[\w.-]*(?:config|setting|option|environment|env[-_]?var)")
"""A page about configuration by its file name: ``configuration.rst``, ``settings.md``,
``environment_variables.md``."""
PAGE_SUFFIXES: Final = (".rst", ".md", ".txt", ".mdx")
SETTINGS_MODULES: Final = frozenset(
    {"settings", "config", "conf", "defaults", "environment_variables", "envvars"}
)
"""Modules of a package that declare its settings, by the names people give them."""
MAX_SCHEMA_DEPTH: Final = 6
"""Nesting of a JSON schema's ``properties`` followed: deeper is a value's own structure."""

CONFIG_KEY: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{1,79}$")
"""A key as written in a config file, a settings module or the environment."""
_DIRECTIVE = re.compile(
    r"^[ \t]*\.\.[ \t]+(?:[a-z]+:)?(?:setting|confval|conf|envvar|data|config)::[ \t]*([^\s]+)",
    re.M,
)
_KEYS_OPTION = re.compile(r"^[ \t]+:keys:[ \t]*([^\n]+)", re.M)
_TABLE_KEY = re.compile(r"^\|[ \t]*`([A-Za-z_][\w.-]*)`[ \t]*\|", re.M)
_HEADING_KEY = re.compile(r"^#{2,6}[ \t]+`([A-Za-z_][\w.-]*)`[ \t]*$", re.M)
_ENV_VAR = re.compile(r"`{1,2}([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)`{1,2}")
_UPPER_ASSIGNMENT = re.compile(r"^([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)[ \t]*(?::[^=\n]*)?=(?!=)", re.M)


def page_keys(text: str) -> list[str]:
    """The keys a configuration page documents: those its directives declare first (celery's
    page opens with a table of the old names of its settings), then those its tables and
    headings list, then environment variables it writes in backticks; each in file order."""
    declared = sorted(
        [(m.start(), m.group(1)) for m in _DIRECTIVE.finditer(text)]
        + [
            (m.start(), k.strip())
            for m in _KEYS_OPTION.finditer(text)
            for k in m.group(1).split(",")
        ]
    )
    keys = [key for _, key in declared]
    for pattern in (_TABLE_KEY, _HEADING_KEY, _ENV_VAR):
        keys += [m.group(1) for m in pattern.finditer(text)]
    return [key.strip("`").split("(")[0] for key in keys]


def module_keys(text: str) -> list[str]:
    """A settings module's top-level ``UPPER_SNAKE`` assignments."""
    return _UPPER_ASSIGNMENT.findall(text)


def schema_keys(text: str) -> list[str]:
    """A JSON schema's property names, outer ones first, ``MAX_SCHEMA_DEPTH`` deep."""
    data = json_or_none(text)
    keys: list[str] = []
    level: list[Any] = [data]
    for _ in range(MAX_SCHEMA_DEPTH):
        below: list[Any] = []
        for node in level:
            if not isinstance(node, dict):
                continue
            properties = node.get("properties")
            if isinstance(properties, dict):
                keys += [k for k in properties if isinstance(k, str)]
                below += list(properties.values())
            below += [v for k, v in node.items() if k != "properties" and isinstance(v, dict)]
            below += [v for v in node.values() if isinstance(v, list)]
        level = [item for node in below for item in (node if isinstance(node, list) else [node])]
        if len(keys) >= MAX_CONFIG_KEYS or not level:
            break
    return keys


def _pages(entries: list[str]) -> list[str]:
    return [e for e in entries if e.endswith(PAGE_SUFFIXES) and CONFIG_PAGE.match(e)]


def read_config_keys(
    full_name: str,
    read: Reader,
    listdir: Lister,
    packages: list[str],
    root: list[str],
    notes: list[str],
) -> list[str]:
    """The configuration keys the repository documents: its configuration pages, the settings
    modules and JSON schemas of its packages (``packages``: ``celery``, ``src/tox``) and a schema
    at its root (``root``: the root listing); each once, at most ``MAX_CONFIG_KEYS``."""
    reads = ReadBudget(
        full_name,
        read,
        listdir,
        notes,
        limit=MAX_CONFIG_FILE_READS,
        max_bytes=MAX_VOCABULARY_FILE_BYTES,
        what="configuration keys",
    )
    found: dict[str, None] = {}

    def add(keys: Iterable[str]) -> None:
        for key in keys:
            if (
                CONFIG_KEY.match(key)
                and not keyword.iskeyword(key)
                and len(found) < MAX_CONFIG_KEYS
            ):
                found.setdefault(key)

    for docs in [d for d in DOC_ROOTS if d + "/" in root][:1]:
        entries = reads.listdir(docs)
        guides = [e.rstrip("/") for e in entries if e.endswith("/") and GUIDE_FOLDER.search(e)]
        pages = [f"{docs}/{p}" for p in _pages(entries)]
        for guide in guides:
            if reads.left <= len(pages):
                break
            pages += [f"{docs}/{guide}/{p}" for p in _pages(reads.listdir(f"{docs}/{guide}"))]
        for page in pages:
            add(page_keys(reads.read(page) or ""))
    for schema in [e for e in root if e.endswith("schema.json")]:
        add(schema_keys(reads.read(schema) or ""))
    for package in packages:
        for entry in reads.listdir(package):
            stem = entry.rstrip("/").removesuffix(".py")
            if entry.endswith("schema.json"):
                add(schema_keys(reads.read(f"{package}/{entry}") or ""))
            elif stem in SETTINGS_MODULES and entry.endswith((".py", "/")):
                module = entry if entry.endswith(".py") else f"{stem}/__init__.py"
                add(module_keys(reads.read(f"{package}/{module}") or ""))
    return list(found)[:MAX_CONFIG_KEYS]
