"""Every vendor mode says how it reaches its model from a sandbox, or why it cannot.

Derived from the registry: for each vendor and mode, the vendor's own ``egress`` either wires
the turn through the credential proxy so that no key the deployment holds is left in the argv
or the environment the sandbox gets (checked by building the real proxied command), or refuses
with a reason; a refused mode never starts a CLI and is classified ``auth``.
"""

from __future__ import annotations

import tempfile
from typing import Any

import pytest

from tests.vendors.conftest import ALL_KEYS, FakeLogin, ScriptedRunner
from veranda_dagster.sandbox.egress import refused
from veranda_dagster.sandbox.proxied import through_proxy
from veranda_dagster.vendors import health, registry
from veranda_dagster.vendors.command import EGRESS_REFUSED
from veranda_dagster.vendors.port import Turn
from veranda_dagster.vendors.runner import SubprocessRunner
from veranda_dagster.vendors.vendor_config import VendorConfig

REFUSED = {
    ("claude", "bedrock"): "SigV4",
    ("claude", "vertex"): "service-account",
    ("codex", "login"): "session file",
    ("gemini", "login"): "session file",
    ("gemini", "vertex"): "service-account",
    ("kimi", "login"): "session",
    ("grok", "login"): "session file",
    ("cursor", "login"): "session",
    ("cursor", "api_key"): "proprietary",
}
"""Modes whose credential cannot go through the proxy: refused, fail closed, while sandboxed."""

SECRETS = {
    value
    for cls in registry.vendor_classes()
    for name in cls.secret_env
    if (value := ALL_KEYS.get(name))
} | {ALL_KEYS["AWS_SECRET_ACCESS_KEY"], ALL_KEYS["AZURE_OPENAI_API_KEY"]}

MODES = [(cls.vendor, mode) for cls in registry.vendor_classes() for mode in cls.modes]


def build_vendor(vendor: str, mode: str, environ: dict[str, str] = ALL_KEYS, **cfg: Any):
    return registry.get(vendor).factory(
        mode, VendorConfig(vendor=vendor, **cfg), ScriptedRunner(), FakeLogin(), environ
    )


@pytest.mark.parametrize(("vendor", "mode"), MODES)
@pytest.mark.parametrize("base_url", [None, "http://127.0.0.1:9/v1"])
def test_each_mode_is_proxied_without_a_key_inside_or_refused(vendor, mode, base_url):
    cli = build_vendor(vendor, mode, base_url=base_url)
    with tempfile.TemporaryDirectory() as workdir, cli.turn_home():
        turn = Turn(prompt="Role: probe\nhi", workdir=workdir, model=None)
        argv, env = cli.build_argv(turn), cli.env_for(turn)
    egress = cli.egress(env)
    if (vendor, mode) in REFUSED:
        assert egress.refused and REFUSED[vendor, mode] in egress.refused
        assert f"{vendor}/{mode}" in egress.refused
        return
    assert egress.refused is None, egress.refused
    assert egress.base_url == (base_url or cli.upstream_base_url())
    assert base_url or egress.base_url.startswith("https://")
    with through_proxy(egress, argv, env) as command:
        inside = [*command.argv, *command.env.values(), *command.launcher]
        assert [s for s in SECRETS if any(s in text for text in inside)] == []
        assert any("http://127.0.0.1:" in text for text in inside)
        assert all(command.env[name].startswith("veranda-placeholder-") for name in egress.keys)


def test_claude_login_is_proxied_with_a_setup_token_and_refused_with_a_session_file():
    token = build_vendor("claude", "login").egress(build_vendor("claude", "login").env())
    assert token.refused is None and set(token.keys) == {"CLAUDE_CODE_OAUTH_TOKEN"}
    no_token = {k: v for k, v in ALL_KEYS.items() if k != "CLAUDE_CODE_OAUTH_TOKEN"}
    session = build_vendor("claude", "login", no_token)
    assert "login session is a file" in (session.egress(session.env()).refused or "")


def test_every_declared_default_upstream_is_https_and_every_carried_key_is_a_secret_var():
    for cls in registry.vendor_classes():
        for mode, url in cls.default_base_urls.items():
            assert mode in cls.modes and url.startswith("https://"), (cls.vendor, mode)
        for name in cls.key_carriers:
            assert cls.key_carriers[name], (cls.vendor, name)


def test_a_refused_mode_starts_nothing_and_is_auth(monkeypatch, tmp_path):
    monkeypatch.setenv("VERANDA_SANDBOX", "bwrap")
    marker = tmp_path / "ran"
    out = SubprocessRunner().run(
        ["/bin/sh", "-c", f"touch {marker}"], str(tmp_path), {"PATH": "/usr/bin:/bin"}, None, 10,
        egress=refused("claude/bedrock: SigV4 request signing"),
    )  # fmt: skip
    assert out.exit_code != 0 and out.stderr.startswith(EGRESS_REFUSED)
    assert not marker.exists()
    verdict = health.classify(
        registry.health_rules("claude"), out, parsed=False, terminal=False, parse_error="empty"
    )
    assert verdict.verdict == "auth" and verdict.rule and "egress_refused" in verdict.rule
