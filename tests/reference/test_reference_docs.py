"""``docs/reference/`` is what the code generates: the committed pages are checked against a
fresh rendering, and the generator itself finds settings by reading source, not a list."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import pytest

from veranda_dagster.cli import reference_docs
from veranda_dagster.reference.pages import PAGES, drifted, render_all
from veranda_dagster.reference.settings_scan import MAX_SOURCE_BYTES, scan
from veranda_dagster.vendors import registry

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "docs" / "reference"


def test_the_committed_pages_are_what_the_code_generates() -> None:
    assert drifted(COMMITTED) == [], "run `veranda reference-docs` and commit docs/reference"


def test_a_hand_edited_or_missing_page_is_drift(tmp_path: Path) -> None:
    out = tmp_path / "reference"
    shutil.copytree(COMMITTED, out)
    assert drifted(out) == []
    page = out / "vendors.md"
    page.write_text(page.read_text().replace("`claude`", "`claude-code`", 1))
    (out / "secrets.md").unlink()
    assert drifted(out) == ["secrets.md", "vendors.md"]


def test_check_exits_nonzero_naming_the_drifted_page(tmp_path: Path, capsys) -> None:
    out = tmp_path / "reference"
    assert reference_docs.run(argparse.Namespace(out=out, check=False)) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(PAGES)
    (out / "configuration.md").write_text("# Configuration\n")
    assert reference_docs.run(argparse.Namespace(out=out, check=True)) == 1
    assert "configuration.md: differs from the code" in capsys.readouterr().out


def test_every_registered_vendor_and_its_pins_and_secrets_are_on_the_pages() -> None:
    pages = render_all()
    for vendor in registry.vendor_classes():
        assert f"| `{vendor.vendor}` |" in pages["vendors.md"]
        for install in vendor.installs:
            assert install.spec in pages["vendors.md"]
        for name in vendor.secret_env:
            assert f"| `{name}` | {vendor.vendor} |" in pages["secrets.md"]


def test_the_scan_finds_a_setting_by_its_read_and_ignores_a_name_that_is_only_text(
    tmp_path: Path,
) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "mod.py").write_text(
        "import os\n"
        "from x import setting\n"
        'MARKER = "VERANDA_EOF"\n'
        'WIDGET_ENV = "VERANDA_WIDGETS"\n'
        '"""How many widgets."""\n'
        'a = setting("VERANDA_COLOUR", "blue")\n'
        "b = os.environ.get(WIDGET_ENV)\n"
        'c = os.environ["VERANDA_SHAPE"]\n'
    )
    found = {s.name: s for s in scan(package)}
    assert sorted(found) == ["VERANDA_COLOUR", "VERANDA_SHAPE", "VERANDA_WIDGETS"]
    assert found["VERANDA_COLOUR"].defaults == {"blue"}
    assert found["VERANDA_WIDGETS"].doc == "How many widgets."
    assert found["VERANDA_SHAPE"].modules == {"pkg.mod"}


def test_the_configuration_page_states_the_code_s_defaults() -> None:
    from veranda_dagster.domain.core.bounds import TICKET_BUDGET_USD

    page = render_all()["configuration.md"]
    assert f"| `VERANDA_TICKET_BUDGET_USD` | `{TICKET_BUDGET_USD:g}` |" in page
    assert "| `VERANDA_VALUE_STORE` | `filesystem` |" in page


@pytest.mark.parametrize(
    ("size", "read"), [(MAX_SOURCE_BYTES, True), (MAX_SOURCE_BYTES + 1, False)]
)
def test_the_scan_reads_modules_up_to_their_bound(tmp_path: Path, size: int, read: bool) -> None:
    """``MAX_SOURCE_BYTES``: a module padded to exactly the bound is scanned; one byte more and
    it is not a module of ours and is skipped unparsed."""
    package = tmp_path / "pkg"
    package.mkdir()
    code = 'from x import setting\na = setting("VERANDA_BIG", "1")\n'
    (package / "big.py").write_text(code + "#" * (size - len(code) - 1) + "\n")
    assert (package / "big.py").stat().st_size == size
    assert [s.name for s in scan(package)] == (["VERANDA_BIG"] if read else [])
