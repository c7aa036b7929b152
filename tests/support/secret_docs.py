"""Where a secret must be written down outside the code: the configuration table
(``docs/configuration.md``, moved out of the README) and the Helm values' Vault templates
(``tests/support/helm_secrets.py``). Shared by the vendor and the outside-system checks."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONFIG_DOC = ROOT / "docs" / "configuration.md"
"""The configuration table a person reads (the README links it)."""


def readme_secret_rows() -> str:
    """The configuration table's rows that name a secret."""
    text = CONFIG_DOC.read_text()
    return "\n".join(
        line for line in text.splitlines() if line.startswith("|") and "(secret" in line
    )
