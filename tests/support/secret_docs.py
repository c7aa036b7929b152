"""Where a secret must be written down outside the code: the README's configuration table (the
Helm values' Vault templates: ``tests/support/helm_secrets.py``). Shared by the vendor and the
outside-system checks."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def readme_secret_rows() -> str:
    """The README configuration table's rows that name a secret."""
    text = (ROOT / "README.md").read_text()
    return "\n".join(
        line for line in text.splitlines() if line.startswith("|") and "(secret" in line
    )
