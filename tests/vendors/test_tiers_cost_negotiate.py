"""Tiers resolve per vendor, pins survive only at home, USD comes from the rate table, and
capability negotiation degrades (effort knob, images) in one place."""

from __future__ import annotations

import pytest

from tests.vendors.conftest import fixture_text
from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.domain.core.models import ModelCall, Usage
from veranda_dagster.vendors import cost, registry, tiers
from veranda_dagster.vendors.negotiate import negotiate
from veranda_dagster.vendors.plugins.claude import parse_claude_stream
from veranda_dagster.vendors.port import Capabilities


@pytest.mark.parametrize("vendor", registry.vendors())
@pytest.mark.parametrize("tier", ["cheap", "standard", "high"])
def test_every_vendor_resolves_every_tier_to_an_id_it_owns(vendor, tier):
    for mode in registry.get(vendor).modes:
        model = tiers.resolve(vendor, tier, mode)
        hosted = vendor == "cursor" and tier == "high"  # Cursor serves a third-party frontier id
        assert tiers.vendor_of_model(model) == vendor or hosted


@pytest.mark.parametrize("vendor", registry.vendors())
def test_every_tier_model_is_priced(vendor):
    """By our table, or (only where the CLI prices correctly) by the CLI's own cost."""
    trusts_cli = registry.get(vendor).factory.trusts_cli_cost
    for tier in ("cheap", "standard", "high"):
        model = tiers.resolve(vendor, tier)
        assert cost.rate_for(model) is not None or trusts_cli, model


def test_unknown_vendor_is_a_config_error():
    with pytest.raises(ConfigError, match="no tier table"):
        tiers.resolve("nope", "cheap")


def test_pin_survives_on_its_vendor_and_is_dropped_on_a_move():
    home = tiers.choose_model("codex", "login", "high", "gpt-6-sol", "codex")
    assert (home.model, home.dropped_pin) == ("gpt-6-sol", None)
    moved = tiers.choose_model("gemini", "api_key", "high", "gpt-6-sol", "codex")
    assert moved.model == "gemini-3.1-pro-preview" and moved.dropped_pin == "gpt-6-sol"
    assert "ran gemini-3.1-pro-preview (high)" in str(moved.note)


@pytest.mark.parametrize(
    ("model", "vendor"),
    [
        ("claude-opus-4-8", "claude"),
        ("sonnet", "claude"),
        ("gpt-5.5", "codex"),
        ("gemini-3.8-flash", "gemini"),
        ("kimi-code/k3", "kimi"),
        ("grok-4.7", "grok"),
        ("glm-5.3", "glm"),
        ("zai-coding-plan/glm-5.3", "glm"),
        ("composer-2.5", "cursor"),
        ("llama-9", None),
    ],
)
def test_vendor_of_model(model, vendor):
    assert tiers.vendor_of_model(model) == vendor


def test_usd_matches_claude_codes_own_price_for_the_captured_opus_turn():
    # Captured from Claude Code 2.1.332: 200 in, 1000 cache read, 7 out on claude-opus-5-5
    # reported total_cost_usd 0.00114; our table must agree to the cent fraction.
    usage = Usage(input=200, cached=1000, output=7)
    assert cost.turn_usd("claude-opus-5-5", usage) == pytest.approx(0.00114)
    assert cost.turn_usd("opus", usage) == pytest.approx(0.00114)


def test_usd_formula_per_million():
    usage = Usage(input=1_000_000, cached=2_000_000, output=500_000)
    # gpt-5.3-codex: 1.75 in, 14 out, 0.175 cached per 1M
    assert cost.turn_usd("gpt-5.3-codex", usage) == pytest.approx(1.75 + 7 + 0.35)


def test_dated_and_prefixed_ids_price_like_their_base():
    usage = Usage(input=1_000_000)
    assert cost.turn_usd("claude-haiku-4-5-20251001", usage) == 1.0
    assert cost.turn_usd("zai/glm-5.3", usage) == 1.4


def test_plan_models_cost_zero_and_unknown_models_cost_none():
    assert cost.turn_usd("kimi-code/k3", Usage(input=10**6)) == 0.0
    assert cost.rate_for("kimi-code/k3").plan
    assert cost.turn_usd("llama-9", Usage(input=10**6)) is None


def test_every_rate_names_source_and_date():
    assert all(r.source and r.date for r in cost.RATES.values())


def test_ticket_usd_sums_calls():
    calls = [
        ModelCall(role="a", vendor="claude", mode="api_key", tier="cheap", usd=0.25),
        ModelCall(role="b", vendor="codex", mode="api_key", tier="high", usd=1.5),
    ]
    assert cost.ticket_usd(calls) == 1.75


def test_claude_stream_sonnet_alias_has_no_table_row_but_the_cli_cost_is_there():
    s = parse_claude_stream(fixture_text("claude_stream_ok.jsonl"))
    assert cost.rate_for(s.model) is None and s.cost_usd > 0


CAPS_KNOB = Capabilities(
    vision=True,
    instruction_file="X.md",
    mcp_format="x",
    effort_values={"low": "l", "medium": "m", "high": "h"},
)
CAPS_NONE = Capabilities(vision=False, instruction_file="X.md", mcp_format="x")


def _neg(caps, images):
    return negotiate(
        vendor="f",
        caps=caps,
        prompt="p",
        workdir="/w",
        model="m",
        effort="high",
        images=images,
        timeout_s=5,
    )


def test_effort_maps_once_to_the_vendor_value():
    turn, notes = _neg(CAPS_KNOB, [])
    assert (turn.effort, turn.effort_value, notes) == ("high", "h", [])


def test_no_knob_runs_at_default_with_a_note():
    turn, notes = _neg(CAPS_NONE, [])
    assert turn.effort_value is None and "no reasoning-effort knob" in notes[0]


def test_images_stripped_for_text_only_vendor_never_an_error():
    turn, notes = _neg(CAPS_NONE, ["/a.png", "/b.png"])
    assert turn.images == [] and any("2 image(s) stripped" in n for n in notes)
    turn, notes = _neg(CAPS_KNOB, ["/a.png"])
    assert turn.images == ["/a.png"] and notes == []
