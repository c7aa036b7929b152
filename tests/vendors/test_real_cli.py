"""The real Claude Code CLI (npm ``@anthropic-ai/claude-code``, pinned in ``.ci/run``) driven
through the vendor and the real subprocess runner against ``sim/vendor_api.py`` on 127.0.0.1.

Skips only when the binary is absent and ``CI`` is unset; under CI it must be installed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.real_claude import pinned_claude
from tests.support.vendor_api import VendorApiServer
from veranda_dagster.domain.core.agent import AgentRequest
from veranda_dagster.domain.core.models import Usage
from veranda_dagster.vendors import cost, registry
from veranda_dagster.vendors.config import VendorsConfig
from veranda_dagster.vendors.health import HealthCache
from veranda_dagster.vendors.port import Turn, VendorError
from veranda_dagster.vendors.resolver import build_agent
from veranda_dagster.vendors.runner import NO_REAL_CLI_ENV
from veranda_dagster.vendors.vendor_config import VendorConfig

CLAUDE_CODE_VERSION = registry.get("claude").factory.installs[0].version
REPO = Path(__file__).resolve().parents[2]
CLAUDE = pinned_claude()

pytestmark = pytest.mark.real_cli

if not CLAUDE.exists() and not os.environ.get("CI"):
    pytest.skip(f"claude binary not installed at {CLAUDE} (CI unset)", allow_module_level=True)


@pytest.fixture
def api(monkeypatch):
    monkeypatch.delenv(NO_REAL_CLI_ENV, raising=False)  # this module spawns the real CLI
    assert CLAUDE.exists(), f"CI: install @anthropic-ai/claude-code@{CLAUDE_CODE_VERSION} first"
    with VendorApiServer() as server:
        yield server


def agent_for(api: VendorApiServer, tmp_path: Path):
    config = VendorsConfig(
        vendors=[
            VendorConfig(
                vendor="claude",
                modes=["api_key"],
                binary=str(CLAUDE),
                base_url=api.base_url,
                home=str(tmp_path / "home"),
                timeout_s=45,
            )
        ],
        probe_timeout_s=45,
    )
    (tmp_path / "home").mkdir()
    environ = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "ANTHROPIC_API_KEY": "sk-sim"}
    return build_agent(config, environ=environ, health=HealthCache())


def test_real_turn_parses_text_usage_and_prices_it(api, tmp_path):
    api.reply("OK")  # the resolution's health probe comes first
    api.reply("PONG-REAL", input_tokens=321, output_tokens=9, cache_read_tokens=1500)
    agent = agent_for(api, tmp_path)
    workdir = tmp_path / "clone"
    workdir.mkdir()
    reply = agent.run(
        AgentRequest(role="implementer", tier="cheap", prompt="Say PONG", workdir=str(workdir))
    )
    assert reply.text == "PONG-REAL"
    assert reply.call.usage == Usage(input=321, output=9, cached=1500)
    assert (reply.call.vendor, reply.call.mode, reply.call.reason) == (
        "claude",
        "api_key",
        "preferred",
    )
    probe, turn = api.model_calls()
    assert probe.model == "claude-opus-5-5"  # the probe names no model: the CLI's default
    assert turn.model.startswith("claude-haiku") and turn.authorized  # tier cheap -> haiku
    assert turn.user_agent.startswith("claude-cli/")
    # 2.1.332 resolves ``haiku`` to an id our table has no row for; the vendor then uses
    # Claude Code's own list-price figure (trusted for the claude vendor only).
    table = cost.turn_usd(reply.call.model, reply.call.usage)
    if table is None:
        assert any("CLI's own cost" in n for n in reply.notes)
    assert reply.call.usd > 0 and (table is None or reply.call.usd == table)


def test_real_probe_names_no_model_and_is_ok(api, tmp_path):
    vendor = agent_for(api, tmp_path).vendors[0]
    assert vendor.probe().verdict == "ok"
    assert api.model_calls()[0].model == "claude-opus-5-5"  # the CLI's own default


@pytest.mark.parametrize(("status", "verdict"), [(401, "auth"), (429, "quota")])
def test_real_failure_classifies(api, tmp_path, status, verdict):
    api.fail_always(status)
    vendor = agent_for(api, tmp_path).vendors[0]
    assert vendor.probe().verdict == verdict
    if status != 401:
        return  # one real turn failure is enough; each costs the CLI's own retry
    with pytest.raises(VendorError) as err:
        vendor.run(Turn(prompt="hi", workdir=str(tmp_path)))
    assert err.value.verdict == verdict
    assert "sk-sim" not in err.value.detail


CODEX_VERSION = registry.get("codex").factory.installs[0].version
CODEX = Path(os.environ.get("VERANDA_CODEX_BIN") or REPO / ".veranda/npm/node_modules/.bin/codex")


@pytest.fixture
def codex_agent(api, tmp_path):
    if not CODEX.exists() and not os.environ.get("CI"):
        pytest.skip(f"codex binary not installed at {CODEX} (CI unset)")
    assert CODEX.exists(), f"CI: install @openai/codex@{CODEX_VERSION} first"
    config = VendorsConfig(
        vendors=[
            VendorConfig(
                vendor="codex",
                modes=["api_key"],
                binary=str(CODEX),
                base_url=f"{api.base_url}/v1",
                home=str(tmp_path / "home"),
                timeout_s=45,
            )
        ],
        probe_timeout_s=45,
    )
    environ = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "OPENAI_API_KEY": "sk-sim"}
    return build_agent(config, environ=environ, health=HealthCache())


def test_real_codex_turn_through_the_responses_api(api, codex_agent, tmp_path):
    api.reply("OK")
    api.reply("PONG-CODEX", input_tokens=300, output_tokens=5, cache_read_tokens=900)
    reply = codex_agent.run(
        AgentRequest(role="reviewer", tier="standard", prompt="Say PONG", workdir=str(tmp_path))
    )
    assert reply.text == "PONG-CODEX"
    assert reply.call.usage == Usage(input=300, output=5, cached=900)
    probe, turn = api.model_calls()
    assert probe.path == turn.path == "/v1/responses"
    assert turn.model == "gpt-5.3-codex" and probe.model != turn.model  # probe names no model
    assert reply.call.usd == cost.turn_usd("gpt-5.3-codex", reply.call.usage) > 0


def test_real_codex_401_is_auth(api, codex_agent):
    api.fail_always(401)
    assert codex_agent.vendors[0].probe().verdict == "auth"
