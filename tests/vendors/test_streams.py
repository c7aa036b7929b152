"""Each vendor's own stream format, parsed from recorded lines: text, usage, errors, and a
typed ``StreamParseError`` (never a crash) for garbage and truncated streams."""

from __future__ import annotations

import contextlib
import json
import os
import threading
import tracemalloc

import pytest

from tests.vendors.conftest import FakeLogin, ScriptedRunner, fixture_text
from veranda_dagster.domain.core.models import Usage
from veranda_dagster.vendors.command import RunOutput
from veranda_dagster.vendors.plugins import kimi
from veranda_dagster.vendors.plugins.claude import parse_claude_stream
from veranda_dagster.vendors.plugins.codex import parse_codex_stream
from veranda_dagster.vendors.plugins.cursor import parse_cursor_stream
from veranda_dagster.vendors.plugins.gemini import parse_gemini_stream
from veranda_dagster.vendors.plugins.glm import parse_opencode_stream
from veranda_dagster.vendors.plugins.grok import parse_grok_stream
from veranda_dagster.vendors.plugins.kimi import (
    KimiVendor,
    parse_kimi_stream,
    read_kimi_wire,
)
from veranda_dagster.vendors.port import StreamParseError, Turn
from veranda_dagster.vendors.vendor_config import VendorConfig

PARSERS = {
    "claude": parse_claude_stream,
    "glm_claude": lambda s: parse_claude_stream(s, "glm"),
    "codex": parse_codex_stream,
    "gemini": parse_gemini_stream,
    "kimi": parse_kimi_stream,
    "grok": parse_grok_stream,
    "glm_opencode": parse_opencode_stream,
    "cursor": parse_cursor_stream,
}

ONE_REPLY = Usage(input=200, output=7, cached=1000)
"""What the recorded ok streams report for their one scripted reply (input = uncached)."""

OK = [
    # parser, fixture, text, usage, model
    ("claude", "claude_stream_ok.jsonl", "PONG-SIM", ONE_REPLY, "claude-sonnet-5-5"),
    ("glm_claude", "glm_claude_stream_ok.jsonl", "PONG-GLM", ONE_REPLY, "glm-5.3"),
    (
        "codex",
        "codex_exec_ok.jsonl",
        "PONG-CODEX",
        ONE_REPLY.model_copy(update={"reasoning": 3}),
        None,
    ),
    ("gemini", "gemini_stream_ok.jsonl", "PONG-GEMINI", ONE_REPLY, "gemini-3.8-flash"),
    ("kimi", "kimi_stream_ok.jsonl", "PONG-FAKE-SERVER", Usage(), None),
    ("grok", "grok_stream_ok.jsonl", "PONG-FAKE-SERVER", ONE_REPLY, "grok-4.5"),
    (
        "glm_opencode",
        "glm_opencode_ok.jsonl",
        "PONG-FAKE-SERVER",
        Usage(input=300, output=17, cached=2000),
        None,
    ),
    ("cursor", "cursor_stream_ok.jsonl", "PONG-CURSOR", ONE_REPLY, "Composer 2.5"),
    # real captures (Codex 0.171.0, Gemini CLI 0.61.0 against sim/vendor_api.py)
    ("codex", "codex_exec_real_ok.jsonl", "PONG-CODEX-REAL", ONE_REPLY, None),
    ("codex", "codex_exec_reconnect_then_ok.jsonl", "PONG-CODEX-REAL", ONE_REPLY, None),
    # the router's flash-lite call is in the totals; the turn's model is the last one listed
    (
        "gemini",
        "gemini_stream_real_ok.jsonl",
        "PONG-GEMINI-REAL",
        Usage(input=400, output=14, cached=2000),
        "gemini-3.8-flash",
    ),
]


@pytest.mark.parametrize(("parser", "name", "text", "usage", "model"), OK, ids=[o[1] for o in OK])
def test_ok_stream_text_usage_model(parser, name, text, usage, model):
    s = PARSERS[parser](fixture_text(name))
    assert (s.text, s.usage, s.terminal, s.error) == (text, usage, True, None)
    if model:
        assert s.model == model


