"""The Helm values' Vault agent templates, parsed into what they export and from where.

A text search (``export NAME=`` somewhere in a string) passes a template that exports a name
outside its ``with secret`` block, from a literal, from another Vault path than the annotation
injects, or twice. Here the values are parsed as YAML, each pod's annotations are found by
structure, and each template is read line by line into ``Export`` rows, so a test asserts on
the structure: which pod, which file, which Vault path and key each secret comes from.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

TEMPLATE = "vault.hashicorp.com/agent-inject-template-"
SECRET = "vault.hashicorp.com/agent-inject-secret-"

_WITH_SECRET = re.compile(r'^\{\{-? with secret "(?P<path>[^"]+)" -?\}\}$')
_WITH_KEY = re.compile(r"^\{\{-? with \.Data\.data\.(?P<key>\w+) -?\}\}$")
_END = re.compile(r"^\{\{-? end -?\}\}$")
_EXPORT = re.compile(r'^export (?P<name>[A-Z][A-Z0-9_]*)="(?P<value>[^"]*)"$')
_DIRECT = re.compile(r"^\{\{ \.Data\.data\.(?P<key>\w+) \}\}$")


class TemplateError(ValueError):
    """A template line this reading does not understand, or an export not drawn from Vault."""


@dataclass(frozen=True)
class Export:
    pod: str
    """Where the annotations sit in the values (a dotted path)."""
    file: str
    """The file the agent renders (``providers.env``)."""
    name: str
    vault_path: str
    """The ``with secret`` path the value is read under."""
    key: str
    """The key of that Vault secret's data the value is."""
    optional: bool
    """Exported only when the key is set (inside ``with .Data.data.<key>``)."""


def annotation_sets(node: Any, where: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every ``annotations`` mapping in the values that carries a Vault template, by path."""
    if isinstance(node, dict):
        for name, value in node.items():
            path = f"{where}.{name}" if where else str(name)
            if name == "annotations" and isinstance(value, dict):
                if any(str(k).startswith(TEMPLATE) for k in value):
                    yield path, value
            else:
                yield from annotation_sets(value, path)
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from annotation_sets(item, f"{where}[{i}]")


def parse_template(pod: str, file: str, text: str) -> list[Export]:
    """The exports of one template; a line outside the grammar, an export outside a ``with
    secret`` block or one whose value is not Vault data is a ``TemplateError``."""
    exports: list[Export] = []
    path: str | None = None
    key: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if m := _WITH_SECRET.match(line):
            path = m["path"]
        elif m := _WITH_KEY.match(line):
            key = m["key"]
        elif _END.match(line):
            key, path = (None, path) if key is not None else (None, None)
        elif m := _EXPORT.match(line):
            if path is None:
                raise TemplateError(f"{pod} {file}: {m['name']} is exported outside a secret")
            direct = _DIRECT.match(m["value"])
            if direct:
                exports.append(Export(pod, file, m["name"], path, direct["key"], False))
            elif m["value"] == "{{ . }}" and key is not None:
                exports.append(Export(pod, file, m["name"], path, key, True))
            else:
                raise TemplateError(f"{pod} {file}: {m['name']} is not read from Vault data")
        else:
            raise TemplateError(f"{pod} {file}: unexpected line {line!r}")
    return exports


def vault_exports(values: dict[str, Any]) -> list[Export]:
    """Every export of every Vault template in the values, each checked against the path its
    ``agent-inject-secret-<file>`` annotation injects."""
    found: list[Export] = []
    for pod, pod_annotations in annotation_sets(values):
        for name, text in pod_annotations.items():
            if not str(name).startswith(TEMPLATE):
                continue
            file = str(name)[len(TEMPLATE) :]
            exports = parse_template(pod, file, str(text))
            injected = pod_annotations.get(SECRET + file)
            for export in exports:
                if export.vault_path != injected:
                    raise TemplateError(
                        f"{pod} {file}: {export.name} reads {export.vault_path}, the pod "
                        f"injects {injected}"
                    )
            found += exports
    return found


def plain_env(values: Any, where: str = "") -> Iterator[tuple[str, str, str]]:
    """Every ``env`` entry with a literal ``value`` anywhere in the values: (where, name,
    value); one whose ``valueFrom`` points at a Kubernetes Secret is not listed."""
    if isinstance(values, dict):
        for name, value in values.items():
            path = f"{where}.{name}" if where else str(name)
            if name == "env" and isinstance(value, list):
                for entry in value:
                    if isinstance(entry, dict) and "value" in entry:
                        yield path, str(entry.get("name")), str(entry["value"])
            else:
                yield from plain_env(value, path)
    elif isinstance(values, list):
        for i, item in enumerate(values):
            yield from plain_env(item, f"{where}[{i}]")
