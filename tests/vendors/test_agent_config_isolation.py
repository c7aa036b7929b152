"""Per vendor, through the real ``SubprocessRunner`` and bubblewrap (required): the project files
an vendor declares (``repo_agent_config``) are empty and read-only for the turn, untouched in
the clone afterwards, and the product's own MCP configuration is what the CLI reads instead,
leaving nothing in the clone. And each turn's home is a private copy of the configured one:
what one ticket's agent writes there never reaches the next ticket's turn, nor the template.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from tests.vendors.conftest import FakeLogin, ScriptedRunner
from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.domain.core.mcp_config import McpServer
from veranda_dagster.sandbox import SANDBOX_ENV
from veranda_dagster.vendors import home as home_mod
from veranda_dagster.vendors import registry
from veranda_dagster.vendors.home import HomeTemplateTooLargeError, private_home
from veranda_dagster.vendors.plugins._base import CliVendor
from veranda_dagster.vendors.plugins.claude import ClaudeVendor
from veranda_dagster.vendors.plugins.gemini import GeminiVendor
from veranda_dagster.vendors.port import Turn
from veranda_dagster.vendors.runner import SubprocessRunner
from veranda_dagster.vendors.vendor_config import VendorConfig

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "vendors"
REPO_SECRET = "REPO-PLANTED-HOOK-7f3a"
"""What the repository wrote into every declared path; the CLI must never read it."""
SERVER = McpServer(name="browser", command="/usr/bin/true", args=["--product-marker-91c2"])
FILE_SUFFIXES = (".json", ".jsonc", ".toml")


@pytest.fixture(autouse=True)
def _bwrap(monkeypatch) -> None:
    monkeypatch.setenv(SANDBOX_ENV, "bwrap")  # security tests never run unsandboxed


def vendor_for(vendor: str, mode: str | None = None, **config: object) -> CliVendor:
    info = registry.get(vendor)
    return info.factory(
        mode or info.modes[0],
        VendorConfig(vendor=vendor, **config),  # type: ignore[arg-type]
        SubprocessRunner(),
        FakeLogin(),
    )


def plant(clone: Path, rel: str) -> None:
    """The repository's version of ``rel``: a config file, or a folder holding one."""
    path = clone / rel
    if rel.endswith(FILE_SUFFIXES):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"hooks": REPO_SECRET}))
    else:
        (path / "hooks").mkdir(parents=True)
        (path / "settings.json").write_text(json.dumps({"hooks": REPO_SECRET}))
        (path / "config.toml").write_text(f'command = "{REPO_SECRET}"\n')
        (path / "mcp.json").write_text(json.dumps({"mcpServers": {"x": REPO_SECRET}}))


def tree(clone: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(clone)): p.read_bytes()
        for p in sorted(clone.rglob("*"))
        if p.is_file() and ".git" not in p.parts
    }


LISTER = """
for p in "$@"; do
  echo "== $p"
  if [ -d "$p" ]; then find "$p" -mindepth 1 -exec sh -c 'echo "$1"; cat "$1" 2>/dev/null' _ {} \\;
  elif [ -e "$p" ]; then cat "$p"; fi
  if ( : > "$p/x" ) 2>/dev/null || ( : >> "$p" ) 2>/dev/null; then echo "WRITABLE $p"; fi
done
"""
"""What a CLI would see: every declared path's entries and contents, and whether it can write."""


def run_lister(vendor: CliVendor, clone: Path, turn: Turn, paths: list[str]) -> str:
    out = vendor.runner.run(
        ["/bin/sh", "-c", LISTER, "lister", *paths],
        str(clone),
        {"PATH": "/usr/bin:/bin"},
        None,
        30,
        isolation=vendor.isolation_for(turn),
    )
    assert out.exit_code == 0, out.stderr
    return out.stdout