def test_claude_stream_reports_its_own_cost_and_session():
    s = parse_claude_stream(fixture_text("claude_stream_ok.jsonl"))
    assert s.session_id and s.cost_usd and s.cost_usd > 0


SURFACED, RAISED = "surfaced", "raised"
FAILED = [
    # error events are surfaced on the summary, not raised
    ("claude", "claude_stream_401.jsonl", SURFACED, "api_error_status: 401"),
    ("claude", "claude_stream_429_credit.jsonl", SURFACED, "credit balance"),
    ("codex", "codex_exec_quota_exceeded.jsonl", SURFACED, "Quota exceeded"),
    ("codex", "codex_exec_401.jsonl", SURFACED, "401 Unauthorized"),
    ("gemini", "gemini_stream_quota.jsonl", SURFACED, "exceeded your current quota"),
    ("grok", "grok_stream_401.jsonl", SURFACED, "Unauthorized (401)"),
    ("grok", "grok_stream_max_turns.jsonl", SURFACED, "max_turns_reached"),
    ("glm_opencode", "glm_opencode_401.jsonl", SURFACED, "statusCode: 401"),
    ("cursor", "cursor_stream_rate_limit.jsonl", SURFACED, "Rate limit exceeded"),
    # garbage and truncated streams raise the typed error
    ("claude", "claude_stream_truncated.jsonl", RAISED, "truncated"),
    ("claude", "claude_stream_garbage.jsonl", RAISED, "line 2 is not JSON"),
    ("codex", "codex_exec_truncated.jsonl", RAISED, "no turn.completed"),
    ("gemini", "gemini_stream_garbage.jsonl", RAISED, "line 2 is not JSON"),
    ("gemini", "gemini_stream_truncated.jsonl", RAISED, "truncated"),
    ("glm_opencode", "glm_opencode_truncated.jsonl", RAISED, "step_finish(stop)"),
]


def said_about_failure(parser: str, name: str) -> tuple[str, str | None]:
    """How a parser answers a failed stream: the error it surfaces, or the one it raises."""
    try:
        return SURFACED, PARSERS[parser](fixture_text(name)).error
    except StreamParseError as exc:
        return RAISED, str(exc)


@pytest.mark.parametrize(("parser", "name", "how", "needle"), FAILED, ids=[f[1] for f in FAILED])
def test_a_failed_stream_is_surfaced_or_raised_as_a_typed_error(parser, name, how, needle):
    said, text = said_about_failure(parser, name)
    assert said == how and text is not None and needle in text, text


@pytest.mark.parametrize("parser", sorted(PARSERS))
@pytest.mark.parametrize("junk", ["", "[1, 2]", "null", '{"type": "result"'], ids=repr)
def test_every_parser_rejects_junk_with_a_typed_error(parser, junk):
    with pytest.raises(StreamParseError):
        PARSERS[parser](junk)


def test_kimi_usage_comes_from_the_session_wire_log(tmp_path):
    wire = tmp_path / "wire.jsonl"
    wire.write_text(fixture_text("kimi_wire_usage.jsonl"))
    usage = read_kimi_wire(wire)
    # two turn records summed; the session roll-up and the junk line are ignored
    assert usage == Usage(input=260, output=10, cached=2200)


def test_kimi_vendor_reads_wire_log_after_the_run(tmp_path):
    session = "session_b893b63e-0c1d-4f0e-9d6f-1a2b3c4d5e6f"

    def respond(call):
        home = call.env["KIMI_CODE_HOME"]
        wire = tmp_path / home / "sessions" / "wdkey" / session / "agents" / "main"
        wire.mkdir(parents=True)
        (wire / "wire.jsonl").write_text(fixture_text("kimi_wire_usage.jsonl"))
        return RunOutput(exit_code=0, stdout=fixture_text("kimi_stream_ok.jsonl"))

    runner = ScriptedRunner(respond=respond)
    cfg = VendorConfig(vendor="kimi", home=str(tmp_path / "home"))
    vendor = KimiVendor("api_key", cfg, runner, FakeLogin(), {"KIMI_MODEL_API_KEY": "k"})
    result = vendor.run(Turn(prompt="hi", workdir=str(tmp_path), model="kimi-k3"))
    assert result.usage == Usage(input=260, output=10, cached=2200)
    assert runner.calls[0].env["KIMI_MODEL_NAME"] == "kimi-k3"


