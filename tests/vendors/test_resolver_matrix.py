"""The whole matrix through the seams: 7 vendors x their modes x availability verdicts x
vision yes/no x pinned/unpinned, with recorded CLI outputs from ``failure_matrix.yaml``.

Every vendor is a real vendor (real argv building, env assembly, stream parsing and
classification); only the command runner and the login step are scripted.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from tests.vendors.conftest import (
    ALL_KEYS,
    Call,
    FakeLogin,
    ScriptedRunner,
    failure_rows,
    row_output,
)
from veranda_dagster.domain.core.agent import AgentRequest
from veranda_dagster.vendors import registry, tiers
from veranda_dagster.vendors.command import RunOutput
from veranda_dagster.vendors.config import VendorsConfig
from veranda_dagster.vendors.health import HealthCache
from veranda_dagster.vendors.port import NoHealthyVendorError, Vendor
from veranda_dagster.vendors.resolver import (
    MAX_PARALLEL_PROBES,
    REASON_LABELS,
    ResolutionEvent,
    ResolvingAgent,
)
from veranda_dagster.vendors.vendor_config import VendorConfig

VENDORS = registry.vendors()
VENDOR_MODES = [(f, m) for f in VENDORS for m in registry.get(f).modes]
BAD = ["auth", "quota", "upstream", "unreachable", "turn_failed"]
PINS = {
    "claude": "claude-opus-4-8",
    "codex": "gpt-6-astra",
    "gemini": "gemini-3.1-pro-preview",
    "kimi": "kimi-k3",
    "grok": "grok-4.7",
    "glm": "glm-5.3-flashx",
    "cursor": "composer-2",
}


def _rows_for(vendor: str, mode: str) -> list[dict]:
    want_mode = "opencode" if (vendor, mode) == ("glm", "opencode") else None
    return [r for r in failure_rows() if r["vendor"] == vendor and r.get("mode") == want_mode]


def output(vendor: str, mode: str, verdict: str) -> RunOutput:
    for row in _rows_for(vendor, mode):
        if row["verdict"] == verdict:
            return row_output(row)
    raise AssertionError(f"failure_matrix.yaml has no {verdict} row for {vendor}/{mode}")


def make(vendor: str, mode: str, runner: ScriptedRunner, login: FakeLogin) -> Vendor:
    cfg = VendorConfig(vendor=vendor)
    return registry.get(vendor).factory(mode, cfg, runner, login, ALL_KEYS)


def other_vendor(vendor: str) -> str:
    return next(f for f in VENDORS if f != vendor)


def model_passed(runner: ScriptedRunner, model: str) -> bool:
    call = runner.calls[-1]
    return model in call.argv or model in call.env.values()


@pytest.fixture
def image(tmp_path: Path) -> str:
    path = tmp_path / "screenshot.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\nfake")
    return str(path)


def request(tmp_path: Path, pinned: str | None, images: list[str]) -> AgentRequest:
    return AgentRequest(
        role="implementer",
        tier="standard",
        prompt="Implement the ticket.",
        workdir=str(tmp_path),
        effort="high",
        images=images,
        pinned_model=pinned,
    )


@pytest.mark.parametrize("pinned", [False, True], ids=["unpinned", "pinned"])
@pytest.mark.parametrize("with_images", [False, True], ids=["text", "images"])
@pytest.mark.parametrize("verdict", ["ok", *BAD])
@pytest.mark.parametrize(
    ("vendor", "mode"), VENDOR_MODES, ids=[f"{f}/{m}" for f, m in VENDOR_MODES]
)
def test_first_mode_verdict_decides_same_vendor_fallback(
    vendor, mode, verdict, with_images, pinned, tmp_path, image
):
    """Target mode's probe says ``verdict``; its vendor's next mode is healthy."""
    modes = registry.get(vendor).modes
    second = next(m for m in modes if m != mode)
    runners = {
        (vendor, mode): ScriptedRunner([output(vendor, mode, verdict)] * 2),
        (vendor, second): ScriptedRunner([output(vendor, second, "ok")] * 2),
    }
    vendors = [make(f, m, r, FakeLogin()) for (f, m), r in runners.items()]
    events: list[ResolutionEvent] = []
    agent = ResolvingAgent(VendorsConfig(), vendors, health=HealthCache(), hooks=[events.append])
    pin = PINS[vendor] if pinned else None

    reply = agent.run(request(tmp_path, pin, [image] if with_images else []))

    served_mode = mode if verdict == "ok" else second
    served = runners[(vendor, served_mode)]
    assert (reply.call.vendor, reply.call.mode) == (vendor, served_mode)
    if verdict == "ok":
        assert reply.call.reason == ("pinned" if pinned else "preferred")
        assert len(runners[(vendor, mode)].calls) == 2  # probe + turn
    else:
        assert reply.call.reason == f"fallback:{verdict}:{vendor}/{mode}"
        assert len(runners[(vendor, mode)].calls) == 1  # probed, never given the turn
    expected_model = pin or tiers.resolve(vendor, "standard", served_mode)
    assert model_passed(served, expected_model), served.calls[-1].argv
    assert reply.call.dropped_pin is None  # same vendor keeps the model
    vision = vendors[[b.mode for b in vendors].index(served_mode)].capabilities.vision
    turn_call = served.calls[-1]
    image_sent = (
        any(image in a for a in turn_call.argv)
        or "--prompt-json" in turn_call.argv
        or image in (turn_call.stdin or "")
    )
    if with_images and not vision:
        assert not image_sent
        assert any("stripped" in n for n in reply.notes)
    else:
        assert image_sent == with_images
    assert events[-1].label == ("fallback_" + verdict if verdict != "ok" else reply.call.reason)
    assert events[-1].label in REASON_LABELS  # low-cardinality metric label


@pytest.mark.parametrize("pinned", [False, True], ids=["unpinned", "pinned"])
@pytest.mark.parametrize("verdict", BAD)
@pytest.mark.parametrize("vendor", VENDORS)
def test_every_mode_down_moves_vendor_and_drops_pin(vendor, verdict, pinned, tmp_path):
    """A revoked key on the pinned vendor: its other mode next, then another vendor."""
    modes = registry.get(vendor).modes
    down = {m: ScriptedRunner([output(vendor, m, verdict)]) for m in modes}
    rescue_vendor = other_vendor(vendor)
    rescue_mode = registry.get(rescue_vendor).modes[0]
    rescue = ScriptedRunner([output(rescue_vendor, rescue_mode, "ok")])
    vendors = [make(rescue_vendor, rescue_mode, rescue, FakeLogin())]
    vendors += [make(vendor, m, r, FakeLogin()) for m, r in down.items()]
    agent = ResolvingAgent(VendorsConfig(), vendors, health=HealthCache())
    pin = PINS[vendor] if pinned else None

    reply = agent.run(request(tmp_path, pin, []))

    assert reply.call.vendor == rescue_vendor
    if pinned:  # the pinned vendor goes first even though it is configured last
        assert all(len(r.calls) == 1 for r in down.values())
        assert reply.call.reason == f"fallback:{verdict}:{vendor}/{modes[0]}"
        assert reply.call.dropped_pin == pin
        assert any(f"pinned model {pin} dropped" in n for n in reply.notes)
        expected = tiers.resolve(rescue_vendor, "standard", rescue_mode)
        assert model_passed(rescue, expected) and not model_passed(rescue, pin)
    else:  # unpinned: configured order, the healthy vendor first, the broken one untouched
        assert reply.call.reason == "preferred"
        assert all(not r.calls for r in down.values())


@pytest.mark.parametrize("vendor", [f for f in VENDORS if "login" in registry.get(f).modes])
def test_revoked_login_session_is_auth_without_spawning(vendor, tmp_path):
    runner = ScriptedRunner([output(vendor, "login", "ok")])
    cli = make(vendor, "login", runner, FakeLogin(ok=False))
    env = {k: v for k, v in ALL_KEYS.items() if k != "CLAUDE_CODE_OAUTH_TOKEN"}
    cli.environ = env  # the claude login mode also accepts a setup-token; revoke it too
    verdict = cli.probe()
    assert verdict.verdict == "auth" and "expired" in verdict.detail
    assert runner.calls == []


@pytest.mark.parametrize("verdict", ["auth", "quota", "unreachable"])
def test_mid_turn_failure_falls_back_and_is_remembered(verdict, tmp_path):
    first = ScriptedRunner(
        [output("claude", "api_key", "ok"), output("claude", "api_key", verdict)]
    )
    second = ScriptedRunner([output("claude", "bedrock", "ok")])
    vendors = [
        make("claude", "api_key", first, FakeLogin()),
        make("claude", "bedrock", second, FakeLogin()),
    ]
    health = HealthCache(clock=lambda: 1000.0)
    agent = ResolvingAgent(VendorsConfig(), vendors, health=health)
    reply = agent.run(request(tmp_path, None, []))
    assert (reply.call.mode, reply.call.reason) == ("bedrock", f"fallback:{verdict}:claude/api_key")
    # The next turn skips api_key without probing it again (failure cached for the process).
    agent.run(request(tmp_path, None, []))
    assert len(first.calls) == 2 and health.probes == 2


@pytest.mark.parametrize("verdict", ["upstream", "turn_failed"])
def test_mid_turn_failure_that_another_vendor_cannot_fix_propagates(verdict, tmp_path):
    from veranda_dagster.vendors.port import VendorError

    first = ScriptedRunner([output("codex", "api_key", "ok"), output("codex", "api_key", verdict)])
    second = ScriptedRunner([output("gemini", "api_key", "ok")])
    vendors = [
        make("codex", "api_key", first, FakeLogin()),
        make("gemini", "api_key", second, FakeLogin()),
    ]
    agent = ResolvingAgent(VendorsConfig(), vendors, health=HealthCache())
    with pytest.raises(VendorError) as err:
        agent.run(request(tmp_path, None, []))
    assert err.value.verdict == verdict
    assert second.calls == []


def test_nothing_healthy_raises_with_every_attempt(tmp_path):
    vendors = [
        make(f, m, ScriptedRunner([output(f, m, "auth")]), FakeLogin())
        for f, m in [("claude", "api_key"), ("codex", "api_key"), ("cursor", "api_key")]
    ]
    agent = ResolvingAgent(VendorsConfig(), vendors, health=HealthCache())
    with pytest.raises(NoHealthyVendorError) as err:
        agent.run(request(tmp_path, None, []))
    msg = str(err.value)
    assert "claude/api_key probe: auth" in msg and "cursor/api_key probe: auth" in msg


def test_unknown_pin_is_tried_on_the_preferred_vendor(tmp_path):
    runner = ScriptedRunner([output("gemini", "api_key", "ok")])
    agent = ResolvingAgent(
        VendorsConfig(), [make("gemini", "api_key", runner, FakeLogin())], health=HealthCache()
    )
    reply = agent.run(request(tmp_path, "my-custom-finetune", []))
    assert reply.call.reason == "pinned" and model_passed(runner, "my-custom-finetune")


def test_build_agent_wires_the_resolution_hook_and_a_failing_hook_never_fails_a_turn(tmp_path):
    from veranda_dagster.vendors.resolver import build_agent

    seen: list[ResolutionEvent] = []
    runner = ScriptedRunner([output("codex", "api_key", "ok")])
    config = VendorsConfig(vendors=[VendorConfig(vendor="codex", modes=["api_key"])])
    agent = build_agent(
        config,
        runner,
        FakeLogin(),
        environ=ALL_KEYS,
        health=HealthCache(),
        on_resolution=seen.append,
    )

    def broken(event: ResolutionEvent) -> None:
        raise RuntimeError("metrics down")

    agent.add_hook(broken)
    reply = agent.run(request(tmp_path, None, []))
    assert reply.text.startswith("PONG-CODEX")
    assert [(e.vendor, e.mode, e.label) for e in seen] == [("codex", "api_key", "preferred")]
    assert reply.call.usage.cached == 1000 and reply.call.usd > 0


def test_probe_all_runs_at_most_its_bound_of_probes_at_once():
    """``MAX_PARALLEL_PROBES``: two vendors more than the bound are probed with exactly the bound
    in flight: the first ``MAX_PARALLEL_PROBES`` meet at a barrier (fewer workers and it breaks),
    and a later probe starts only once one of them has returned (more workers and it would
    start beside them)."""
    lock, in_flight, peak, arrived = threading.Lock(), [0], [0], [0]
    meet = threading.Barrier(MAX_PARALLEL_PROBES, timeout=10)
    ok = output("claude", "api_key", "ok")

    def respond(call: Call) -> RunOutput:
        with lock:
            in_flight[0] += 1
            arrived[0] += 1
            first = arrived[0] <= MAX_PARALLEL_PROBES
            peak[0] = max(peak[0], in_flight[0])
        if first:
            meet.wait()
            time.sleep(0.2)  # a later probe arriving now would be one past the bound
        with lock:
            in_flight[0] -= 1
        return ok

    runner = ScriptedRunner(respond=respond)
    vendors = [
        make("claude", "api_key", runner, FakeLogin()) for _ in range(MAX_PARALLEL_PROBES + 2)
    ]
    agent = ResolvingAgent(VendorsConfig(), vendors, health=HealthCache())
    assert [v.verdict for v in agent.probe_all()] == ["ok"] * (MAX_PARALLEL_PROBES + 2)
    assert peak[0] == MAX_PARALLEL_PROBES and arrived[0] == MAX_PARALLEL_PROBES + 2