@pytest.mark.parametrize("vendor", registry.vendors())
def test_each_familys_declared_paths_are_hidden_and_untouched(vendor: str, tmp_path) -> None:
    cli = vendor_for(vendor)
    declared = list(cli.repo_agent_config)
    assert declared, f"{vendor} declares no project configuration"
    clone = tmp_path / "clone"
    clone.mkdir()
    for rel in declared:
        plant(clone, rel)
    (clone / "AGENTS.md").write_text("instructions stay visible\n")
    before = tree(clone)
    turn = Turn(prompt="p", workdir=str(clone))
    seen = run_lister(cli, clone, turn, [*declared, "AGENTS.md"])
    assert REPO_SECRET not in seen  # nothing the repository wrote there reaches the CLI
    assert "WRITABLE" not in seen.replace("WRITABLE AGENTS.md", "")  # nor can be rewritten
    for rel in declared:
        assert f"== {rel}" in seen
    assert "instructions stay visible" in seen
    assert tree(clone) == before  # the clone keeps the repository's files exactly


@pytest.mark.parametrize(
    ("vendor", "mode"),
    [(f, m) for f in registry.vendors() for m in registry.get(f).modes],
)
def test_the_product_mcp_config_is_the_only_one_and_leaves_nothing(vendor, mode, tmp_path):
    cli = vendor_for(vendor, mode)
    clone = tmp_path / "clone"
    clone.mkdir()
    for rel in cli.repo_agent_config:
        plant(clone, rel)
    before = tree(clone)
    turn = Turn(prompt="p", workdir=str(clone), mcp_servers=[SERVER])
    shown = cli.product_config(turn)
    if cli.mcp_by_flag():
        assert shown == {}
        assert "--product-marker-91c2" in " ".join(cli.build_argv(turn))
        assert "--strict-mcp-config" in cli.build_argv(turn)
        return
    (rel,) = shown
    seen = run_lister(cli, clone, turn, [rel])
    assert "--product-marker-91c2" in seen and REPO_SECRET not in seen
    assert f"WRITABLE {rel}" not in seen
    assert tree(clone) == before  # no product file, no mount point left behind


def test_a_product_config_where_the_clone_has_none_leaves_no_stub(tmp_path) -> None:
    vendor = vendor_for("codex")
    clone = tmp_path / "clone"
    clone.mkdir()
    (clone / "README.md").write_text("x\n")
    turn = Turn(prompt="p", workdir=str(clone), mcp_servers=[SERVER])
    seen = run_lister(vendor, clone, turn, [".codex/config.toml"])
    assert "[mcp_servers.browser]" in seen
    assert sorted(p.name for p in clone.iterdir()) == ["README.md"]


# --- a private home per turn ----------------------------------------------------------------


