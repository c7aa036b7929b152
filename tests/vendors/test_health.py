"""Real failure outputs (``failure_matrix.yaml``) classify into the seven verdicts, through each
vendor's own parser; the health cache re-probes a failure exactly at its recheck bound."""

from __future__ import annotations

import pytest
import yaml

from tests.vendors.conftest import (
    ALL_KEYS,
    FIXTURES,
    FakeLogin,
    ScriptedRunner,
    failure_rows,
    fixture_text,
    row_output,
)
from veranda_dagster.domain.core.bounds import HEALTH_RECHECK_S
from veranda_dagster.vendors import health, registry
from veranda_dagster.vendors.command import RunOutput
from veranda_dagster.vendors.health import HealthCache, classify
from veranda_dagster.vendors.port import HealthVerdict, Turn
from veranda_dagster.vendors.vendor_config import VendorConfig

ROWS = failure_rows()
VERDICTS = {"ok", "quota", "auth", "turn_failed", "upstream", "unreachable", "timeout"}
AVAILABILITY = VERDICTS - {"timeout"}
"""What every vendor's rows must show; ``timeout`` only where the CLI prints while working."""


def build_vendor(vendor: str, mode: str | None, runner: ScriptedRunner | None = None):
    info = registry.get(vendor)
    mode = mode or next(m for m in info.modes if m != "opencode")
    return info.factory(
        mode, VendorConfig(vendor=vendor), runner or ScriptedRunner(), FakeLogin(), ALL_KEYS
    )


def test_matrix_covers_every_vendor_and_every_verdict():
    assert {r["vendor"] for r in ROWS} == set(registry.vendors())
    assert {r["verdict"] for r in ROWS} == VERDICTS
    for vendor in registry.vendors():
        got = {r["verdict"] for r in ROWS if r["vendor"] == vendor and not r.get("mode")}
        assert got >= AVAILABILITY, (vendor, AVAILABILITY - got)
    timed = {r["vendor"] for r in ROWS if r["verdict"] == "timeout"}
    assert timed == set(registry.vendors()) - {"grok", "cursor"}


@pytest.mark.parametrize("row", ROWS, ids=[f"{r['vendor']}-{r['case']}" for r in ROWS])
def test_recorded_failure_classifies(row, tmp_path):
    a = build_vendor(row["vendor"], row.get("mode"))
    verdict, _ = a.outcome(row_output(row), Turn(prompt="p", workdir=str(tmp_path)))
    assert verdict.verdict == row["verdict"], verdict


PINS = yaml.safe_load((FIXTURES / "classifier_pins.yaml").read_text())
"""Every recorded failure's verdict and deciding rule, as the classifier gave them when the
vendor rules moved onto their vendors; see the file's header."""


def test_every_recorded_failure_has_a_pin():
    assert set(PINS) == {f"{r['vendor']}-{r['case']}" for r in ROWS}


@pytest.mark.parametrize("row", ROWS, ids=[f"{r['vendor']}-{r['case']}" for r in ROWS])
def test_recorded_failure_keeps_its_pinned_rule_under_every_vendor(row, tmp_path):
    """Through its own vendor, and raw under each vendor: a vendor rule decides only its own
    vendor's runs, and in the same order against the shared rules as before."""
    pin = PINS[f"{row['vendor']}-{row['case']}"]
    verdict, _ = build_vendor(row["vendor"], row.get("mode")).outcome(
        row_output(row), Turn(prompt="p", workdir=str(tmp_path))
    )
    assert f"{verdict.verdict}/{verdict.rule or 'none'}" == pin["own"]
    for vendor in registry.vendors():
        got = classify(registry.health_rules(vendor), row_output(row), parsed=False, terminal=False)
        assert got.rule == pin.get(vendor, pin["any_vendor"]), vendor


@pytest.mark.parametrize(
    "row",
    [r for r in ROWS if r["verdict"] != "ok"][:12],
    ids=lambda r: f"{r['vendor']}-{r['case']}",
)
def test_probe_reports_the_same_verdict_through_the_runner(row):
    runner = ScriptedRunner([row_output(row)])
    verdict = build_vendor(row["vendor"], row.get("mode"), runner).probe()
    assert verdict.verdict == row["verdict"]
    assert len(runner.calls) == 1 and runner.calls[0].timeout == 60.0


def test_a_healthy_answer_that_mentions_quota_is_still_ok(tmp_path):
    stdout = fixture_text("claude_stream_ok.jsonl").replace("PONG-SIM", "quota 401 ECONNREFUSED")
    out = RunOutput(exit_code=0, stdout=stdout)
    verdict, summary = build_vendor("claude", "api_key").outcome(out, Turn(prompt="p", workdir="."))
    assert verdict.verdict == "ok" and summary.text == "quota 401 ECONNREFUSED"