def _record(uncached: int, pad: str = "") -> bytes:
    line = {"type": "usage.record", "usage": {"inputOther": uncached, "output": 1}, "pad": pad}
    return json.dumps(line).encode() + b"\n"


@pytest.mark.parametrize(
    ("records_within", "expected_input"),
    [(2, 30), (3, 70)],
    ids=["bound-cuts-the-third-record", "bound-at-the-end-reads-all"],
)
def test_kimi_wire_read_stops_at_its_byte_bound(
    tmp_path, monkeypatch, records_within, expected_input
):
    """The wire log is in the turn's home, which the agent may fill: past ``MAX_WIRE_BYTES``
    nothing more is read (the record the bound cuts is not counted); its twin, the bound at
    the file's end, counts every record."""
    records = [_record(10), _record(20), _record(40)]
    wire = tmp_path / "wire.jsonl"
    wire.write_bytes(b"".join(records))
    cut = sum(len(r) for r in records[:records_within]) + (5 if records_within < 3 else 0)
    monkeypatch.setattr(kimi, "MAX_WIRE_BYTES", cut)
    assert read_kimi_wire(wire).input == expected_input


@pytest.mark.parametrize(
    ("pad", "expected_input"),
    [(200, 20), (0, 30)],
    ids=["record-past-the-line-bound-skipped", "record-within-the-line-bound-read"],
)
def test_kimi_wire_lines_past_their_bound_are_skipped_not_held(
    tmp_path, monkeypatch, pad, expected_input
):
    """A line past ``MAX_WIRE_LINE_BYTES`` is never held: skipped to its end, the next line read
    as a line of its own; its twin (the same record, short) is counted."""
    monkeypatch.setattr(kimi, "MAX_WIRE_LINE_BYTES", 128)
    wire = tmp_path / "wire.jsonl"
    wire.write_bytes(_record(10, "x" * pad) + _record(20))
    assert read_kimi_wire(wire).input == expected_input


def test_kimi_wire_at_exactly_the_line_bound_does_not_swallow_the_next_line(tmp_path, monkeypatch):
    """The first line is one byte past the bound with its newline as that byte: it is skipped,
    and the (shorter) line after it is still read whole."""
    first, second = _record(10, "x" * 20), _record(20)
    monkeypatch.setattr(kimi, "MAX_WIRE_LINE_BYTES", len(first) - 1)
    wire = tmp_path / "wire.jsonl"
    wire.write_bytes(first + second)
    assert read_kimi_wire(wire).input == 20


def test_kimi_wire_that_is_a_fifo_is_no_usage_not_a_wait(tmp_path):
    """The agent could leave a FIFO where the log belongs: opening it to read would wait for a
    writer that never comes. It is opened without blocking and, not a regular file, unread."""
    wire = tmp_path / "wire.jsonl"
    os.mkfifo(wire)
    answer: list[Usage] = []
    reader = threading.Thread(target=lambda: answer.append(read_kimi_wire(wire)), daemon=True)
    reader.start()
    reader.join(timeout=5)
    if reader.is_alive():  # release the blocked open so the thread ends, then fail
        with contextlib.suppress(OSError):
            os.close(os.open(wire, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(timeout=5)
        pytest.fail("reading the wire log waited on a FIFO")
    assert answer == [Usage()]


def test_kimi_wire_long_line_is_never_held_whole(tmp_path, monkeypatch):
    """A 4 MiB line (no usage in it) with the line bound at 1 KiB: it is read past in pieces of
    the bound, so the read's peak memory stays far below the line; the record after it counts."""
    monkeypatch.setattr(kimi, "MAX_WIRE_LINE_BYTES", 1024)
    wire = tmp_path / "wire.jsonl"
    wire.write_bytes(b"usage.record" + b"x" * (4 * 1024 * 1024) + b"\n" + _record(20))
    tracemalloc.start()
    try:
        usage = read_kimi_wire(wire)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert usage.input == 20
    assert peak < 512 * 1024, f"peak {peak} bytes while reading past a 4 MiB line"
