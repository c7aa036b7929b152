"""Where a secret must be written down outside the code: the Vault templates in the Helm values
and the configuration table (``docs/configuration.md``, moved out of the README). Shared by the
vendor and the outside-system checks."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONFIG_DOC = ROOT / "docs" / "configuration.md"
"""The configuration table a person reads (the README links it)."""


def vault_templates(node: object, key: str) -> list[str]:
    """Every Vault agent template stored under annotation ``key`` anywhere in the Helm values
    (the code server's and the run pods')."""
    found: list[str] = []
    if isinstance(node, dict):
        for name, value in node.items():
            if name == key and isinstance(value, str):
                found.append(value)
            else:
                found += vault_templates(value, key)
    elif isinstance(node, list):
        for item in node:
            found += vault_templates(item, key)
    return found


def readme_secret_rows() -> str:
    """The configuration table's rows that name a secret."""
    text = CONFIG_DOC.read_text()
    return "\n".join(
        line for line in text.splitlines() if line.startswith("|") and "(secret" in line
    )