def test_a_turn_killed_at_its_bound_is_a_timeout_not_its_transcript():
    """Recorded: real Claude Code 2.1.332 killed mid tool loop while editing
    ``billing/invoice.py``; the old classifier read the whole unparsed stdout and its
    ``quota_wording`` rule matched "billing", so a working CLI was marked ``quota``."""
    stdout = fixture_text("claude_stream_killed_mid_edit.jsonl")
    assert "billing/invoice.py" in stdout and '"name":"Edit"' in stdout
    out = RunOutput(exit_code=None, timed_out=True, stdout=stdout, duration_s=8.0)
    v = classify(
        registry.health_rules("claude"), out, parsed=False, terminal=False, parse_error="truncated"
    )
    assert (v.verdict, v.rule) == ("timeout", "timeout") and "8 s" in v.detail
    assert health.error_events(stdout) == []  # init, an Edit and its result: no error event


def test_a_cli_retrying_a_failure_until_its_bound_is_still_that_failure():
    """Gemini retrying a 429 until the bound (recorded): the error text decides, not the clock."""
    row = next(r for r in ROWS if r["case"] == "429_retrying_past_timeout")
    v = classify(registry.health_rules("gemini"), row_output(row), parsed=False, terminal=False)
    assert v.verdict == "quota" and v.rule == "quota_wording"


def test_error_events_are_the_only_stdout_the_rules_read():
    lines = [
        '{"type":"assistant","message":{"content":[{"type":"text","text":"quota 429 billing"}]}}',
        '{"type":"user","message":{"content":[{"type":"tool_result","content":"401 refused"}]}}',
        '{"type":"item.completed","item":{"type":"command_execution","aggregated_output":"500"}}',
        '{"type":"system","subtype":"api_retry","error_status":429,"error":"rate_limit"}',
        '{"type":"error","message":"Reconnecting... error sending request"}',
        '{"role":"meta","type":"turn.step.retrying","error_message":"500 The server had an error"}',
        "<html><body>502 Bad Gateway</body></html>",
    ]
    assert health.error_events("\n".join(lines)) == lines[3:]
    out = RunOutput(exit_code=1, stdout="\n".join(lines[:3]))
    assert (
        classify(registry.health_rules("claude"), out, parsed=False, terminal=False).verdict
        == "turn_failed"
    )


def test_rules_only_read_error_text_of_a_parsed_stream():
    out = RunOutput(exit_code=1, stdout='{"type":"text","data":"rate limit"}', stderr="boom")
    v = classify(registry.health_rules("grok"), out, parsed=True, terminal=False, stream_error=None)
    assert v.verdict == "turn_failed"


def test_exit_zero_without_terminal_event_is_turn_failed():
    v = classify(
        registry.health_rules("codex"),
        RunOutput(exit_code=0, stdout="{}"),
        parsed=True,
        terminal=False,
    )
    assert v.verdict == "turn_failed"


def test_every_rule_names_a_known_verdict():
    for vendor in registry.vendors():
        assert {r.verdict for r in registry.health_rules(vendor)} <= VERDICTS, vendor


class CountingVendor:
    vendor, mode = "claude", "api_key"

    def __init__(self, verdicts: list[str]) -> None:
        self.verdicts = verdicts
        self.probes = 0

    def probe(self) -> HealthVerdict:
        self.probes += 1
        verdict = self.verdicts[min(self.probes, len(self.verdicts)) - 1]
        return HealthVerdict(verdict=verdict)  # type: ignore[arg-type]  # scripted verdicts


def test_ok_is_cached_for_the_process():
    now = [0.0]
    cache, vendor = HealthCache(clock=lambda: now[0]), CountingVendor(["ok"])
    for t in (0.0, 10.0, 10 * HEALTH_RECHECK_S):
        now[0] = t
        assert cache.verdict(vendor).verdict == "ok"
    assert vendor.probes == 1


def test_failure_is_reprobed_exactly_at_the_recheck_bound():
    now = [0.0]
    cache, vendor = HealthCache(clock=lambda: now[0]), CountingVendor(["auth", "ok"])
    assert cache.verdict(vendor).verdict == "auth"
    now[0] = HEALTH_RECHECK_S - 0.001
    assert cache.verdict(vendor).verdict == "auth" and vendor.probes == 1
    now[0] = HEALTH_RECHECK_S
    assert cache.verdict(vendor).verdict == "ok" and vendor.probes == 2


def test_a_failed_turn_replaces_a_cached_ok():
    cache, vendor = HealthCache(clock=lambda: 5.0), CountingVendor(["ok"])
    cache.verdict(vendor)
    cache.mark(vendor, HealthVerdict(verdict="quota"))
    assert cache.verdict(vendor).verdict == "quota" and vendor.probes == 1
    assert cache.snapshot() == {"claude/api_key": HealthVerdict(verdict="quota")}