def fake_cli(tmp_path: Path) -> Path:
    """A stand-in ``claude``: plants a file in its home, lists the home, answers OK."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    stream = (FIXTURES / "claude_stream_ok.jsonl").read_text()
    assert "VERANDA_EOF" not in stream
    script = bin_dir / "fake-claude"
    script.write_text(
        "#!/bin/sh\n"
        'ls -A "$HOME/.claude" > "$PWD/seen-home"\n'
        'cat "$HOME/.claude/CLAUDE.md" >> "$PWD/seen-home" 2>/dev/null\n'
        'echo "planted by $TICKET" > "$HOME/.claude/CLAUDE.md"\n'
        'echo \'{"hooks": "planted"}\' > "$HOME/.claude/settings.json"\n'
        "cat <<'VERANDA_EOF'\n" + stream + ("" if stream.endswith("\n") else "\n") + "VERANDA_EOF\n"
    )
    script.chmod(0o755)
    return script


def test_what_one_tickets_agent_writes_to_its_home_never_reaches_the_next(tmp_path) -> None:
    template = tmp_path / "template"
    (template / ".claude").mkdir(parents=True)
    (template / ".claude" / ".credentials.json").write_text('{"session": "login"}')
    before = tree(template)
    binary = fake_cli(tmp_path)
    seen: dict[str, str] = {}
    for ticket in ("A", "B"):
        vendor = vendor_for("claude", binary=str(binary), home=str(template))
        vendor.environ = {"ANTHROPIC_API_KEY": "sk-sim", "PATH": "/usr/bin:/bin"}
        clone = tmp_path / f"clone-{ticket}"
        clone.mkdir()
        assert vendor.run(Turn(prompt="p", workdir=str(clone))).text == "PONG-SIM"
        seen[ticket] = (clone / "seen-home").read_text()
    # the login session is copied into each turn's home (so login mode works) ...
    assert seen["A"].split() == [".credentials.json"] == seen["B"].split()
    # ... and A's planted CLAUDE.md and settings.json never reached B
    assert "planted" not in seen["B"]
    assert tree(template) == before  # the template is unchanged


def test_the_turn_home_is_private_and_removed_after(tmp_path) -> None:
    template = tmp_path / "template"
    template.mkdir()
    (template / "settings.json").write_text("{}")
    vendor = vendor_for("claude", home=str(template))
    with vendor.turn_home() as home:
        assert home is not None and home != str(template)
        assert vendor.env()["HOME"] == home
        assert stat.S_IMODE(os.stat(home).st_mode) == 0o700
        assert stat.S_IMODE(os.stat(Path(home).parent).st_mode) == 0o700
        assert (Path(home) / "settings.json").read_text() == "{}"
    assert not Path(home).exists()
    assert vendor.env()["HOME"] == str(template)  # outside a turn: the configured path


def test_a_cli_never_runs_with_the_template_as_its_home(tmp_path) -> None:
    template = tmp_path / "template"
    template.mkdir()
    vendor = vendor_for("claude", binary=str(fake_cli(tmp_path)), home=str(template))
    vendor.environ = {"ANTHROPIC_API_KEY": "sk-sim", "PATH": "/usr/bin:/bin"}
    with pytest.raises(ConfigError, match="only inside turn_home"):
        vendor._spawn(Turn(prompt="p", workdir=str(tmp_path)), 10)
    assert list(template.iterdir()) == []


def test_a_template_past_either_bound_is_refused(tmp_path, monkeypatch) -> None:
    template = tmp_path / "template"
    template.mkdir()
    (template / "a").write_bytes(b"x" * 600)
    (template / "b").write_bytes(b"x" * 600)
    monkeypatch.setattr(home_mod, "MAX_HOME_TEMPLATE_BYTES", 1000)
    with (
        pytest.raises(HomeTemplateTooLargeError, match="larger than 1000 bytes"),
        private_home(str(template)),
    ):
        pass
    monkeypatch.setattr(home_mod, "MAX_HOME_TEMPLATE_BYTES", 10_000)
    monkeypatch.setattr(home_mod, "MAX_HOME_TEMPLATE_ENTRIES", 1)
    with (
        pytest.raises(HomeTemplateTooLargeError, match="more than 1 entries"),
        private_home(str(template)),
    ):
        pass
    monkeypatch.setattr(home_mod, "MAX_HOME_TEMPLATE_ENTRIES", 2)
    with private_home(str(template)) as home:
        assert home is not None and sorted(os.listdir(home)) == ["a", "b"]


def test_a_refused_template_fails_the_turn_with_the_typed_error(tmp_path, monkeypatch) -> None:
    template = tmp_path / "template"
    template.mkdir()
    (template / "big").write_bytes(b"x" * 2000)
    monkeypatch.setattr(home_mod, "MAX_HOME_TEMPLATE_BYTES", 1000)
    vendor = vendor_for("claude", binary=str(fake_cli(tmp_path)), home=str(template))
    vendor.environ = {"ANTHROPIC_API_KEY": "sk-sim", "PATH": "/usr/bin:/bin"}
    with pytest.raises(HomeTemplateTooLargeError):
        vendor.run(Turn(prompt="p", workdir=str(tmp_path)))


def test_no_configured_home_gives_no_copy() -> None:
    vendor = vendor_for("claude")
    assert isinstance(vendor, ClaudeVendor)
    with vendor.turn_home() as home:
        assert home is None and vendor.home_dir is None


def test_gemini_writes_its_settings_only_into_the_turns_private_home(tmp_path: Path) -> None:
    """With no configured home, a Gemini turn still gets a private home for the settings its
    vendor writes, and the home goes with the turn: no folder is left behind per turn."""
    vendor = GeminiVendor(
        "api_key",
        VendorConfig(vendor="gemini", base_url="http://127.0.0.1:9/v1"),
        ScriptedRunner(),
        FakeLogin(),
        {"GEMINI_API_KEY": "k", "PATH": "/usr/bin"},
    )
    turn = Turn(prompt="Role: probe\nhi", workdir=str(tmp_path), model=None)
    with vendor.turn_home() as home:
        assert home is not None
        env = vendor.env_for(turn)
        assert env["HOME"] == home
        assert (Path(home) / ".gemini" / "settings.json").is_file()
    assert not Path(home).exists()
    with pytest.raises(ConfigError, match="turn_home"):
        vendor.env_for(turn)
